// Restart-safe resume ids, child listing and children closed when the user writes instead
// (DESIGN §10.3), each against real adapters on the fake providers and a SQLite file.
import { type Agent, type AgentConfig, agentTool, createAgent, type Tool } from '@agentx/core'
import { SqlitePersister } from '@agentx/persister-sqlite'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { temporaryFolder } from './helpers/files.js'
import { type LiveProvider, type ProviderName, startProvider } from './helpers/providers.js'
import { storedMessages, storedSession, toolResultsOf } from './helpers/read-store.js'
import { callsTools, fails, says } from './helpers/scenarios.js'

let folder: ReturnType<typeof temporaryFolder>
let filename: string
let providers: LiveProvider[]
let open: Array<{ agent: Agent; persister: SqlitePersister }>

beforeEach(() => {
  folder = temporaryFolder('gaps')
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

/** An agent on the SQLite file; a second call is a restarted application on the same file. */
async function startAgent(config: AgentConfig, adapter: LiveProvider): Promise<Agent> {
  const persister = new SqlitePersister({ filename })
  const agent = createAgent(
    { durability: 'sync', retry: { maxRetries: 0 }, ...config },
    { adapter: adapter.adapter, persister },
  )
  await agent.initialize()
  open.push({ agent, persister })
  return agent
}

describe('a provider session id after a restart', () => {
  // After a restart the kernel gives the stored id only to the adapter of the profile that wrote
  // the last agent message. `activeAgent` changes on a handoff before the target has answered, so
  // it is not the issuer.

  it('after a handoff whose target failed, a restarted agent never sends the coder’s response id to the reviewer’s server', async () => {
    const claude = await provider('claude')
    const coderServer = await provider('openai-responses')
    const reviewerServer = await provider('openai-responses')
    const config = (): AgentConfig => ({
      model: 'claude-planner',
      agents: {
        coder: { adapter: coderServer.adapter, systemPrompt: 'You write code.', handoffs: ['reviewer'] },
        reviewer: { adapter: reviewerServer.adapter, systemPrompt: 'You review code.' },
      },
    })
    const agent = await startAgent(config(), claude)
    const session = await agent.createSession()
    coderServer.fake.enqueue(
      callsTools([{ id: 'call_handoff_1', name: 'transfer_to_reviewer', input: {} }], {
        responseId: 'resp_coder_1',
      }),
    )
    reviewerServer.fake.enqueue(fails('server'))
    await expect(session.send('Write the parser.', { agent: 'coder' })).rejects.toMatchObject({
      name: 'AdapterError',
    })
    expect(reviewerServer.body(0)).not.toHaveProperty('previous_response_id')
    // Stored: the reviewer is active, the id is the coder's.
    expect(storedSession(filename, session.id)).toMatchObject({
      state: 'error',
      activeAgent: 'reviewer',
      providerSessionId: 'resp_coder_1',
    })

    const restarted = await startAgent(config(), claude)
    reviewerServer.fake.enqueue(says('Looks good.', { responseId: 'resp_reviewer_1' }))
    await (await restarted.getSession(session.id))!.send('Review it, please.')
    expect(reviewerServer.body(1).previous_response_id).toBeUndefined()
  })
})

describe('agents as tools', () => {
  it('agent.getSessions({ includeChildren: true }) lists child sessions (DESIGN §10.3)', async () => {
    const claude = await provider('claude')
    const gemini = await provider('gemini')
    const agent = await startAgent(
      {
        model: 'claude-lead',
        tools: [agentTool('researcher')],
        agents: { researcher: { adapter: gemini.adapter } },
      },
      claude,
    )
    const session = await agent.createSession()
    claude.fake.enqueue(
      callsTools([{ id: 'toolu_research_1', name: 'researcher', input: { task: 'Find the port.' } }]),
      says('8080.'),
    )
    gemini.fake.enqueue(says('The port is 8080.'))
    await session.send('Which port?')
    const childId = `${session.id}/toolu_research_1`
    expect(storedSession(filename, childId)?.parentSessionId).toBe(session.id)
    // GetSessionsOptions has no includeChildren today: the option is ignored and the child is missing.
    const listed = await agent.getSessions({ includeChildren: true } as Parameters<Agent['getSessions']>[0])
    expect(listed.map((listedSession) => listedSession.id).sort()).toEqual([session.id, childId].sort())
  })

  it('text sent while the parent waits on a call inside the child closes the child’s call too, so the child is not left waiting for ever', async () => {
    const claude = await provider('claude')
    const gemini = await provider('gemini')
    const publish: Tool<{ text: string }> = {
      name: 'publish',
      description: 'Publishes a finding.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      needsApproval: true,
      execute: () => 'Published.',
    }
    const agent = await startAgent(
      {
        model: 'claude-lead',
        tools: [agentTool('researcher')],
        agents: { researcher: { adapter: gemini.adapter, tools: [publish] } },
      },
      claude,
    )
    const session = await agent.createSession()
    const childId = `${session.id}/toolu_research_1`
    claude.fake.enqueue(
      callsTools([{ id: 'toolu_research_1', name: 'researcher', input: { task: 'Find and publish.' } }]),
    )
    gemini.fake.enqueue(callsTools([{ id: 'call_publish_1', name: 'publish', input: { text: '8080' } }]))
    const first = await session.send('Find the port and publish it.')
    expect(first.pending?.[0]?.sessionId).toBe(childId)

    // The user writes instead of answering (DESIGN §10.1: every pending call gets an isError result).
    claude.fake.enqueue(says('All right, I will not publish.'))
    await session.send('Never mind, do not publish anything.')
    expect(storedSession(filename, session.id)?.state).toBe('idle')
    const parentResults = toolResultsOf(storedMessages(filename, session.id)[2])
    expect(parentResults).toMatchObject([{ toolUseId: 'toolu_research_1', isError: true }])

    // Today the child stays `waiting_input` with its call unanswered, for ever.
    expect(storedSession(filename, childId)?.state).not.toBe('waiting_input')
    const childResults = toolResultsOf(storedMessages(filename, childId)[2])
    expect(childResults).toMatchObject([{ toolUseId: 'call_publish_1', isError: true }])
    expect(await (await agent.getSession(childId))!.getPending()).toEqual([])
  })
})
