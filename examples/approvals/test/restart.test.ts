// Restart between the question and the answer: the process that asked is killed (SIGKILL); a new
// one opens the same SQLite file, finds the session waiting and answers it.
import { createClaudeAdapter } from '@agentx/adapter-claude'
import { anthropicMessagesDialect, type FakeProvider, startFakeProvider } from '@agentx/contract-tests'
import { type Agent, createAgent } from '@agentx/core'
import { SqlitePersister } from '@agentx/persister-sqlite'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createDeployTool } from '../src/deploy-tool.mjs'
import { AgentProcess, type Files } from './helpers/agent-process.js'
import { filesIn, jsonLines, temporaryFolder } from './helpers/files.js'
import { killAll } from './helpers/node-process.js'
import {
  sessionIdsIn,
  storedMessages,
  storedSession,
  toolResultsOf,
  toolUsesOf,
} from './helpers/read-store.js'
import { callsTools, says } from './helpers/scenarios.js'

const REQUEST = 'Deploy web 2.4.1 to production'
const INPUT = { service: 'web', version: '2.4.1', environment: 'production' }
const CALL = { id: 'toolu_restart_1', name: 'deploy', input: INPUT }

let folder: ReturnType<typeof temporaryFolder>
let files: Files
let provider: FakeProvider | undefined
let persister: SqlitePersister | undefined
let agent: Agent | undefined

beforeEach(() => {
  folder = temporaryFolder('restart')
  files = filesIn(folder.path)
})
afterEach(async () => {
  await killAll()
  await agent?.close()
  await persister?.close()
  await provider?.close()
  agent = undefined
  persister = undefined
  provider = undefined
  folder.remove()
})

/** Starts an agent process, asks, waits for the question to be stored, then kills it with SIGKILL. */
async function askThenKill(): Promise<string> {
  const first = await AgentProcess.start(files)
  const asked = await first.send(REQUEST, {
    replies: [callsTools([CALL], { text: "I'll deploy web 2.4.1 to production." })],
  })
  if (!asked.ok) throw new Error(asked.error.message)
  expect(asked.state).toBe('waiting_input')
  expect(asked.pending).toEqual([
    { toolUseId: CALL.id, name: 'deploy', input: INPUT, kind: 'approval', sessionId: asked.sessionId },
  ])
  const exit = await first.process.kill('SIGKILL')
  expect(exit.signal).toBe('SIGKILL')
  return asked.sessionId
}

/** The application started again, in the test process, on the same file. */
async function restart(): Promise<Agent> {
  provider = await startFakeProvider({ dialect: anthropicMessagesDialect })
  persister = new SqlitePersister({ filename: files.db })
  agent = createAgent(
    { model: 'claude-sonnet-5-5', tools: [createDeployTool(files.deployLog)], durability: 'sync' },
    {
      adapter: createClaudeAdapter({ apiKey: 'offline-test-key', baseURL: provider.baseURL }),
      persister,
    },
  )
  await agent.initialize()
  return agent
}

