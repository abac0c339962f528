// Agents as tools (DESIGN §10.3, seed 002) through two different real adapters: the parent is
// Claude, the `researcher` it calls runs in a child session on Gemini or on OpenAI Chat
// Completions, each against the contract kit's loopback fake provider, with the SQLite store.
// Each test checks what each provider received and what is on disk.
import type { DecodedRequest } from '@agentx/contract-tests'
import {
  type Agent,
  agentTool,
  type ContentBlock,
  createAgent,
  type SessionEvent,
  type Tool,
} from '@agentx/core'
import { SqlitePersister } from '@agentx/persister-sqlite'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { temporaryFolder } from './helpers/files.js'
import { type LiveProvider, type ProviderName, startProvider } from './helpers/providers.js'
import {
  storedMessageCount,
  storedMessages,
  storedSession,
  storedSessions,
  storedTurns,
  toolResultsOf,
} from './helpers/read-store.js'
import { callsTools, fails, says, stalls } from './helpers/scenarios.js'

const TASK = 'Find the default port of the server.'
const RESEARCH_CALL = { id: 'toolu_research_1', name: 'researcher', input: { task: TASK } }
const SEARCH_CALL = { id: 'call_search_1', name: 'search_docs', input: { query: 'default port' } }
const PUBLISH_CALL = { id: 'call_publish_1', name: 'publish', input: { text: 'The default port is 8080.' } }

function textOf(content: string | ContentBlock[]): string {
  if (typeof content === 'string') return content
  return content
    .map((block) =>
      block.type === 'text' ? block.text : block.type === 'tool_result' ? textOf(block.content) : '',
    )
    .join('')
}

/** The tool results of a request's last message. */
function lastResults(request: DecodedRequest | undefined) {
  return (request?.messages.at(-1)?.content ?? []).flatMap((block) =>
    block.type === 'tool_result'
      ? [{ toolUseId: block.toolUseId, text: textOf(block.content), isError: block.isError === true }]
      : [],
  )
}

