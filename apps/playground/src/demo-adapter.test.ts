import type { AdapterMessage, ContentBlock } from '@agentx/core'
import { InMemoryPersister, createAgent, isAdapterError } from '@agentx/core'
import { describe, expect, it } from 'vitest'
import {
  DEMO_COMPACT_INPUT_TOKENS,
  DEMO_JSON_OUTPUT,
  DEMO_RETRY_OPTIONS,
  DemoAdapter,
} from './demo-adapter.js'
import { createDemoTools } from './demo-tools.js'

async function collect(stream: AsyncIterable<AdapterMessage>): Promise<AdapterMessage[]> {
  const events: AdapterMessage[] = []
  for await (const event of stream) events.push(event)
  return events
}

describe('DemoAdapter', () => {
  const adapter = new DemoAdapter({ delayMs: 0 })

  it('streams a reply word by word, then one message whose text equals the deltas, with usage', async () => {
    const events = await collect(adapter.stream('hello', { model: 'agentx-demo-1', history: [] }))
    const deltas = events.filter((event) => event.type === 'text-delta')
    expect(deltas.length).toBeGreaterThan(10)
    const message = events.at(-1) as Extract<AdapterMessage, { type: 'message' }>
    expect(message.type).toBe('message')
    expect(message.stopReason).toBe('end_turn')
    expect(message.content).toEqual([{ type: 'text', text: deltas.map((delta) => delta.text).join('') }])
    const usage = events.find((event) => event.type === 'usage')
    expect(usage).toMatchObject({ type: 'usage', usage: { totalTokens: expect.any(Number) } })
  })

  it('quotes a long message without splitting an emoji in half', async () => {
    const events = await collect(adapter.stream('😀'.repeat(60), { model: 'm', history: [] }))
    const message = events.at(-1) as Extract<AdapterMessage, { type: 'message' }>
    const text = (message.content[0] as { text: string }).text
    // Before: the quote ended in a lone high surrogate, shown as U+FFFD.
    expect(text).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/)
    expect(text).toContain('😀…')
  })

  it('calls the calculator tool for a calculation and the clock tool for the time', async () => {
    const calc = await collect(adapter.stream('what is 2 ^ 10 - 24?', { model: 'm', history: [] }))
    expect(calc.find((event) => event.type === 'tool-call')).toMatchObject({
      name: 'calculator',
      input: { expression: '2 ^ 10 - 24' },
    })
    expect(calc.at(-1)).toMatchObject({ type: 'message', stopReason: 'tool_use' })
    const time = await collect(
      adapter.stream('What time is it in Europe/Paris?', { model: 'm', history: [] }),
    )
    expect(time.find((event) => event.type === 'tool-call')).toMatchObject({
      name: 'get_time',
      input: { timeZone: 'Europe/Paris' },
    })
  })

  it('streams thinking before the answer when asked why', async () => {
    const events = await collect(adapter.stream('why is the sky blue', { model: 'm', history: [] }))
    const firstText = events.findIndex((event) => event.type === 'text-delta')
    const lastThinking = events.findLastIndex((event) => event.type === 'thinking-delta')
    expect(lastThinking).toBeGreaterThanOrEqual(0)
    expect(lastThinking).toBeLessThan(firstText)
    const content = (events.at(-1) as { content: ContentBlock[] }).content
    expect(content.map((block) => block.type)).toEqual(['thinking', 'text'])
  })

  it('fails /error with a retryable rate_limit error every time, and succeeds for a request marked as a retry', async () => {
    const attempt = (text: string) =>
      collect(adapter.stream(text, { model: 'm', history: [] })).catch((caught: unknown) => caught)
    const first = await attempt('/error')
    expect(isAdapterError(first) && [first.kind, first.retryable, first.status, first.provider]).toEqual([
      'rate_limit',
      true,
      429,
      'demo',
    ])
    // The agent's automatic retries fail too, so the error reaches the user.
    expect(isAdapterError(await attempt('/error'))).toBe(true)
    const auth = await attempt('/error auth')
    expect(isAdapterError(auth) && [auth.kind, auth.retryable]).toEqual(['authentication', false])
    const retried = await collect(
      adapter.stream('/error', { model: 'm', history: [], providerOptions: DEMO_RETRY_OPTIONS }),
    )
    expect(retried.at(-1)).toMatchObject({ type: 'message', stopReason: 'end_turn' })
  })

  it('scripts the tour commands: approval, question, handoff, delegation, JSON and a full context', async () => {
    const tools = ['deploy_service', 'ask_user', 'transfer_to_billing', 'researcher', 'get_time'].map(
      (name) => ({
        name,
        description: name,
        inputSchema: { type: 'object' },
      }),
    )
    const callOf = async (text: string, systemPrompt?: string) => {
      const events = await collect(
        adapter.stream(text, {
          model: 'm',
          history: [],
          tools,
          ...(systemPrompt === undefined ? {} : { systemPrompt }),
        }),
      )
      return events.find((event) => event.type === 'tool-call') as
        | { name: string; input: Record<string, unknown> }
        | undefined
    }
    expect(await callOf('/approve')).toMatchObject({
      name: 'deploy_service',
      input: { environment: 'production' },
    })
    expect(await callOf('/ask')).toMatchObject({ name: 'ask_user', input: { question: expect.any(String) } })
    expect(await callOf('/handoff')).toMatchObject({ name: 'transfer_to_billing' })
    expect(await callOf('/delegate')).toMatchObject({
      name: 'researcher',
      input: { task: expect.any(String) },
    })
    expect(await callOf('/tool')).toMatchObject({ name: 'get_time' })
    const json = await collect(adapter.stream('/json', { model: 'm', history: [] }))
    const text = json
      .filter((event) => event.type === 'text-delta')
      .map((event) => event.text)
      .join('')
    expect(JSON.parse(text)).toEqual(DEMO_JSON_OUTPUT)
    const compact = await collect(adapter.stream('/compact', { model: 'm', history: [], tools }))
    expect(compact.find((event) => event.type === 'usage')).toMatchObject({
      usage: { inputTokens: DEMO_COMPACT_INPUT_TOKENS },
    })
    // Without the tool, the command says so instead of calling a tool the agent lacks.
    const bare = await collect(adapter.stream('/approve', { model: 'm', history: [] }))
    expect(bare.some((event) => event.type === 'tool-call')).toBe(false)
  })

  it('ends with an aborted AdapterError and yields nothing more once its signal aborts', async () => {
    const slow = new DemoAdapter({ delayMs: 2 })
    const controller = new AbortController()
    const events: AdapterMessage[] = []
    const error = await (async () => {
      for await (const event of slow.stream('tell me a long story', {
        model: 'm',
        history: [],
        signal: controller.signal,
      })) {
        events.push(event)
        if (events.length === 3) controller.abort()
      }
    })().catch((caught: unknown) => caught)
    expect(isAdapterError(error) && error.kind).toBe('aborted')
    expect(events).toHaveLength(3)
    const already = await collect(
      slow.stream('hi', { model: 'm', history: [], signal: controller.signal }),
    ).catch((caught: unknown) => caught)
    expect(isAdapterError(already) && already.kind).toBe('aborted')
  })

  it('runs a full tool loop through a real agent: call, result, final answer, all persisted', async () => {
    const persister = new InMemoryPersister()
    const agent = createAgent({ model: 'agentx-demo-1', tools: createDemoTools() }, { adapter, persister })
    const session = await agent.createSession()
    const result = await session.send('compute 12 * (3 + 4)')
    expect(result.text).toContain('**84**')
    const stored = await persister.getMessages(session.id)
    expect(stored.map((message) => message.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    expect(JSON.stringify(stored[2]?.content)).toContain('\\"result\\":84')
    await agent.close()
  })
})
