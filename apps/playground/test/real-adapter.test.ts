import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  anthropicMessagesDialect,
  type FakeProvider,
  openAIChatDialect,
  startFakeProvider,
} from '@agentx/contract-tests'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Playground, startPlayground } from '../src/start-playground.js'
import { api, deltaText, sendMessage } from './sse.js'

// The real @agentx/adapter-openai, imported dynamically by the playground, against a loopback
// OpenAI-compatible server (never a real provider).
describe('playground with a real adapter package', () => {
  let fake: FakeProvider
  let playground: Playground
  let workspace: string

  beforeAll(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'agentx-playground-real-'))
    fake = await startFakeProvider({ dialect: openAIChatDialect })
    playground = await startPlayground({
      env: { OPENAI_BASE_URL: fake.baseURL, OPENAI_MODELS: 'local-model' },
      workspace,
      port: 0,
      retry: { maxRetries: 0 },
    })
  })

  afterAll(async () => {
    await playground?.close()
    await fake?.close()
    if (workspace !== undefined) await rm(workspace, { recursive: true, force: true })
  })

  it('lists an OPENAI_BASE_URL server as a provider and streams its reply through the real adapter', async () => {
    const { body } = await api(playground.url, 'GET', '/api/providers')
    const provider = body.providers.find((candidate: { id: string }) => candidate.id === 'openai-compatible')
    expect(provider).toMatchObject({ available: true, offline: false, models: ['local-model'] })

    fake.enqueue({
      response: {
        blocks: [{ type: 'text', text: 'Hello from a local model!' }],
        stopReason: 'end_turn',
        usage: { inputTokens: 12, outputTokens: 6 },
        deltaSize: 4,
      },
    })
    const created = await api(playground.url, 'POST', '/api/sessions', { provider: 'openai-compatible' })
    const id = created.body.session.id as string
    const reply = await sendMessage(playground.url, id, 'Hi there')
    expect(deltaText(reply.events)).toBe('Hello from a local model!')
    expect(reply.events.filter((event) => event.event === 'text-delta').length).toBeGreaterThan(1)

    const request = fake.requests[0]!
    expect(request.decoded.model).toBe('local-model')
    expect(request.decoded.apiKey).toBeUndefined()
    expect(request.decoded.messages.at(-1)).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'Hi there' }],
    })
    // Local models may not support tools, so an OpenAI-compatible server is offered none.
    expect(request.decoded.tools).toEqual([])

    const stored = await playground.persister.getMessages(id)
    expect(stored.map((message) => message.type)).toEqual(['user', 'agent'])
    expect(stored[1]?.usage).toMatchObject({ inputTokens: 12, outputTokens: 6, totalTokens: 18 })
  })

  it('shows a provider error with its kind and provider name', async () => {
    fake.enqueue({ httpError: { kind: 'rate_limit' } })
    const created = await api(playground.url, 'POST', '/api/sessions', { provider: 'openai-compatible' })
    const reply = await sendMessage(playground.url, created.body.session.id, 'Hi')
    const error = reply.events.find((event) => event.event === 'error')?.data as {
      error: Record<string, unknown>
    }
    expect(error.error).toMatchObject({ kind: 'rate_limit', status: 429, retryable: true })
    expect(typeof error.error.provider).toBe('string')
  })
})

describe('playground with the real Claude adapter', () => {
  let fake: FakeProvider
  let playground: Playground
  let workspace: string

  beforeAll(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'agentx-playground-claude-'))
    fake = await startFakeProvider({ dialect: anthropicMessagesDialect })
    playground = await startPlayground({
      env: {
        ANTHROPIC_API_KEY: 'sk-ant-loopback-test-key',
        ANTHROPIC_BASE_URL: fake.origin,
        ANTHROPIC_MODELS: 'claude-test',
      },
      workspace,
      port: 0,
      retry: { maxRetries: 0 },
    })
  })

  afterAll(async () => {
    await playground?.close()
    await fake?.close()
    if (workspace !== undefined) await rm(workspace, { recursive: true, force: true })
  })

  it('runs a tool call of a real provider through the demo tools and streams the final answer', async () => {
    fake.enqueue(
      {
        response: {
          blocks: [
            { type: 'text', text: 'Let me compute.' },
            { type: 'tool-call', id: 'toolu_1', name: 'calculator', input: { expression: '6 * 7' } },
          ],
          stopReason: 'tool_use',
          usage: { inputTokens: 20, outputTokens: 10 },
        },
      },
      {
        response: {
          blocks: [{ type: 'text', text: 'It is 42.' }],
          stopReason: 'end_turn',
          usage: { inputTokens: 40, outputTokens: 5 },
        },
      },
    )
    const created = await api(playground.url, 'POST', '/api/sessions', { provider: 'claude' })
    expect(created.body.session).toMatchObject({ provider: 'claude', model: 'claude-test' })
    const reply = await sendMessage(playground.url, created.body.session.id, 'What is 6 * 7?')
    const toolResult = reply.events.find((event) => event.event === 'tool-result')?.data
    expect(toolResult).toMatchObject({ toolUseId: 'toolu_1' })
    expect(JSON.stringify(toolResult?.content)).toContain('\\"result\\":42')
    expect(deltaText(reply.events)).toBe('Let me compute.It is 42.')

    expect(fake.requests).toHaveLength(2)
    expect(fake.requests[0]?.decoded).toMatchObject({
      model: 'claude-test',
      apiKey: 'sk-ant-loopback-test-key',
    })
    expect(fake.requests[0]?.decoded.tools.sort()).toEqual(['calculator', 'get_time'])
    const secondTurn = fake.requests[1]?.decoded.messages.at(-1)
    expect(secondTurn?.content[0]).toMatchObject({ type: 'tool_result', toolUseId: 'toolu_1' })

    const stored = await playground.persister.getMessages(created.body.session.id)
    expect(stored.map((message) => message.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    const everything = JSON.stringify(await playground.persister.getAllSessions()) + JSON.stringify(stored)
    expect(everything).not.toContain('sk-ant-loopback-test-key')
  })
})
