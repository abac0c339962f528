// Human input (DESIGN §10.1) end to end through every first-party adapter: the real adapter (and
// its provider SDK) against the contract kit's loopback fake provider speaking that provider's
// wire dialect, with the SQLite store. Each test checks what the provider received and what is on
// disk.
import { createClaudeAdapter } from '@agentx/adapter-claude'
import { GeminiAdapter } from '@agentx/adapter-gemini'
import { OpenAIAdapter } from '@agentx/adapter-openai'
import {
  anthropicMessagesDialect,
  type DecodedRequest,
  type FakeProvider,
  geminiDialect,
  openAIChatDialect,
  openAIResponsesDialect,
  startFakeProvider,
  type WireDialect,
} from '@agentx/contract-tests'
import {
  type Agent,
  type AgentAdapter,
  type ContentBlock,
  createAgent,
  type SessionEvent,
  type Tool,
} from '@agentx/core'
import { SqlitePersister } from '@agentx/persister-sqlite'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { join } from 'node:path'
import { temporaryFolder } from './helpers/files.js'
import { sessionIdsIn, storedMessages, storedSession, toolResultsOf } from './helpers/read-store.js'
import { type Call, callsTools, says } from './helpers/scenarios.js'

const API_KEY = 'offline-test-key'

interface ProviderCase {
  name: string
  dialect: WireDialect
  createAdapter(baseURL: string): AgentAdapter
  /** Whether the wire protocol marks a tool result as an error (OpenAI's function outputs cannot). */
  marksErrors: boolean
  /** Whether the provider keeps the conversation (OpenAI Responses `previous_response_id`). */
  resumes: boolean
}

const PROVIDERS: ProviderCase[] = [
  {
    name: 'Claude (Anthropic Messages)',
    dialect: anthropicMessagesDialect,
    createAdapter: (baseURL) => createClaudeAdapter({ apiKey: API_KEY, baseURL }),
    marksErrors: true,
    resumes: false,
  },
  {
    name: 'OpenAI Responses',
    dialect: openAIResponsesDialect,
    createAdapter: (baseURL) => new OpenAIAdapter({ apiKey: API_KEY, baseURL, api: 'responses' }),
    marksErrors: false,
    resumes: true,
  },
  {
    name: 'OpenAI Chat Completions',
    dialect: openAIChatDialect,
    createAdapter: (baseURL) => new OpenAIAdapter({ apiKey: API_KEY, baseURL, api: 'chat' }),
    marksErrors: false,
    resumes: false,
  },
  {
    name: 'Gemini',
    dialect: geminiDialect,
    createAdapter: (baseURL) => new GeminiAdapter({ apiKey: API_KEY, baseURL }),
    marksErrors: true,
    resumes: false,
  },
]

const PRODUCTION = { service: 'web', version: '2.4.1', environment: 'production' }
const DEPLOY: Call = { id: 'call_deploy_1', name: 'deploy', input: PRODUCTION }
const LOOKUP: Call = { id: 'call_lookup_1', name: 'lookup', input: { service: 'web' } }
const ASK: Call = { id: 'call_ask_1', name: 'ask_user', input: { question: 'Which region?' } }

/** The tools of every agent here; `runs` records each execution. */
function createTools(runs: Array<{ name: string; input: unknown }>): Tool[] {
  const deploy: Tool<{ service: string; version: string; environment: string }> = {
    name: 'deploy',
    description: 'Deploys a version of a service.',
    inputSchema: {
      type: 'object',
      properties: {
        service: { type: 'string' },
        version: { type: 'string' },
        environment: { type: 'string' },
      },
      required: ['service', 'version', 'environment'],
    },
    needsApproval: (input) => input.environment === 'production',
    execute: (input) => {
      runs.push({ name: 'deploy', input })
      return `Deployed ${input.service} ${input.version} to ${input.environment}.`
    },
  }
  const lookup: Tool<{ service: string }> = {
    name: 'lookup',
    description: 'The version of a service running now.',
    inputSchema: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
    execute: (input) => {
      runs.push({ name: 'lookup', input })
      return `${input.service} runs 2.4.0`
    },
  }
  // A client tool: no execute, the application answers it.
  const askUser: Tool = {
    name: 'ask_user',
    description: 'Asks the user a question.',
    inputSchema: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
  }
  return [deploy, lookup, askUser]
}

function textOf(content: string | ContentBlock[]): string {
  if (typeof content === 'string') return content
  return content.map((block) => (block.type === 'text' ? block.text : '')).join('')
}