async function until(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

const CHILD_PROVIDERS: Array<{ name: string; provider: ProviderName; marksErrors: boolean }> = [
  { name: 'Gemini', provider: 'gemini', marksErrors: true },
  { name: 'OpenAI Chat Completions', provider: 'openai-chat', marksErrors: false },
]

describe.each(CHILD_PROVIDERS)('a Claude lead calls a researcher on $name', (childCase) => {
  let folder: ReturnType<typeof temporaryFolder>
  let filename: string
  let claude: LiveProvider
  let child: LiveProvider
  let published: string[]
  let open: Array<{ agent: Agent; persister: SqlitePersister }>

  beforeEach(async () => {
    folder = temporaryFolder('agent-tool')
    filename = join(folder.path, 'agent.db')
    claude = await startProvider('claude')
    child = await startProvider(childCase.provider)
    published = []
    open = []
  })
  afterEach(async () => {
    for (const { agent, persister } of open) {
      await agent.close()
      await persister.close()
    }
    await claude.fake.close()
    await child.fake.close()
    folder.remove()
  })

  async function startAgent(): Promise<Agent> {
    const searchDocs: Tool<{ query: string }> = {
      name: 'search_docs',
      description: 'Searches the server documentation.',
      inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      execute: (input) =>
        `docs/config.md: "The server listens on port 8080 unless PORT is set." (${input.query})`,
    }
    const publish: Tool<{ text: string }> = {
      name: 'publish',
      description: 'Publishes a finding to the team wiki.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      needsApproval: true,
      execute: (input) => {
        published.push(input.text)
        return 'Published to the wiki.'
      },
    }
    const persister = new SqlitePersister({ filename })
    const agent = createAgent(
      {
        model: 'claude-lead',
        systemPrompt: 'You answer questions about the server.',
        tools: [agentTool('researcher')],
        durability: 'sync',
        retry: { maxRetries: 0 },
        agents: {
          researcher: {
            description: 'Looks facts up in the documentation.',
            model: 'research-model',
            systemPrompt: 'You research in the docs.',
            adapter: child.adapter,
            tools: [searchDocs, publish],
          },
        },
      },
      { adapter: claude.adapter, persister },
    )
    await agent.initialize()
    open.push({ agent, persister })
    return agent
  }

  it('runs the researcher in a persisted child session that sees only its task; its final text is the tool result, its usage counts in the parent send, its events arrive as subagent events', async () => {
    const agent = await startAgent()
    const session = await agent.createSession()
    const childId = `${session.id}/${RESEARCH_CALL.id}`
    const events: SessionEvent[] = []
    session.subscribe((event) => events.push(event))
    claude.fake.enqueue(
      callsTools([RESEARCH_CALL], {
        text: 'Let me ask the researcher.',
        usage: { inputTokens: 100, outputTokens: 20 },
      }),
      says('It listens on 8080 by default.', { usage: { inputTokens: 200, outputTokens: 12 } }),
    )
    child.fake.enqueue(
      callsTools([SEARCH_CALL], { usage: { inputTokens: 30, outputTokens: 5 } }),
      says('The default port is 8080.', { usage: { inputTokens: 40, outputTokens: 6 } }),
    )
    const result = await session.send('Which port does the server use?')

    expect(result.text).toBe('It listens on 8080 by default.')
    expect(result.usage).toMatchObject({ inputTokens: 370, outputTokens: 43 })
    // The lead was offered the researcher with the profile's description.
    const leadBody = claude.body(0) as { tools: Array<{ name: string; description: string }> }
    expect(leadBody.tools).toEqual([
      expect.objectContaining({ name: 'researcher', description: 'Looks facts up in the documentation.' }),
    ])
    // The child's provider saw only the task, with the researcher's prompt, model and tools.
    const [childFirst, childSecond] = child.decoded()
    expect(childFirst?.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: TASK }] }])
    expect(childFirst?.systemPrompt).toBe('You research in the docs.')
    expect(childFirst?.model).toBe('research-model')
    expect(childFirst?.tools.sort()).toEqual(['publish', 'search_docs'])
    expect(lastResults(childSecond)).toEqual([
      expect.objectContaining({ toolUseId: SEARCH_CALL.id, text: expect.stringContaining('port 8080') }),
    ])
    // The child's final text answers the lead's call.
    expect(lastResults(claude.decoded()[1])).toEqual([
      { toolUseId: RESEARCH_CALL.id, text: 'The default port is 8080.', isError: false },
    ])
    // Events: the child's come wrapped; the parent's own deltas are only its own text.
    const subagent = events.filter((event) => event.type === 'subagent')
    expect(subagent.length).toBeGreaterThan(0)
    expect(subagent.every((event) => event.sessionId === childId && event.agent === 'researcher')).toBe(true)
    const childDeltas = subagent.flatMap((event) =>
      event.event.type === 'text-delta' ? [event.event.text] : [],
    )
    expect(childDeltas.join('')).toBe('The default port is 8080.')
    const ownDeltas = events.flatMap((event) => (event.type === 'text-delta' ? [event.text] : []))
    expect(ownDeltas.join('')).toBe('Let me ask the researcher.It listens on 8080 by default.')

    // On disk: the child, linked to its parent, with its own conversation and usage.
    expect(storedSession(filename, childId)).toMatchObject({
      state: 'idle',
      parentSessionId: session.id,
      parentToolUseId: RESEARCH_CALL.id,
      activeAgent: 'researcher',
      tokenUsage: { inputTokens: 70, outputTokens: 11 },
    })
    expect(storedTurns(filename, childId)).toEqual([
      ['user', null],
      ['agent', 'researcher'],
      ['tool', null],
      ['agent', 'researcher'],
    ])
    expect(storedMessages(filename, childId)[0]?.content).toBe(TASK)
    expect(storedTurns(filename, session.id)).toEqual([
      ['user', null],
      ['agent', 'default'],
      ['tool', null],
      ['agent', 'default'],
    ])
    expect(toolResultsOf(storedMessages(filename, session.id)[2])).toEqual([
      {
        type: 'tool_result',
        toolUseId: RESEARCH_CALL.id,
        content: [{ type: 'text', text: 'The default port is 8080.' }],
      },
    ])
  })

  it('children are listed only with includeChildren and deleted with their parent', async () => {
    const agent = await startAgent()
    const persister = open[0]!.persister
    const session = await agent.createSession()
    const other = await agent.createSession({ summary: 'unrelated' })
    const childId = `${session.id}/${RESEARCH_CALL.id}`
    claude.fake.enqueue(callsTools([RESEARCH_CALL]), says('8080.'))
    child.fake.enqueue(says('The default port is 8080.'))
    await session.send('Which port?')

    expect((await persister.listSessions({})).map((data) => data.id).sort()).toEqual(
      [session.id, other.id].sort(),
    )
    expect((await persister.listSessions({ includeChildren: true })).map((data) => data.id).sort()).toEqual(
      [session.id, other.id, childId].sort(),
    )
    expect((await agent.getSessions()).map((listed) => listed.id).sort()).toEqual(
      [session.id, other.id].sort(),
    )
    expect(
      storedSessions(filename)
        .map((row) => row.id)
        .sort(),
    ).toEqual([session.id, other.id, childId].sort())
    expect(storedMessageCount(filename, childId)).toBe(2)

    await agent.deleteSession(session.id)
    expect(storedSessions(filename).map((row) => row.id)).toEqual([other.id])
    expect(storedMessageCount(filename, session.id)).toBe(0)
    expect(storedMessageCount(filename, childId)).toBe(0)
    expect(await persister.listSessions({ includeChildren: true })).toEqual([
      expect.objectContaining({ id: other.id }),
    ])
  })

  it("a child's failure becomes an isError tool result; the parent goes on and ends idle", async () => {
    const agent = await startAgent()
    const session = await agent.createSession()
    const childId = `${session.id}/${RESEARCH_CALL.id}`
    claude.fake.enqueue(callsTools([RESEARCH_CALL]), says('The researcher is down; I do not know.'))
    child.fake.enqueue(fails('server', 'research backend exploded'))
    const result = await session.send('Which port?')

    expect(result.text).toBe('The researcher is down; I do not know.')
    const [failure] = lastResults(claude.decoded()[1])
    expect(failure).toMatchObject({ toolUseId: RESEARCH_CALL.id, isError: true })
    expect(failure?.text).toContain('The researcher agent failed')
    expect(storedSession(filename, session.id)?.state).toBe('idle')
    expect(storedSession(filename, childId)?.state).toBe('error')
    const [stored] = toolResultsOf(storedMessages(filename, session.id)[2])
    expect(stored).toMatchObject({ toolUseId: RESEARCH_CALL.id, isError: true })
  })

  it('aborting the parent aborts the child (its request is cancelled on the wire)', async () => {
    const agent = await startAgent()
    const session = await agent.createSession()
    const childId = `${session.id}/${RESEARCH_CALL.id}`
    claude.fake.enqueue(callsTools([RESEARCH_CALL]))
    child.fake.enqueue(stalls('Searching the documentation for the port'))
    const running = session.send('Which port?')
    const settled = running.catch((error: unknown) => error)
    await until(() => child.fake.requests.length === 1)
    session.abort()
    expect(await settled).toMatchObject({ kind: 'aborted' })
    await child.fake.waitForDisconnect(10_000)
    await session.flush()
    expect(claude.fake.requests).toHaveLength(1)
    expect(storedSession(filename, session.id)?.state).toBe('aborted')
    await until(() => storedSession(filename, childId)?.state === 'aborted')
  })

  it('an approval inside the child makes the parent wait; the denial sent to the parent reaches the child’s provider', async () => {
    const agent = await startAgent()
    const session = await agent.createSession()
    const childId = `${session.id}/${RESEARCH_CALL.id}`
    claude.fake.enqueue(callsTools([RESEARCH_CALL]))
    child.fake.enqueue(callsTools([PUBLISH_CALL], { text: 'Found it; publishing.' }))
    const first = await session.send('Find the port and publish it.')

    expect(first.pending).toEqual([
      {
        toolUseId: PUBLISH_CALL.id,
        name: 'publish',
        input: PUBLISH_CALL.input,
        kind: 'approval',
        sessionId: childId,
      },
    ])
    expect(session.state).toBe('waiting_input')
    expect(storedSession(filename, session.id)?.state).toBe('waiting_input')
    expect(storedSession(filename, childId)?.state).toBe('waiting_input')
    expect(await session.getPending()).toEqual(first.pending)
    expect(published).toEqual([])
    expect(claude.fake.requests).toHaveLength(1)

    child.fake.enqueue(says('Not published, as asked.'))
    claude.fake.enqueue(says('The port is 8080; nothing was published.'))
    const answered = await session.send([
      {
        type: 'tool_approval',
        toolUseId: PUBLISH_CALL.id,
        approved: false,
        reason: 'Not before the review.',
      },
    ])
    expect(answered.text).toBe('The port is 8080; nothing was published.')
    expect(published).toEqual([])
    const [denial] = lastResults(child.decoded()[1])
    expect(denial?.toolUseId).toBe(PUBLISH_CALL.id)
    expect(denial?.text).toContain('Not before the review.')
    if (childCase.marksErrors) expect(denial?.isError).toBe(true)
    expect(lastResults(claude.decoded()[1])).toEqual([
      { toolUseId: RESEARCH_CALL.id, text: 'Not published, as asked.', isError: false },
    ])
    expect(storedTurns(filename, childId)).toEqual([
      ['user', null],
      ['agent', 'researcher'],
      ['tool', null],
      ['agent', 'researcher'],
    ])
    expect(storedTurns(filename, session.id)).toEqual([
      ['user', null],
      ['agent', 'default'],
      ['tool', null],
      ['agent', 'default'],
    ])
    expect(storedSession(filename, session.id)?.state).toBe('idle')
    expect(storedSession(filename, childId)?.state).toBe('idle')
  })
})