describe('restart between the question and the answer', () => {
  it('the killed process left the question on disk: the session waiting_input, user and agent messages, no lease, nothing run', async () => {
    const sessionId = await askThenKill()
    expect(storedSession(files.db, sessionId)).toMatchObject({
      state: 'waiting_input',
      summary: REQUEST,
      leaseOwner: null,
    })
    const stored = storedMessages(files.db, sessionId)
    expect(stored.map((m) => [m.seq, m.type, m.stopReason])).toEqual([
      [0, 'user', null],
      [1, 'agent', 'tool_use'],
    ])
    expect(toolUsesOf(stored[1])).toEqual([{ type: 'tool_use', ...CALL }])
    expect(jsonLines(files.deployLog)).toEqual([])
  })

  it('a new process finds the session waiting (initialize() leaves it alone), getPending() returns the call, and an approval runs the tool once: user, agent(tool_use), tool, agent on disk', async () => {
    const sessionId = await askThenKill()
    const restarted = await restart()
    expect(sessionIdsIn(files.db, 'waiting_input')).toEqual([sessionId])
    expect((await persister!.listSessions({ state: 'waiting_input' })).map((s) => s.id)).toEqual([sessionId])

    const session = (await restarted.getSession(sessionId))!
    expect(session.state).toBe('waiting_input')
    expect(await session.getPending()).toEqual([
      { toolUseId: CALL.id, name: 'deploy', input: INPUT, kind: 'approval', sessionId },
    ])

    provider!.enqueue(says('Done: web 2.4.1 is in production.'))
    const result = await session.send([{ type: 'tool_approval', toolUseId: CALL.id, approved: true }])
    expect(result.text).toBe('Done: web 2.4.1 is in production.')
    expect(result.pending).toBeUndefined()
    // An answering send stores no user message: the tool message, then the reply.
    expect(result.messages.map((m) => m.type)).toEqual(['tool', 'agent'])
    expect(await session.getPending()).toEqual([])

    // The tool ran once, in this process, for that call.
    expect(jsonLines(files.deployLog)).toEqual([{ ...INPUT, sessionId, toolCallId: CALL.id }])

    // Claude received the conversation with the result right after its call.
    expect(provider!.requests).toHaveLength(1)
    const messages = provider!.requests[0]!.decoded.messages
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(messages[1]!.content).toContainEqual({ type: 'tool_use', ...CALL })
    expect(messages[2]!.content).toEqual([
      expect.objectContaining({ type: 'tool_result', toolUseId: CALL.id }),
    ])
    expect(JSON.stringify(messages[2]!.content)).toContain('Deployed web 2.4.1 to production.')

    await restarted.close()
    const stored = storedMessages(files.db, sessionId)
    expect(stored.map((m) => [m.seq, m.type])).toEqual([
      [0, 'user'],
      [1, 'agent'],
      [2, 'tool'],
      [3, 'agent'],
    ])
    expect(stored[0]!.content).toBe(REQUEST)
    expect(toolUsesOf(stored[1])).toEqual([{ type: 'tool_use', ...CALL }])
    expect(toolResultsOf(stored[2])).toEqual([
      {
        type: 'tool_result',
        toolUseId: CALL.id,
        content: [{ type: 'text', text: 'Deployed web 2.4.1 to production.' }],
      },
    ])
    expect(stored[3]!.content).toEqual([{ type: 'text', text: 'Done: web 2.4.1 is in production.' }])
    expect(storedSession(files.db, sessionId)).toMatchObject({ state: 'idle', leaseOwner: null })
  })

  it('a denial given after the restart runs nothing and stores the reason as an error result', async () => {
    const sessionId = await askThenKill()
    const restarted = await restart()
    const session = (await restarted.getSession(sessionId))!
    provider!.enqueue(says('OK, not deploying.'))
    await session.send([
      { type: 'tool_approval', toolUseId: CALL.id, approved: false, reason: 'freeze until Monday' },
    ])
    await restarted.close()

    expect(jsonLines(files.deployLog)).toEqual([])
    const stored = storedMessages(files.db, sessionId)
    expect(stored.map((m) => m.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    expect(toolResultsOf(stored[2])).toEqual([
      {
        type: 'tool_result',
        toolUseId: CALL.id,
        content: [{ type: 'text', text: 'The user denied this tool call: freeze until Monday' }],
        isError: true,
      },
    ])
  })

  it('answers that miss the pending call, given after the restart, write nothing and leave the session waiting', async () => {
    const sessionId = await askThenKill()
    const restarted = await restart()
    const session = (await restarted.getSession(sessionId))!
    await expect(
      session.send([{ type: 'tool_approval', toolUseId: 'toolu_someone_else', approved: true }]),
    ).rejects.toMatchObject({ name: 'ValidationError' })
    await restarted.close()

    expect(provider!.requests).toHaveLength(0)
    expect(jsonLines(files.deployLog)).toEqual([])
    expect(storedMessages(files.db, sessionId).map((m) => m.type)).toEqual(['user', 'agent'])
    expect(storedSession(files.db, sessionId)?.state).toBe('waiting_input')
  })
})
