// Several agents across a restart: an agent process (test/fixtures/agent-process.mjs: a Claude
// planner, an OpenAI Responses coder, a Gemini researcher used as a tool) is killed with SIGKILL
// and a new process carries on with the same SQLite file. What each process's fake providers
// received is checked, and the store is read directly.
import type { ContentBlock } from '@agentx/core'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AgentProcess, type Files, type ReceivedRequest } from './helpers/agent-process.js'
import { jsonLines, temporaryFolder } from './helpers/files.js'
import { killAll } from './helpers/node-process.js'
import { storedMessageCount, storedSession, storedTurns } from './helpers/read-store.js'
import { callsTools, says } from './helpers/scenarios.js'

const TASK = 'Find the default port of the server.'
const RESEARCH_CALL = { id: 'toolu_research_1', name: 'researcher', input: { task: TASK } }
const PUBLISH_CALL = { id: 'call_publish_1', name: 'publish', input: { text: 'The default port is 8080.' } }

function textOf(content: string | ContentBlock[]): string {
  if (typeof content === 'string') return content
  return content
    .map((block) =>
      block.type === 'text' ? block.text : block.type === 'tool_result' ? textOf(block.content) : '',
    )
    .join('')
}

/** A received request's conversation as `[role, what]` rows. */
function conversationOf(request: ReceivedRequest | undefined): Array<[string, string]> {
  return (request?.messages ?? []).flatMap((message) =>
    message.content.map((block): [string, string] => {
      if (block.type === 'tool_use') return [message.role, `tool_use ${block.id} ${block.name}`]
      if (block.type === 'tool_result')
        return [message.role, `tool_result ${block.toolUseId}: ${textOf(block.content)}`]
      if (block.type === 'text') return [message.role, block.text]
      return [message.role, block.type]
    }),
  )
}

