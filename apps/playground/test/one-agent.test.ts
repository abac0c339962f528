import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AdapterError, type AnyMessage } from '@agentx/core'
import { ScriptedAdapter, textTurn, usage } from '@agentx/core/testing'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Playground, type StartPlaygroundOptions, startPlayground } from '../src/start-playground.js'
import { api, deltaText, retrySend, sendMessage } from './sse.js'

// The playground's one agent (DESIGN §10.3): the demo is its top-level profile, every other
// provider a profile with its own adapter. Two providers here, Claude and Gemini, answer through
// scripted adapters handed to the playground as if their packages had been imported.

let workspace: string
const running: Playground[] = []

beforeEach(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'agentx-playground-one-agent-'))
})

afterEach(async () => {
  await Promise.all(running.splice(0).map((playground) => playground.close()))
  await rm(workspace, { recursive: true, force: true })
})

async function start(
  adapters: { claude?: ScriptedAdapter; gemini?: ScriptedAdapter },
  options: StartPlaygroundOptions = {},
): Promise<Playground> {
  const playground = await startPlayground({
    env: {
      ...(adapters.claude === undefined ? {} : { ANTHROPIC_API_KEY: 'sk-ant-test-key' }),
      ...(adapters.gemini === undefined ? {} : { GEMINI_API_KEY: 'gemini-test-key' }),
    },
    workspace,
    port: 0,
    demoDelayMs: 0,
    retry: { maxRetries: 0 },
    importModule: async (specifier) => {
      if (specifier === '@agentx/adapter-claude') return { createClaudeAdapter: () => adapters.claude }
      if (specifier === '@agentx/adapter-gemini') return { createGeminiAdapter: () => adapters.gemini }
      throw new Error(`unexpected import of ${specifier}`)
    },
    ...options,
  })
  running.push(playground)
  return playground
}

async function create(playground: Playground, body: Record<string, unknown>): Promise<string> {
  const created = await api(playground.url, 'POST', '/api/sessions', body)
  expect(created.status).toBe(201)
  return created.body.session.id as string
}

const toolNames = (adapter: ScriptedAdapter, call: number) =>
  (adapter.calls[call]?.options.tools ?? []).map((tool) => tool.name).sort()

