// Profiles with different providers side by side in one session (DESIGN §10.3): a Claude planner
// hands off to an OpenAI coder, through the real adapters against the contract kit's loopback fake
// providers, with the SQLite store. Each test checks what each provider received on the wire and
// what is on disk.
import type { DecodedRequest } from '@agentx/contract-tests'
import {
  type Agent,
  type AgentProfile,
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
import { storedMessageCount, storedMessages, storedSession, storedTurns } from './helpers/read-store.js'
import { callsTools, says } from './helpers/scenarios.js'

const runTests: Tool<{ path: string }> = {
  name: 'run_tests',
  description: 'Runs the tests under a path.',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  execute: (input) => `All tests under ${input.path} pass.`,
}

/** The text of core content blocks (tool results included), joined. */
function textOf(content: string | ContentBlock[]): string {
  if (typeof content === 'string') return content
  return content
    .map((block) =>
      block.type === 'text' ? block.text : block.type === 'tool_result' ? textOf(block.content) : '',
    )
    .join('')
}

/** A decoded request as `[role, block types…, texts]` rows: readable in a failure diff. */
function conversationOf(request: DecodedRequest | undefined): Array<[string, string]> {
  return (request?.messages ?? []).flatMap((message) =>
    message.content.map((block): [string, string] => {
      if (block.type === 'tool_use') return [message.role, `tool_use ${block.id} ${block.name}`]
      if (block.type === 'tool_result') return [message.role, `tool_result ${block.toolUseId}`]
      if (block.type === 'text') return [message.role, block.text]
      return [message.role, block.type]
    }),
  )
}

describe('a Claude planner and an OpenAI coder in one session', () => {
  let folder: ReturnType<typeof temporaryFolder>
  let filename: string
  let providers: LiveProvider[]
  let open: Array<{ agent: Agent; persister: SqlitePersister }>

  beforeEach(() => {
    folder = temporaryFolder('mixed')
    filename = join(folder.path, 'agent.db')
    providers = []
    open = []
  })
  afterEach(async () => {
    for (const { agent, persister } of open) {
      await agent.close()
      await persister.close()
    }
    for (const provider of providers) await provider.fake.close()
    folder.remove()
  })

  async function provider(name: ProviderName): Promise<LiveProvider> {
    const started = await startProvider(name)
    providers.push(started)
    return started
  }

  /** The planner is the top-level profile (`default`, Claude); the other profiles are given. */
  async function startAgent(
    claude: LiveProvider,
    agents: Record<string, AgentProfile>,
    plannerHandoffs: string[],
  ): Promise<Agent> {
    const persister = new SqlitePersister({ filename })
    const agent = createAgent(
      {
        model: 'claude-planner',
        systemPrompt: 'You plan the work and hand the coding over.',
        durability: 'sync',
        retry: { maxRetries: 0 },
        agents: { default: { description: 'Plans the work', handoffs: plannerHandoffs }, ...agents },
      },
      { adapter: claude.adapter, persister },
    )
    await agent.initialize()
    open.push({ agent, persister })
    return agent
  }

  it('the planner hands the same send to the coder, whose first request replays the conversation; later sends resume with the coder’s own response id', async () => {
    const claude = await provider('claude')
    const openai = await provider('openai-responses')
    const agent = await startAgent(
      claude,
      {
        coder: {
          description: 'Writes and tests code',
          model: 'gpt-coder',
          systemPrompt: 'You write code.',
          adapter: openai.adapter,
          tools: [runTests],
          handoffs: ['default'],
        },
      },
      ['coder'],
    )
    const session = await agent.createSession()
    const events: SessionEvent[] = []
    session.subscribe((event) => events.push(event))

    // Send 1: the planner answers and hands over; the coder finishes the same send.
    claude.fake.enqueue(
      callsTools([{ id: 'toolu_plan_1', name: 'transfer_to_coder', input: {} }], {
        text: 'Plan: parse the flag, print details. Over to the coder.',
      }),
    )
    openai.fake.enqueue(says('Added --verbose in cli.ts.', { responseId: 'resp_coder_1' }))
    const first = await session.send('Add a --verbose flag to the CLI.')
    expect(first.text).toBe('Added --verbose in cli.ts.')
    expect(events).toContainEqual({ type: 'handoff', from: 'default', to: 'coder' })
    expect(events.filter((event) => event.type === 'step-start')).toEqual([
      { type: 'step-start', step: 1, agent: 'default', model: 'claude-planner', provider: 'claude' },
      { type: 'step-start', step: 2, agent: 'coder', model: 'gpt-coder', provider: 'openai' },
    ])

    const planner = claude.decoded()[0]!
    expect(planner.model).toBe('claude-planner')
    expect(planner.systemPrompt).toBe('You plan the work and hand the coding over.')
    expect(planner.tools).toEqual(['transfer_to_coder'])
    // The coder's first request: no previous_response_id, the whole conversation replayed.
    expect(openai.fake.requests).toHaveLength(1)
    expect(openai.body(0)).not.toHaveProperty('previous_response_id')
    const coderFirst = openai.decoded()[0]!
    expect(coderFirst.resume).toBeUndefined()
    expect(coderFirst.model).toBe('gpt-coder')
    expect(coderFirst.systemPrompt).toBe('You write code.')
    expect(coderFirst.tools.sort()).toEqual(['run_tests', 'transfer_to_default'])
    expect(conversationOf(coderFirst)).toEqual([
      ['user', 'Add a --verbose flag to the CLI.'],
      ['assistant', 'Plan: parse the flag, print details. Over to the coder.'],
      ['assistant', 'tool_use toolu_plan_1 transfer_to_coder'],
      ['user', 'tool_result toolu_plan_1'],
    ])
    expect(textOf(coderFirst.messages.at(-1)!.content)).toContain('Transferred to coder')

    expect(storedTurns(filename, session.id)).toEqual([
      ['user', null],
      ['agent', 'default'],
      ['tool', null],
      ['agent', 'coder'],
    ])
    expect(storedSession(filename, session.id)).toMatchObject({
      state: 'idle',
      activeAgent: 'coder',
      providerSessionId: 'resp_coder_1',
    })

    // Send 2, without `agent`: the coder answers again, on top of its own response.
    openai.fake.enqueue(says('Added a test for --verbose.', { responseId: 'resp_coder_2' }))
    await session.send('Also add a test.')
    expect(claude.fake.requests).toHaveLength(1)
    expect(openai.body(1).previous_response_id).toBe('resp_coder_1')
    expect(conversationOf(openai.decoded()[1])).toEqual([['user', 'Also add a test.']])

    // Send 3 goes to the planner (stateless Claude: the whole conversation, the coder's turns
    // included), which hands back to the coder: its own id again, with only what came after it.
    claude.fake.enqueue(
      callsTools([{ id: 'toolu_plan_2', name: 'transfer_to_coder', input: {} }], {
        text: 'The plan is done; the coder releases it.',
      }),
    )
    openai.fake.enqueue(says('Released 1.1.0.', { responseId: 'resp_coder_3' }))
    const third = await session.send('Is the plan done?', { agent: 'default' })
    expect(third.text).toBe('Released 1.1.0.')
    const plannerAgain = claude.decoded()[1]!
    expect(conversationOf(plannerAgain)).toEqual([
      ['user', 'Add a --verbose flag to the CLI.'],
      ['assistant', 'Plan: parse the flag, print details. Over to the coder.'],
      ['assistant', 'tool_use toolu_plan_1 transfer_to_coder'],
      ['user', 'tool_result toolu_plan_1'],
      ['assistant', 'Added --verbose in cli.ts.'],
      ['user', 'Also add a test.'],
      ['assistant', 'Added a test for --verbose.'],
      ['user', 'Is the plan done?'],
    ])
    expect(openai.body(2).previous_response_id).toBe('resp_coder_2')
    expect(conversationOf(openai.decoded()[2])).toEqual([
      ['user', 'Is the plan done?'],
      ['assistant', 'The plan is done; the coder releases it.'],
      ['assistant', 'tool_use toolu_plan_2 transfer_to_coder'],
      ['user', 'tool_result toolu_plan_2'],
    ])

    expect(storedTurns(filename, session.id)).toEqual([
      ['user', null],
      ['agent', 'default'],
      ['tool', null],
      ['agent', 'coder'],
      ['user', null],
      ['agent', 'coder'],
      ['user', null],
      ['agent', 'default'],
      ['tool', null],
      ['agent', 'coder'],
    ])
    expect(storedSession(filename, session.id)).toMatchObject({
      activeAgent: 'coder',
      providerSessionId: 'resp_coder_3',
    })
  })

  it('a response id never goes to another adapter, even one that resumes too: a second OpenAI Responses profile replays the history, and so does the first after it', async () => {
    const claude = await provider('claude')
    const coderServer = await provider('openai-responses')
    const reviewerServer = await provider('openai-responses')
    const agent = await startAgent(
      claude,
      {
        coder: { adapter: coderServer.adapter, systemPrompt: 'You write code.', handoffs: ['reviewer'] },
        reviewer: { adapter: reviewerServer.adapter, systemPrompt: 'You review code.' },
      },
      ['coder'],
    )
    const session = await agent.createSession()
    coderServer.fake.enqueue(
      callsTools([{ id: 'call_handoff_1', name: 'transfer_to_reviewer', input: {} }], {
        text: 'Written. Over to review.',
        responseId: 'resp_coder_1',
      }),
    )
    reviewerServer.fake.enqueue(says('Looks good; one nit.', { responseId: 'resp_reviewer_1' }))
    await session.send('Write the parser.', { agent: 'coder' })

    expect(coderServer.body(0)).not.toHaveProperty('previous_response_id')
    // The coder's id is stored, but the reviewer's adapter is another one: it replays.
    expect(reviewerServer.body(0)).not.toHaveProperty('previous_response_id')
    expect(conversationOf(reviewerServer.decoded()[0])).toEqual([
      ['user', 'Write the parser.'],
      ['assistant', 'Written. Over to review.'],
      ['assistant', 'tool_use call_handoff_1 transfer_to_reviewer'],
      ['user', 'tool_result call_handoff_1'],
    ])
    expect(storedSession(filename, session.id)).toMatchObject({
      activeAgent: 'reviewer',
      providerSessionId: 'resp_reviewer_1',
    })

    // Back to the coder: the stored id is the reviewer's now, so the coder replays everything.
    coderServer.fake.enqueue(says('Fixed the nit.', { responseId: 'resp_coder_2' }))
    await session.send('Fix the nit.', { agent: 'coder' })
    expect(coderServer.body(1)).not.toHaveProperty('previous_response_id')
    expect(conversationOf(coderServer.decoded()[1])).toEqual([
      ['user', 'Write the parser.'],
      ['assistant', 'Written. Over to review.'],
      ['assistant', 'tool_use call_handoff_1 transfer_to_reviewer'],
      ['user', 'tool_result call_handoff_1'],
      ['assistant', 'Looks good; one nit.'],
      ['user', 'Fix the nit.'],
    ])
    // And the coder's next send resumes from its own new response.
    coderServer.fake.enqueue(says('Done.', { responseId: 'resp_coder_3' }))
    await session.send('Anything else?')
    expect(coderServer.body(2).previous_response_id).toBe('resp_coder_2')
    expect(conversationOf(coderServer.decoded()[2])).toEqual([['user', 'Anything else?']])
    expect(claude.fake.requests).toHaveLength(0)
    expect(storedTurns(filename, session.id).filter(([type]) => type === 'agent')).toEqual([
      ['agent', 'coder'],
      ['agent', 'reviewer'],
      ['agent', 'coder'],
      ['agent', 'coder'],
    ])
    expect(storedSession(filename, session.id)?.providerSessionId).toBe('resp_coder_3')
  })

  it('an unknown profile name rejects with ValidationError and stores nothing', async () => {
    const claude = await provider('claude')
    const agent = await startAgent(claude, { coder: { systemPrompt: 'You write code.' } }, ['coder'])
    const session = await agent.createSession()
    await expect(session.send('Hello', { agent: 'designer' })).rejects.toMatchObject({
      name: 'ValidationError',
    })
    expect(claude.fake.requests).toHaveLength(0)
    expect(storedMessageCount(filename, session.id)).toBe(0)
    expect(storedSession(filename, session.id)).toMatchObject({ state: 'created', activeAgent: null })
  })

  it('a profile without a model or adapter uses the agent’s; an agent without profiles writes no agentName', async () => {
    const claude = await provider('claude')
    const agent = await startAgent(claude, { reviewer: { systemPrompt: 'You review code.' } }, [])
    const session = await agent.createSession()
    claude.fake.enqueue(says('Reviewed.'))
    await session.send('Review this.', { agent: 'reviewer' })
    expect(claude.decoded()[0]).toMatchObject({ model: 'claude-planner', systemPrompt: 'You review code.' })
    expect(storedTurns(filename, session.id)).toEqual([
      ['user', null],
      ['agent', 'reviewer'],
    ])

    const persister = new SqlitePersister({ filename })
    const plain = createAgent(
      { model: 'claude-plain', durability: 'sync' },
      { adapter: claude.adapter, persister },
    )
    open.push({ agent: plain, persister })
    const other = await plain.createSession()
    claude.fake.enqueue(says('Hello.'))
    await other.send('Hi')
    expect(storedMessages(filename, other.id).map((message) => message.agentName)).toEqual([null, null])
    expect(storedSession(filename, other.id)?.activeAgent).toBeNull()
  })
})