describe('several agents across a restart', () => {
  let folder: ReturnType<typeof temporaryFolder>
  let files: Files

  beforeEach(() => {
    folder = temporaryFolder('restart')
    files = { db: join(folder.path, 'agent.db'), publishLog: join(folder.path, 'published.log') }
  })
  afterEach(async () => {
    await killAll()
    folder.remove()
  })

  it('activeAgent continues after the process is killed: a send without agent goes to the profile that answered last, with its own provider session id', async () => {
    const first = await AgentProcess.start(files)
    const handedOver = await first.send('Add a --verbose flag to the CLI.', {
      replies: {
        claude: [
          callsTools([{ id: 'toolu_plan_1', name: 'transfer_to_coder', input: {} }], {
            text: 'Over to the coder.',
          }),
        ],
        openai: [says('Added --verbose.', { responseId: 'resp_coder_1' })],
      },
    })
    const sessionId = handedOver.sessionId
    expect(handedOver.text).toBe('Added --verbose.')
    expect(handedOver.requests.openai[0]?.resume).toBeUndefined()
    await first.process.kill('SIGKILL')

    expect(storedSession(files.db, sessionId)).toMatchObject({
      state: 'idle',
      activeAgent: 'coder',
      providerSessionId: 'resp_coder_1',
      leaseOwner: null,
    })

    // A new process: the send without `agent` goes to the coder, resuming its own response.
    const second = await AgentProcess.start(files)
    const continued = await second.send('Also add a test.', {
      sessionId,
      replies: { openai: [says('Added a test.', { responseId: 'resp_coder_2' })] },
    })
    expect(continued.text).toBe('Added a test.')
    expect(continued.requests.claude).toEqual([])
    expect(continued.requests.openai).toHaveLength(1)
    expect(continued.requests.openai[0]?.body.previous_response_id).toBe('resp_coder_1')
    expect(continued.requests.openai[0]?.model).toBe('gpt-coder')
    expect(conversationOf(continued.requests.openai[0])).toEqual([['user', 'Also add a test.']])

    // The planner takes over again, and stays the active agent across the next restart.
    const planned = await second.send('What is next?', {
      sessionId,
      agent: 'default',
      replies: { claude: [says('Next: the release notes.')] },
    })
    expect(planned.requests.openai).toEqual([])
    expect(planned.requests.claude[0]?.systemPrompt).toBe('You plan the work.')
    expect(conversationOf(planned.requests.claude[0]).map(([, what]) => what)).toEqual([
      'Add a --verbose flag to the CLI.',
      'Over to the coder.',
      'tool_use toolu_plan_1 transfer_to_coder',
      'tool_result toolu_plan_1: Transferred to coder. The coder agent answers from now on.',
      'Added --verbose.',
      'Also add a test.',
      'Added a test.',
      'What is next?',
    ])
    await second.process.kill('SIGKILL')
    expect(storedSession(files.db, sessionId)?.activeAgent).toBe('default')

    const third = await AgentProcess.start(files)
    const again = await third.send('Write them.', {
      sessionId,
      replies: { claude: [says('Release notes written.')] },
    })
    expect(again.requests.claude).toHaveLength(1)
    expect(again.requests.openai).toEqual([])
    await third.close()

    expect(storedTurns(files.db, sessionId)).toEqual([
      ['user', null],
      ['agent', 'default'],
      ['tool', null],
      ['agent', 'coder'],
      ['user', null],
      ['agent', 'coder'],
      ['user', null],
      ['agent', 'default'],
      ['user', null],
      ['agent', 'default'],
    ])
    expect(storedSession(files.db, sessionId)).toMatchObject({ state: 'idle', activeAgent: 'default' })
  })

  it('a pending approval inside the child is answered from a new process after the one that asked was killed', async () => {
    const first = await AgentProcess.start(files)
    const asked = await first.send('Find the port and publish it.', {
      replies: {
        claude: [callsTools([RESEARCH_CALL], { text: 'Asking the researcher.' })],
        gemini: [callsTools([PUBLISH_CALL], { text: 'Found it; publishing.' })],
      },
    })
    const parentId = asked.sessionId
    const childId = `${parentId}/${RESEARCH_CALL.id}`
    const pending = [
      {
        toolUseId: PUBLISH_CALL.id,
        name: 'publish',
        input: PUBLISH_CALL.input,
        kind: 'approval',
        sessionId: childId,
      },
    ]
    expect(asked.state).toBe('waiting_input')
    expect(asked.pending).toEqual(pending)
    expect(conversationOf(asked.requests.gemini[0])).toEqual([['user', TASK]])
    await first.process.kill('SIGKILL')

    // On disk: both wait, nothing was published, no lease is left behind.
    expect(storedSession(files.db, parentId)).toMatchObject({ state: 'waiting_input', leaseOwner: null })
    expect(storedSession(files.db, childId)).toMatchObject({
      state: 'waiting_input',
      parentSessionId: parentId,
      parentToolUseId: RESEARCH_CALL.id,
      activeAgent: 'researcher',
      leaseOwner: null,
    })
    expect(storedTurns(files.db, parentId)).toEqual([
      ['user', null],
      ['agent', 'default'],
    ])
    expect(storedTurns(files.db, childId)).toEqual([
      ['user', null],
      ['agent', 'researcher'],
    ])
    expect(jsonLines(files.publishLog)).toEqual([])

    // A new process finds the same question through the parent and answers the parent.
    const second = await AgentProcess.start(files)
    expect(await second.pending(parentId)).toMatchObject({ state: 'waiting_input', pending })
    const answered = await second.send(
      [{ type: 'tool_approval', toolUseId: PUBLISH_CALL.id, approved: true }],
      {
        sessionId: parentId,
        replies: {
          gemini: [says('Published: the default port is 8080.')],
          claude: [says('Done: the port is 8080 and it is on the wiki.')],
        },
      },
    )
    expect(answered.state).toBe('idle')
    expect(answered.text).toBe('Done: the port is 8080 and it is on the wiki.')
    expect(jsonLines(files.publishLog)).toEqual([
      { pid: second.pid, sessionId: childId, id: PUBLISH_CALL.id, text: 'The default port is 8080.' },
    ])
    // The child's provider got the approved call's result on top of the stored conversation…
    expect(conversationOf(answered.requests.gemini[0])).toEqual([
      ['user', TASK],
      ['assistant', 'Found it; publishing.'],
      ['assistant', `tool_use ${PUBLISH_CALL.id} publish`],
      ['user', `tool_result ${PUBLISH_CALL.id}: Published to the wiki.`],
    ])
    // …and the parent's provider the child's final text as the researcher's result.
    expect(conversationOf(answered.requests.claude[0]).slice(-1)).toEqual([
      ['user', `tool_result ${RESEARCH_CALL.id}: Published: the default port is 8080.`],
    ])

    // A second answer finds nothing pending and writes nothing.
    const messagesBefore = storedMessageCount(files.db, parentId) + storedMessageCount(files.db, childId)
    const late = await second.trySend(
      [{ type: 'tool_approval', toolUseId: PUBLISH_CALL.id, approved: true }],
      {
        sessionId: parentId,
      },
    )
    expect(late).toMatchObject({ ok: false, error: { name: 'ValidationError' } })
    await second.close()

    expect(storedMessageCount(files.db, parentId) + storedMessageCount(files.db, childId)).toBe(
      messagesBefore,
    )
    expect(jsonLines(files.publishLog)).toHaveLength(1)
    expect(storedTurns(files.db, childId)).toEqual([
      ['user', null],
      ['agent', 'researcher'],
      ['tool', null],
      ['agent', 'researcher'],
    ])
    expect(storedTurns(files.db, parentId)).toEqual([
      ['user', null],
      ['agent', 'default'],
      ['tool', null],
      ['agent', 'default'],
    ])
    expect(storedSession(files.db, parentId)?.state).toBe('idle')
    expect(storedSession(files.db, childId)?.state).toBe('idle')
  })
})