describe('one agent serving every provider', () => {
  it('sends each session to its provider’s adapter, with the session’s model and system prompt and that provider’s tools', async () => {
    const claude = new ScriptedAdapter([textTurn('Claude here.'), textTurn('Claude again.')], {
      name: 'claude',
    })
    const gemini = new ScriptedAdapter([textTurn('Gemini here.')], { name: 'gemini' })
    const playground = await start({ claude, gemini })
    const claudeId = await create(playground, {
      provider: 'claude',
      model: 'claude-test-model',
      systemPrompt: 'Be terse.',
    })
    const geminiId = await create(playground, { provider: 'gemini', model: 'gemini-test-model' })
    const demoId = await create(playground, { provider: 'demo', systemPrompt: 'Demo prompt.' })

    expect(deltaText((await sendMessage(playground.url, claudeId, 'hi claude')).events)).toBe('Claude here.')
    expect(deltaText((await sendMessage(playground.url, geminiId, 'hi gemini')).events)).toBe('Gemini here.')
    expect(deltaText((await sendMessage(playground.url, demoId, 'hello')).events)).toContain('offline demo')

    expect(claude.calls).toHaveLength(1)
    expect(claude.calls[0]).toMatchObject({
      prompt: 'hi claude',
      options: { model: 'claude-test-model', systemPrompt: 'Be terse.' },
    })
    // Its own tools: not the demo's approval, question, handoff or sub-agent tools.
    expect(toolNames(claude, 0)).toEqual(['calculator', 'get_time'])
    expect(gemini.calls).toHaveLength(1)
    expect(gemini.calls[0]?.options.model).toBe('gemini-test-model')
    expect(gemini.calls[0]?.options.systemPrompt).toBeUndefined()
    expect(toolNames(gemini, 0)).toEqual(['calculator', 'get_time'])

    // Replies name the profile that wrote them; the view leaves out a provider's one profile.
    const stored = await playground.persister.getMessages(claudeId)
    expect(stored.map((message) => [message.type, message.agentName])).toEqual([
      ['user', undefined],
      ['agent', 'claude'],
    ])
    const detail = await api(playground.url, 'GET', `/api/sessions/${claudeId}`)
    expect(detail.body.session).toMatchObject({
      provider: 'claude',
      canSend: true,
      systemPrompt: 'Be terse.',
    })
    expect(detail.body.session.activeAgent).toBeUndefined()
    expect((await api(playground.url, 'GET', `/api/sessions/${demoId}`)).body.session.activeAgent).toBe(
      'default',
    )

    // A second send continues with the same provider.
    await sendMessage(playground.url, claudeId, 'and again')
    expect(claude.calls).toHaveLength(2)
    expect(claude.calls[1]?.options.history.map((message: AnyMessage) => message.type)).toEqual([
      'user',
      'agent',
    ])
    expect(gemini.calls).toHaveLength(1)
  })

  it('lists every provider’s sessions through the agent, filtered by provider, state and text', async () => {
    const claude = new ScriptedAdapter([textTurn('ok')], { name: 'claude' })
    const playground = await start({ claude })
    const claudeId = await create(playground, { provider: 'claude' })
    const demoId = await create(playground, { provider: 'demo' })
    await sendMessage(playground.url, claudeId, 'a question for claude')
    await sendMessage(playground.url, demoId, '/delegate')
    const ids = async (query: string) =>
      (
        (await api(playground.url, 'GET', `/api/sessions${query}`)).body.sessions as Array<{ id: string }>
      ).map((session) => session.id)
    // The sub-agent's child session is left out, as the agent leaves children out.
    expect((await ids('')).sort()).toEqual([claudeId, demoId].sort())
    expect(await ids('?provider=claude')).toEqual([claudeId])
    expect(await ids('?provider=demo')).toEqual([demoId])
    expect(await ids('?provider=gemini')).toEqual([])
    expect(await ids('?provider=claude&state=error')).toEqual([])
    expect(await ids('?q=for%20claude')).toEqual([claudeId])
    expect((await api(playground.url, 'GET', '/api/sessions?provider=')).status).toBe(200)
    expect((await api(playground.url, 'GET', `/api/sessions?provider=${'x'.repeat(101)}`)).status).toBe(400)
  })

  it('refuses a profile of another provider, writing nothing', async () => {
    const claude = new ScriptedAdapter([], { name: 'claude' })
    const playground = await start({ claude })
    const claudeId = await create(playground, { provider: 'claude' })
    const demoId = await create(playground, { provider: 'demo' })
    for (const [id, agent] of [
      [claudeId, 'billing'],
      [claudeId, 'default'],
      [demoId, 'claude'],
      [demoId, 'nobody'],
    ] as const) {
      const refused = await sendMessage(playground.url, id, 'hi', undefined, { agent })
      expect(refused).toMatchObject({ status: 400, body: { error: { code: 'VALIDATION' } } })
    }
    expect(claude.calls).toHaveLength(0)
    expect(await playground.persister.getMessages(claudeId)).toEqual([])
    expect(await playground.persister.getMessages(demoId)).toEqual([])
    // The demo's own profiles can be picked.
    const billing = await sendMessage(playground.url, demoId, 'my invoice', undefined, { agent: 'billing' })
    expect(deltaText(billing.events)).toContain('Billing agent here')
  })

  it('retries a failed send with the session’s provider, and never compacts a real provider’s sessions with the demo’s threshold', async () => {
    const claude = new ScriptedAdapter(
      [
        textTurn('One.'),
        textTurn('Two.'),
        textTurn('Three, in a long context.', { usage: usage(150_000, 10) }),
        {
          events: [],
          error: new AdapterError('overloaded', { kind: 'server', provider: 'claude', status: 529 }),
        },
        textTurn('Back again.'),
      ],
      { name: 'claude' },
    )
    const playground = await start({ claude })
    const id = await create(playground, { provider: 'claude' })
    for (const text of ['first', 'second', 'third']) await sendMessage(playground.url, id, text)
    // The demo's compaction (100,000 tokens, 4 messages kept) would summarise the first exchanges now.
    const failed = await sendMessage(playground.url, id, 'next')
    expect(failed.events.map((event) => event.event)).toContain('error')
    const retried = await retrySend(playground.url, id)
    expect(deltaText(retried.events)).toBe('Back again.')
    // Five model requests, all Claude's replies: no compaction summary in between, and the retry
    // carries no demo provider options.
    expect(claude.calls).toHaveLength(5)
    expect(claude.calls.map((call) => call.prompt)).toEqual(['first', 'second', 'third', 'next', 'next'])
    expect(claude.calls[4]?.options.providerOptions).toBeUndefined()
    const stored = await playground.persister.getMessages(id)
    expect(stored.filter((message) => message.type === 'system')).toEqual([])
    expect(stored.filter((message) => message.type === 'user')).toHaveLength(4)
  })

  it('keeps a session of a provider that is not configured any more readable, exportable and deletable', async () => {
    const claude = new ScriptedAdapter([textTurn('Remember me.')], { name: 'claude' })
    const first = await start({ claude })
    const id = await create(first, { provider: 'claude' })
    await sendMessage(first.url, id, 'hello claude')
    await first.close()
    running.splice(running.indexOf(first), 1)

    const second = await start({})
    const listed = (await api(second.url, 'GET', '/api/sessions')).body.sessions
    expect(listed).toEqual([expect.objectContaining({ id, provider: 'claude', canSend: false })])
    const detail = await api(second.url, 'GET', `/api/sessions/${id}`)
    expect(detail.body.messages.map((message: AnyMessage) => message.type)).toEqual(['user', 'agent'])
    const exported = await api(second.url, 'GET', `/api/sessions/${id}/export`)
    expect(exported.body.messages).toHaveLength(2)
    expect(exported.body.session).toMatchObject({ id, metadata: { provider: 'claude' } })
    // It never falls back to another provider's adapter.
    expect(await sendMessage(second.url, id, 'still there?')).toMatchObject({
      status: 503,
      body: { error: { code: 'CONFIGURATION' } },
    })
    expect(await second.persister.getMessages(id)).toHaveLength(2)
    expect((await api(second.url, 'DELETE', `/api/sessions/${id}`)).status).toBe(204)
    expect(await second.persister.getSession(id)).toBeNull()
  })
})