describe('a parent and its child on OpenAI Responses keep their own response ids', () => {
  let folder: ReturnType<typeof temporaryFolder>
  let filename: string
  let openai: LiveProvider
  let published: string[]
  let open: Array<{ agent: Agent; persister: SqlitePersister }>

  beforeEach(async () => {
    folder = temporaryFolder('agent-tool-ids')
    filename = join(folder.path, 'agent.db')
    openai = await startProvider('openai-responses')
    published = []
    open = []
  })
  afterEach(async () => {
    for (const { agent, persister } of open) {
      await agent.close()
      await persister.close()
    }
    await openai.fake.close()
    folder.remove()
  })

  /** Lead and researcher on one OpenAI Responses adapter; a second call is a restarted application. */
  async function startAgent(): Promise<Agent> {
    const publish: Tool<{ text: string }> = {
      name: 'publish',
      description: 'Publishes a finding to the team wiki.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      needsApproval: true,
      execute: (input) => {
        published.push(input.text)
        return 'Published to the wiki.'
      },
    }
    const persister = new SqlitePersister({ filename })
    const agent = createAgent(
      {
        model: 'gpt-lead',
        tools: [agentTool('researcher')],
        durability: 'sync',
        retry: { maxRetries: 0 },
        agents: { researcher: { model: 'gpt-researcher', tools: [publish] } },
      },
      { adapter: openai.adapter, persister },
    )
    await agent.initialize()
    open.push({ agent, persister })
    return agent
  }

  it('the child starts without the parent’s id, resumes its own after an approval answered by a restarted agent, and the parent resumes its own', async () => {
    const agent = await startAgent()
    const session = await agent.createSession()
    const childId = `${session.id}/call_research_1`
    openai.fake.enqueue(
      callsTools([{ ...RESEARCH_CALL, id: 'call_research_1' }], { responseId: 'resp_lead_1' }),
      callsTools([PUBLISH_CALL], { responseId: 'resp_research_1' }),
    )
    const first = await session.send('Find the port and publish it.')
    expect(first.pending?.[0]).toMatchObject({ toolUseId: PUBLISH_CALL.id, sessionId: childId })
    // Request 1 is the child's first: a new conversation, not a continuation of the lead's.
    expect(openai.body(1)).not.toHaveProperty('previous_response_id')
    expect(openai.decoded()[1]?.model).toBe('gpt-researcher')
    expect(storedSession(filename, session.id)?.providerSessionId).toBe('resp_lead_1')
    expect(storedSession(filename, childId)?.providerSessionId).toBe('resp_research_1')

    const restarted = await startAgent()
    const parent = (await restarted.getSession(session.id))!
    openai.fake.enqueue(
      says('Published: 8080.', { responseId: 'resp_research_2' }),
      says('Done: 8080 is on the wiki.', { responseId: 'resp_lead_2' }),
    )
    const answered = await parent.send([
      { type: 'tool_approval', toolUseId: PUBLISH_CALL.id, approved: true },
    ])
    expect(answered.text).toBe('Done: 8080 is on the wiki.')
    expect(published).toEqual(['The default port is 8080.'])
    // The child resumes its own response with the approved call's output only…
    expect(openai.body(2).previous_response_id).toBe('resp_research_1')
    expect(openai.body(2).input).toEqual([
      expect.objectContaining({ type: 'function_call_output', call_id: PUBLISH_CALL.id }),
    ])
    // …and the lead resumes its own with the researcher's result.
    expect(openai.body(3).previous_response_id).toBe('resp_lead_1')
    expect(openai.body(3).input).toEqual([
      expect.objectContaining({ type: 'function_call_output', call_id: 'call_research_1' }),
    ])
    expect(lastResults(openai.decoded()[3])).toEqual([
      { toolUseId: 'call_research_1', text: 'Published: 8080.', isError: false },
    ])
    expect(storedSession(filename, session.id)).toMatchObject({
      state: 'idle',
      providerSessionId: 'resp_lead_2',
    })
    expect(storedSession(filename, childId)).toMatchObject({
      state: 'idle',
      providerSessionId: 'resp_research_2',
    })
  })
})