/** The tool results and the text in the last message of a request (what answers the model). */
function lastTurn(request: DecodedRequest): {
  results: Array<{ toolUseId: string; text: string; isError: boolean }>
  text: string
} {
  const last = request.messages.at(-1)
  expect(last?.role).toBe('user')
  const results = (last?.content ?? []).flatMap((block) =>
    block.type === 'tool_result'
      ? [{ toolUseId: block.toolUseId, text: textOf(block.content), isError: block.isError === true }]
      : [],
  )
  return { results, text: textOf((last?.content ?? []).filter((block) => block.type === 'text')) }
}

/** The raw JSON body of a request. */
function bodyOf(fake: FakeProvider, index: number): Record<string, unknown> {
  return JSON.parse(fake.requests[index]!.received.body) as Record<string, unknown>
}

describe.each(PROVIDERS)('human input through $name', (provider) => {
  let folder: ReturnType<typeof temporaryFolder>
  let filename: string
  let fake: FakeProvider
  let runs: Array<{ name: string; input: unknown }>
  let open: Array<{ agent: Agent; persister: SqlitePersister }>

  beforeEach(async () => {
    folder = temporaryFolder('adapters')
    filename = join(folder.path, 'agent.db')
    fake = await startFakeProvider({ dialect: provider.dialect })
    runs = []
    open = []
  })
  afterEach(async () => {
    for (const { agent, persister } of open) {
      await agent.close()
      await persister.close()
    }
    await fake.close()
    folder.remove()
  })

  /** An agent on the SQLite file (a second call is a restarted application on the same file). */
  async function startAgent(): Promise<Agent> {
    const persister = new SqlitePersister({ filename })
    const agent = createAgent(
      {
        model: 'model-under-test',
        systemPrompt: 'You deploy services.',
        tools: createTools(runs),
        durability: 'sync',
        retry: { maxRetries: 0 },
      },
      { adapter: provider.createAdapter(fake.baseURL), persister },
    )
    await agent.initialize()
    open.push({ agent, persister })
    return agent
  }

  /** A session that waits on `calls` (the model's first response, id `resp_1`). */
  async function waitingOn(calls: Call[], agent?: Agent) {
    const session = await (agent ?? (await startAgent())).createSession({})
    fake.enqueue(callsTools(calls, { text: 'Let me do that.', responseId: 'resp_1' }))
    const first = await session.send('Ship web 2.4.1 to production.')
    expect(session.state).toBe('waiting_input')
    expect(runs).toEqual([])
    expect(storedSession(filename, session.id)?.state).toBe('waiting_input')
    return { session, first }
  }

  /** Checks that request `index` answers the batch: resumed (Responses) or replayed after the calls. */
  function expectAnswersTheBatch(index: number, calls: Call[]): void {
    const request = fake.requests[index]!.decoded
    if (provider.resumes) {
      // Only the new input travels, on top of the response that made the calls.
      expect(request.resume).toBe('resp_1')
      expect(bodyOf(fake, index).previous_response_id).toBe('resp_1')
      expect(request.messages).toHaveLength(1)
    } else {
      const calling = request.messages.at(-2)!
      expect(calling.role).toBe('assistant')
      expect(
        calling.content.flatMap((block) => (block.type === 'tool_use' ? [[block.id, block.name]] : [])),
      ).toEqual(calls.map((call) => [call.id, call.name]))
    }
  }

  it('an approved call runs once after the answer, and its result reaches the provider under the call id', async () => {
    const { session, first } = await waitingOn([DEPLOY])
    expect(first.pending).toEqual([
      { toolUseId: DEPLOY.id, name: 'deploy', input: PRODUCTION, kind: 'approval', sessionId: session.id },
    ])
    expect(fake.requests).toHaveLength(1)

    fake.enqueue(says('Deployed.', { responseId: 'resp_2' }))
    const result = await session.send([{ type: 'tool_approval', toolUseId: DEPLOY.id, approved: true }])
    expect(result.text).toBe('Deployed.')
    expect(runs).toEqual([{ name: 'deploy', input: PRODUCTION }])

    expect(fake.requests).toHaveLength(2)
    expectAnswersTheBatch(1, [DEPLOY])
    expect(lastTurn(fake.requests[1]!.decoded)).toEqual({
      results: [{ toolUseId: DEPLOY.id, text: 'Deployed web 2.4.1 to production.', isError: false }],
      text: '',
    })
    if (provider.resumes) {
      // The exact input: one function_call_output with the call's id — no "No tool call found".
      expect(bodyOf(fake, 1).input).toEqual([
        { type: 'function_call_output', call_id: DEPLOY.id, output: 'Deployed web 2.4.1 to production.' },
      ])
      expect(storedSession(filename, session.id)?.providerSessionId).toBe('resp_2')
    }

    const stored = storedMessages(filename, session.id)
    expect(stored.map((m) => m.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    expect(toolResultsOf(stored[2])).toEqual([
      {
        type: 'tool_result',
        toolUseId: DEPLOY.id,
        content: [{ type: 'text', text: 'Deployed web 2.4.1 to production.' }],
      },
    ])
    expect(storedSession(filename, session.id)?.state).toBe('idle')
  })

  it('a denied call does not run, and the reason reaches the provider in its result', async () => {
    const { session } = await waitingOn([DEPLOY])
    fake.enqueue(says('Understood, no deploy.', { responseId: 'resp_2' }))
    await session.send([
      { type: 'tool_approval', toolUseId: DEPLOY.id, approved: false, reason: 'freeze until Monday' },
    ])
    expect(runs).toEqual([])

    expectAnswersTheBatch(1, [DEPLOY])
    const [sent] = lastTurn(fake.requests[1]!.decoded).results
    expect(sent).toEqual({
      toolUseId: DEPLOY.id,
      text: 'The user denied this tool call: freeze until Monday',
      // OpenAI's function_call_output has no error flag: the text carries the denial.
      isError: provider.marksErrors,
    })
    if (provider.resumes) {
      expect(bodyOf(fake, 1).input).toEqual([
        {
          type: 'function_call_output',
          call_id: DEPLOY.id,
          output: 'The user denied this tool call: freeze until Monday',
        },
      ])
    }
    const stored = storedMessages(filename, session.id)
    expect(stored.map((m) => m.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    expect(toolResultsOf(stored[2])).toMatchObject([{ toolUseId: DEPLOY.id, isError: true }])
  })

  it('an approval with edited input runs the tool with that input', async () => {
    const { session } = await waitingOn([DEPLOY])
    fake.enqueue(says('Deployed to staging instead.', { responseId: 'resp_2' }))
    const staging = { ...PRODUCTION, environment: 'staging' }
    await session.send([{ type: 'tool_approval', toolUseId: DEPLOY.id, approved: true, input: staging }])
    expect(runs).toEqual([{ name: 'deploy', input: staging }])
    expect(lastTurn(fake.requests[1]!.decoded).results).toEqual([
      { toolUseId: DEPLOY.id, text: 'Deployed web 2.4.1 to staging.', isError: false },
    ])
  })

  it('a mixed batch (one call needs approval, one does not) runs neither before the answer and both after, in one tool message', async () => {
    const { session, first } = await waitingOn([LOOKUP, DEPLOY])
    expect(first.pending?.map((call) => call.toolUseId)).toEqual([DEPLOY.id])
    expect(await session.getPending()).toEqual(first.pending)

    // Answers that miss the pending call are refused before anything is written or sent.
    await expect(
      session.send([{ type: 'tool_approval', toolUseId: LOOKUP.id, approved: true }]),
    ).rejects.toMatchObject({ name: 'ValidationError' })
    expect(runs).toEqual([])
    expect(fake.requests).toHaveLength(1)
    expect(storedMessages(filename, session.id).map((m) => m.type)).toEqual(['user', 'agent'])
    expect(storedSession(filename, session.id)?.state).toBe('waiting_input')

    fake.enqueue(says('web was on 2.4.0; now 2.4.1 is deployed.', { responseId: 'resp_2' }))
    await session.send([{ type: 'tool_approval', toolUseId: DEPLOY.id, approved: true }])
    expect(runs.map((run) => run.name).sort()).toEqual(['deploy', 'lookup'])

    expect(fake.requests).toHaveLength(2)
    expectAnswersTheBatch(1, [LOOKUP, DEPLOY])
    expect(lastTurn(fake.requests[1]!.decoded).results).toEqual([
      { toolUseId: LOOKUP.id, text: 'web runs 2.4.0', isError: false },
      { toolUseId: DEPLOY.id, text: 'Deployed web 2.4.1 to production.', isError: false },
    ])
    if (provider.resumes) {
      expect(bodyOf(fake, 1).input).toEqual([
        { type: 'function_call_output', call_id: LOOKUP.id, output: 'web runs 2.4.0' },
        { type: 'function_call_output', call_id: DEPLOY.id, output: 'Deployed web 2.4.1 to production.' },
      ])
    }
    const stored = storedMessages(filename, session.id)
    expect(stored.map((m) => m.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    expect(toolResultsOf(stored[2]).map((result) => result.toolUseId)).toEqual([LOOKUP.id, DEPLOY.id])
  })

  it('a client tool is answered with a tool_result, which reaches the provider as the call result', async () => {
    const { session, first } = await waitingOn([ASK])
    expect(first.pending).toEqual([
      {
        toolUseId: ASK.id,
        name: 'ask_user',
        input: { question: 'Which region?' },
        kind: 'client',
        sessionId: session.id,
      },
    ])
    fake.enqueue(says('Deploying in eu-west.', { responseId: 'resp_2' }))
    await session.send([{ type: 'tool_result', toolUseId: ASK.id, content: 'eu-west' }])
    expect(runs).toEqual([])
    expectAnswersTheBatch(1, [ASK])
    expect(lastTurn(fake.requests[1]!.decoded).results).toEqual([
      { toolUseId: ASK.id, text: 'eu-west', isError: false },
    ])
    const stored = storedMessages(filename, session.id)
    expect(stored.map((m) => m.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    expect(toolResultsOf(stored[2])).toEqual([{ type: 'tool_result', toolUseId: ASK.id, content: 'eu-west' }])
  })

  it('ordinary text while waiting closes the pending call as not run and reaches the provider after it', async () => {
    const { session } = await waitingOn([DEPLOY])
    fake.enqueue(says('Sure, nothing deployed. It runs 2.4.0.', { responseId: 'resp_2' }))
    const result = await session.send('Wait — which version runs now?')
    expect(result.text).toBe('Sure, nothing deployed. It runs 2.4.0.')
    expect(runs).toEqual([])

    expectAnswersTheBatch(1, [DEPLOY])
    const turn = lastTurn(fake.requests[1]!.decoded)
    expect(turn.results).toEqual([
      {
        toolUseId: DEPLOY.id,
        text: 'Not run: the user replied with a message instead of answering this tool call.',
        isError: provider.marksErrors,
      },
    ])
    expect(turn.text).toBe('Wait — which version runs now?')
    if (provider.resumes) {
      expect(bodyOf(fake, 1).input).toEqual([
        {
          type: 'function_call_output',
          call_id: DEPLOY.id,
          output: 'Not run: the user replied with a message instead of answering this tool call.',
        },
        { role: 'user', content: 'Wait — which version runs now?' },
      ])
    }
    const stored = storedMessages(filename, session.id)
    expect(stored.map((m) => m.type)).toEqual(['user', 'agent', 'tool', 'user', 'agent'])
    expect(stored[3]!.content).toBe('Wait — which version runs now?')
    expect(storedSession(filename, session.id)?.state).toBe('idle')
  })

  it('answers streamed through stream() run the batch and end with done', async () => {
    const { session } = await waitingOn([DEPLOY])
    fake.enqueue(says('Deployed.', { responseId: 'resp_2' }))
    const events: SessionEvent[] = []
    for await (const event of session.stream([
      { type: 'tool_approval', toolUseId: DEPLOY.id, approved: true },
    ])) {
      events.push(event)
    }
    expect(events).toContainEqual({
      type: 'tool-result',
      toolUseId: DEPLOY.id,
      content: [{ type: 'text', text: 'Deployed web 2.4.1 to production.' }],
    })
    expect(events.at(-1)).toMatchObject({ type: 'done', result: { text: 'Deployed.' } })
    expect(runs).toHaveLength(1)
    expect(storedMessages(filename, session.id).map((m) => m.type)).toEqual([
      'user',
      'agent',
      'tool',
      'agent',
    ])
  })

  it('a restarted agent on the same file answers the waiting session (Responses: resuming the stored response id)', async () => {
    const before = await startAgent()
    const { session } = await waitingOn([DEPLOY], before)
    await before.close()

    const after = await startAgent()
    expect(sessionIdsIn(filename, 'waiting_input')).toEqual([session.id])
    const again = (await after.getSession(session.id))!
    expect(again.state).toBe('waiting_input')
    if (provider.resumes) expect(again.providerSessionId).toBe('resp_1')
    expect((await again.getPending()).map((call) => call.toolUseId)).toEqual([DEPLOY.id])

    fake.enqueue(says('Deployed.', { responseId: 'resp_2' }))
    await again.send([{ type: 'tool_approval', toolUseId: DEPLOY.id, approved: true }])
    expect(runs).toEqual([{ name: 'deploy', input: PRODUCTION }])
    expectAnswersTheBatch(1, [DEPLOY])
    expect(lastTurn(fake.requests[1]!.decoded).results).toEqual([
      { toolUseId: DEPLOY.id, text: 'Deployed web 2.4.1 to production.', isError: false },
    ])
    if (provider.resumes) {
      expect(bodyOf(fake, 1).input).toEqual([
        { type: 'function_call_output', call_id: DEPLOY.id, output: 'Deployed web 2.4.1 to production.' },
      ])
    }
    expect(storedMessages(filename, session.id).map((m) => m.type)).toEqual([
      'user',
      'agent',
      'tool',
      'agent',
    ])
  })
})
