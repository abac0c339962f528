import {
  AdapterError,
  type AgentConfig,
  agentTool,
  createAgent,
  InMemoryPersister,
  type Tool,
} from '@agentx/core'
import { ScriptedAdapter, type ScriptedTurn, textTurn, toolCallTurn, usage } from '@agentx/core/testing'
import type { AdapterMessage } from '@agentx/core'
import { context, SpanKind, SpanStatusCode } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { afterEach, describe, expect, it } from 'vitest'
import { createHarness, ms, parentOf } from '../test/otel-harness.js'
import { instrumentAgent } from './index.js'

const SECRET = 'the-user-secret-7f3a'

const lookup: Tool = {
  name: 'lookup',
  description: 'Looks a word up.',
  inputSchema: { type: 'object', properties: { word: { type: 'string' } } },
  execute: (input) => `definition of ${(input as { word: string }).word}`,
}

/** A tool that needs an approval. */
const pay: Tool = {
  name: 'pay',
  description: 'Pays.',
  inputSchema: { type: 'object' },
  needsApproval: true,
  execute: () => 'paid',
}

const stops: Array<() => void | Promise<void>> = []
afterEach(async () => {
  while (stops.length > 0) await stops.pop()!()
})

function setup(
  turns: Array<AdapterMessage[] | ScriptedTurn>,
  options: {
    adapterName?: string
    config?: Partial<AgentConfig>
    recordContent?: boolean
    providerName?: string
    agentName?: string
  } = {},
) {
  const harness = createHarness()
  const adapter = new ScriptedAdapter(turns, { name: options.adapterName ?? 'claude' })
  const persister = new InMemoryPersister()
  const agent = createAgent(
    { model: 'model-a', retry: { maxRetries: 0 }, tools: [lookup], ...options.config },
    { adapter, persister },
  )
  const stop = instrumentAgent(agent, {
    tracerProvider: harness.tracerProvider,
    meterProvider: harness.meterProvider,
    ...(options.recordContent === undefined ? {} : { recordContent: options.recordContent }),
    ...(options.providerName === undefined ? {} : { providerName: options.providerName }),
    ...(options.agentName === undefined ? {} : { agentName: options.agentName }),
  })
  stops.push(() => agent.close(), stop)
  return { harness, agent, adapter, persister, stop }
}

const toolThenAnswer = (): AdapterMessage[][] => [
  toolCallTurn([{ id: 'call-1', name: 'lookup', input: { word: SECRET } }], { usage: usage(100, 20) }),
  textTurn(`The answer about ${SECRET}.`, { usage: usage(150, 30, { cacheReadTokens: 90 }) }),
]

describe('spans of a send', () => {
  it('traces invoke_agent > chat, execute_tool, chat with the GenAI attributes, parented explicitly', async () => {
    const { harness, agent } = setup(toolThenAnswer())
    const session = await agent.createSession()
    await session.send(`What is ${SECRET}?`)

    const spans = await harness.spans()
    expect(spans.map((span) => span.name)).toEqual([
      'chat model-a',
      'execute_tool lookup',
      'chat model-a',
      'invoke_agent default',
    ])
    const invoke = await harness.span('invoke_agent default')
    const [chat1, tool, chat2] = spans as [typeof invoke, typeof invoke, typeof invoke]

    expect(invoke.kind).toBe(SpanKind.INTERNAL)
    expect(parentOf(invoke)).toBeUndefined()
    expect(invoke.attributes).toEqual({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.conversation.id': session.id,
      'gen_ai.agent.name': 'default',
      'gen_ai.request.model': 'model-a',
      'gen_ai.usage.input_tokens': 250,
      'gen_ai.usage.output_tokens': 50,
      'gen_ai.usage.cache_read.input_tokens': 90,
      'gen_ai.response.finish_reasons': ['end_turn'],
    })
    expect(invoke.status.code).toBe(SpanStatusCode.UNSET)

    for (const child of [chat1, tool, chat2]) {
      expect(parentOf(child)).toBe(invoke.spanContext().spanId)
      expect(child.spanContext().traceId).toBe(invoke.spanContext().traceId)
    }
    expect(chat1.kind).toBe(SpanKind.CLIENT)
    expect(chat1.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.conversation.id': session.id,
      'gen_ai.request.model': 'model-a',
      'gen_ai.usage.input_tokens': 100,
      'gen_ai.usage.output_tokens': 20,
      'gen_ai.response.finish_reasons': ['tool_use'],
    })
    expect(chat2.attributes['gen_ai.usage.cache_read.input_tokens']).toBe(90)
    expect(chat2.attributes['gen_ai.response.finish_reasons']).toEqual(['end_turn'])
    expect(tool.kind).toBe(SpanKind.INTERNAL)
    expect(tool.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup',
      'gen_ai.tool.call.id': 'call-1',
      'gen_ai.tool.type': 'function',
      'gen_ai.conversation.id': session.id,
    })
    expect(tool.status.code).toBe(SpanStatusCode.UNSET)

    // The timeline: each step inside the send, in order, none overlapping.
    expect(ms(chat1.startTime)).toBeGreaterThanOrEqual(ms(invoke.startTime))
    expect(ms(chat1.endTime)).toBeLessThanOrEqual(ms(tool.startTime))
    expect(ms(tool.endTime)).toBeLessThanOrEqual(ms(chat2.startTime))
    expect(ms(chat2.endTime)).toBeLessThanOrEqual(ms(invoke.endTime))
  })

  it('records no content by default: no prompt, reply, tool input or result in any attribute or event', async () => {
    const { harness, agent } = setup(toolThenAnswer())
    const session = await agent.createSession()
    await session.send(`What is ${SECRET}?`)
    const recorded = JSON.stringify(
      (await harness.spans()).map((span) => [span.attributes, span.events, span.status]),
    )
    expect(recorded).not.toContain(SECRET)
    expect(recorded).not.toContain('gen_ai.input.messages')
    expect(recorded).not.toContain('gen_ai.tool.call.result')
  })

  it('records content in the conventions’ message format with recordContent', async () => {
    const { harness, agent } = setup(toolThenAnswer(), { recordContent: true })
    const session = await agent.createSession()
    await session.send(`What is ${SECRET}?`)
    const [chat1, tool, chat2] = await harness.spans()
    const invoke = await harness.span('invoke_agent default')

    expect(JSON.parse(invoke.attributes['gen_ai.input.messages'] as string)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: `What is ${SECRET}?` }] },
    ])
    expect(JSON.parse(invoke.attributes['gen_ai.output.messages'] as string)).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'text', content: `The answer about ${SECRET}.` }],
        finish_reason: 'end_turn',
      },
    ])
    expect(JSON.parse(chat1!.attributes['gen_ai.input.messages'] as string)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: `What is ${SECRET}?` }] },
    ])
    expect(JSON.parse(chat1!.attributes['gen_ai.output.messages'] as string)).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'call-1', name: 'lookup', arguments: { word: SECRET } }],
        finish_reason: 'tool_use',
      },
    ])
    expect(JSON.parse(tool!.attributes['gen_ai.tool.call.arguments'] as string)).toEqual({ word: SECRET })
    expect(tool!.attributes['gen_ai.tool.call.result']).toBe(`definition of ${SECRET}`)
    expect(JSON.parse(chat2!.attributes['gen_ai.input.messages'] as string)).toEqual([
      {
        role: 'tool',
        parts: [{ type: 'tool_call_response', id: 'call-1', response: `definition of ${SECRET}` }],
      },
    ])
    // The chat span still ends when the request ended, not when its reply was persisted.
    expect(ms(chat1!.endTime)).toBeLessThanOrEqual(ms(tool!.startTime))
  })

  it('names the agent and the provider as configured', async () => {
    const { harness, agent } = setup([textTurn('hi')], { providerName: 'aws.bedrock', agentName: 'support' })
    await agent.chat('hello')
    const invoke = await harness.span('invoke_agent support')
    expect(invoke.attributes['gen_ai.agent.name']).toBe('support')
    expect(invoke.attributes['gen_ai.provider.name']).toBe('aws.bedrock')
    expect((await harness.span('chat model-a')).attributes['gen_ai.provider.name']).toBe('aws.bedrock')
  })

  it.each([
    ['gemini', 'gcp.gemini'],
    ['openai', 'openai'],
    ['my-proxy', 'my-proxy'],
  ])('maps the adapter name %s to gen_ai.provider.name %s', async (adapterName, provider) => {
    const { harness, agent } = setup([textTurn('hi'), textTurn('again')], { adapterName })
    const session = await agent.createSession()
    await session.send('one')
    await session.send('two')
    for (const span of await harness.spans()) expect(span.attributes['gen_ai.provider.name']).toBe(provider)
  })

  it('nests the send under the caller’s span when the application registered a context manager', async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    try {
      const { harness, agent } = setup([textTurn('hi')])
      const session = await agent.createSession()
      await harness.tracerProvider.getTracer('app').startActiveSpan('POST /chat', async (request) => {
        await session.send('hello')
        request.end()
      })
      const request = await harness.span('POST /chat')
      const invoke = await harness.span('invoke_agent default')
      expect(parentOf(invoke)).toBe(request.spanContext().spanId)
      expect(parentOf(await harness.span('chat model-a'))).toBe(invoke.spanContext().spanId)
    } finally {
      context.disable()
    }
  })

  it('keeps the sends of concurrent sessions in separate traces', async () => {
    const { harness, agent } = setup([
      { events: textTurn('first'), delayMs: 20 },
      { events: textTurn('second'), delayMs: 5 },
    ])
    const [a, b] = await Promise.all([agent.createSession(), agent.createSession()])
    await Promise.all([a.send('to a'), b.send('to b')])
    const invokes = (await harness.spans()).filter((span) => span.name.startsWith('invoke_agent'))
    expect(invokes).toHaveLength(2)
    for (const invoke of invokes) {
      const conversation = invoke.attributes['gen_ai.conversation.id']
      const chats = (await harness.spans()).filter(
        (span) => span.attributes['gen_ai.conversation.id'] === conversation && span.name.startsWith('chat'),
      )
      expect(chats).toHaveLength(1)
      expect(parentOf(chats[0]!)).toBe(invoke.spanContext().spanId)
      expect(chats[0]!.spanContext().traceId).toBe(invoke.spanContext().traceId)
    }
    expect(new Set(invokes.map((span) => span.spanContext().traceId)).size).toBe(2)
    expect(new Set(invokes.map((span) => span.attributes['gen_ai.conversation.id']))).toEqual(
      new Set([a.id, b.id]),
    )
  })
})

describe('failures', () => {
  it('marks a failed send and its request with error.type and the exception', async () => {
    const failure = new AdapterError('The model rejected the request.', {
      kind: 'invalid_request',
      provider: 'claude',
      status: 400,
    })
    const { harness, agent } = setup([{ events: [], error: failure }])
    const session = await agent.createSession()
    await expect(session.send('hi')).rejects.toThrow('rejected')
    const invoke = await harness.span('invoke_agent default')
    const chat = await harness.span('chat model-a')
    expect(invoke.status).toEqual({ code: SpanStatusCode.ERROR, message: 'The model rejected the request.' })
    expect(invoke.attributes['error.type']).toBe('ADAPTER_INVALID_REQUEST')
    expect(invoke.events.map((event) => [event.name, event.attributes?.['exception.type']])).toEqual([
      ['exception', 'ADAPTER_INVALID_REQUEST'],
    ])
    expect(chat.status.code).toBe(SpanStatusCode.ERROR)
    expect(chat.attributes['error.type']).toBe('ADAPTER_INVALID_REQUEST')
    expect(chat.attributes['gen_ai.response.finish_reasons']).toBeUndefined()
    const duration = await harness.histogram('gen_ai.client.operation.duration')
    expect(duration.points.map((point) => point.attributes['error.type']).sort()).toEqual([
      'ADAPTER_INVALID_REQUEST',
      'ADAPTER_INVALID_REQUEST',
    ])
  })

  it('keeps an OUTPUT_INVALID message, which quotes the reply, out of the spans unless recordContent', async () => {
    const schema = {
      type: 'object',
      properties: { name: { type: 'string' } },
      required: ['name'],
      additionalProperties: false,
    }
    for (const recordContent of [false, true]) {
      const { harness, agent } = setup([textTurn(`{"name":"x","${SECRET}":1}`)], { recordContent })
      const session = await agent.createSession()
      await expect(session.send('hi', { output: { schema } })).rejects.toMatchObject({
        code: 'OUTPUT_INVALID',
      })
      const invoke = await harness.span('invoke_agent default')
      expect(invoke.status.code).toBe(SpanStatusCode.ERROR)
      expect(invoke.attributes['error.type']).toBe('OUTPUT_INVALID')
      expect(invoke.events.map((event) => event.attributes?.['exception.type'])).toEqual(['OUTPUT_INVALID'])
      const recorded = JSON.stringify(
        (await harness.spans()).map((span) => [span.attributes, span.events, span.status]),
      )
      if (recordContent) expect(invoke.status.message).toContain(SECRET)
      else {
        expect(recorded).not.toContain(SECRET)
        expect(invoke.status.message).toMatch(/OUTPUT_INVALID.*recordContent is off/)
      }
    }
  })

  it('shows retries as span events on the model request', async () => {
    const limited = () =>
      new AdapterError('Slow down.', { kind: 'rate_limit', provider: 'claude', status: 429, retryAfterMs: 1 })
    const { harness, agent } = setup(
      [{ events: [], error: limited() }, { events: [], error: limited() }, textTurn('finally')],
      { config: { retry: { maxRetries: 3, initialDelayMs: 1, maxDelayMs: 5 } } },
    )
    await agent.chat('hi')
    const chat = await harness.span('chat model-a')
    expect(chat.events.map((event) => [event.name, event.attributes])).toEqual([
      [
        'agentx.retry',
        { 'agentx.retry.attempt': 1, 'agentx.retry.delay_ms': 1, 'error.type': 'ADAPTER_RATE_LIMIT' },
      ],
      [
        'agentx.retry',
        { 'agentx.retry.attempt': 2, 'agentx.retry.delay_ms': 1, 'error.type': 'ADAPTER_RATE_LIMIT' },
      ],
    ])
    expect(chat.status.code).toBe(SpanStatusCode.UNSET)
  })

  it('shows exhausted retries and ends the send with the last error', async () => {
    const limited = () =>
      new AdapterError('Overloaded.', { kind: 'overloaded', provider: 'claude', status: 529 })
    const { harness, agent } = setup(
      [
        { events: [], error: limited() },
        { events: [], error: limited() },
      ],
      {
        config: { retry: { maxRetries: 1, initialDelayMs: 1, maxDelayMs: 2 } },
      },
    )
    const session = await agent.createSession()
    await expect(session.send('hi')).rejects.toThrow('Overloaded')
    const chat = await harness.span('chat model-a')
    expect(chat.events.map((event) => event.name)).toEqual(['agentx.retry', 'agentx.retries_exhausted'])
    expect(chat.attributes['error.type']).toBe('ADAPTER_OVERLOADED')
    expect((await harness.span('invoke_agent default')).attributes['error.type']).toBe('ADAPTER_OVERLOADED')
  })

  it('marks a tool that failed with error.type tool_error, and its text only with recordContent', async () => {
    const broken: Tool = {
      name: 'lookup',
      description: 'Always fails.',
      inputSchema: { type: 'object' },
      execute: () => {
        throw new Error(`no entry for ${SECRET}`)
      },
    }
    for (const recordContent of [false, true]) {
      const { harness, agent } = setup(
        [toolCallTurn([{ id: 'c1', name: 'lookup', input: {} }]), textTurn('sorry')],
        { config: { tools: [broken] }, recordContent },
      )
      await agent.chat('hi')
      const tool = await harness.span('execute_tool lookup')
      expect(tool.attributes['error.type']).toBe('tool_error')
      expect(tool.status.code).toBe(SpanStatusCode.ERROR)
      expect(tool.status.message).toBe(recordContent ? `no entry for ${SECRET}` : undefined)
      expect((await harness.span('invoke_agent default')).status.code).toBe(SpanStatusCode.UNSET)
    }
  })

  it('gives a call that waits for an approval its execute_tool span in the send that runs it, not in the one that waits', async () => {
    let ran = 0
    const guarded: Tool = {
      name: 'lookup',
      description: 'Needs an approval.',
      inputSchema: { type: 'object' },
      needsApproval: true,
      execute: () => {
        ran += 1
        return 'looked up'
      },
    }
    const { harness, agent } = setup(
      [toolCallTurn([{ id: 'c1', name: 'lookup', input: {} }]), textTurn('done')],
      { config: { tools: [guarded] } },
    )
    const session = await agent.createSession()
    await session.send('hi')
    // Before, the waiting send ended an execute_tool span (status unset) for a tool that never ran.
    expect((await harness.spans()).map((span) => span.name)).toEqual(['chat model-a', 'invoke_agent default'])
    await session.send([{ type: 'tool_approval', toolUseId: 'c1', approved: true }])
    expect(ran).toBe(1)
    const spans = await harness.spans()
    const tools = spans.filter((span) => span.name === 'execute_tool lookup')
    expect(tools).toHaveLength(1)
    const answering = spans.filter((span) => span.name === 'invoke_agent default')[1]!
    expect(parentOf(tools[0]!)).toBe(answering.spanContext().spanId)
    expect(tools[0]!.attributes['gen_ai.tool.call.id']).toBe('c1')
    expect(ms(tools[0]!.startTime)).toBeGreaterThanOrEqual(ms(answering.startTime))
    expect(tools[0]!.status.code).toBe(SpanStatusCode.UNSET)
  })

  it('records agentx.input_required and the finish reason on the invoke_agent of a send that stops for input', async () => {
    const guarded: Tool = {
      name: 'lookup',
      description: 'Needs an approval.',
      inputSchema: { type: 'object' },
      needsApproval: true,
      execute: () => 'looked up',
    }
    const { harness, agent } = setup(
      [toolCallTurn([{ id: 'c1', name: 'lookup', input: {} }], { usage: usage(40, 6) }), textTurn('done')],
      { config: { tools: [guarded] } },
    )
    const session = await agent.createSession()
    const result = await session.send('hi')
    expect(result.pending).toHaveLength(1)
    const invoke = (await harness.spans()).find((span) => span.name === 'invoke_agent default')!
    // Before, the span ended at `state: waiting_input`, so the `input-required` that follows found none.
    expect(invoke.events.map((event) => event.name)).toEqual(['agentx.input_required'])
    expect(invoke.attributes['gen_ai.response.finish_reasons']).toEqual(['tool_use'])
    expect(invoke.attributes['gen_ai.usage.input_tokens']).toBe(40)
    expect(invoke.status.code).toBe(SpanStatusCode.UNSET)
  })

  it('records agentx.input_required on the sub-agent’s invoke_agent when the wait is in a child session', async () => {
    const { harness, agent } = setup(
      [
        toolCallTurn([{ id: 'p1', name: 'researcher', input: { task: 'pay' } }]),
        toolCallTurn([{ id: 'k1', name: 'pay', input: {} }]),
        textTurn('child paid'),
        textTurn('parent done'),
      ],
      {
        config: {
          tools: [agentTool('researcher')],
          agents: { researcher: { description: 'r', tools: [pay] } },
        },
      },
    )
    const session = await agent.createSession()
    expect((await session.send('go')).pending).toHaveLength(1)
    const invokes = (await harness.spans()).filter((span) => span.name.startsWith('invoke_agent'))
    expect(invokes).toHaveLength(2)
    for (const invoke of invokes) {
      expect(invoke.events.map((event) => event.name)).toContain('agentx.input_required')
    }
    const answer = await session.send([{ type: 'tool_approval', toolUseId: 'k1', approved: true }])
    expect(answer.text).toBe('parent done')
  })

  it('gives a send that stops for input inside a sub-agent the usage of SendResult, the sub-agent’s requests included', async () => {
    const { harness, agent } = setup(
      [
        toolCallTurn([{ id: 'p1', name: 'researcher', input: { task: 'pay' } }], { usage: usage(100, 10) }),
        toolCallTurn([{ id: 'k1', name: 'pay', input: {} }], { usage: usage(40, 4) }),
      ],
      {
        config: {
          tools: [agentTool('researcher')],
          agents: { researcher: { description: 'r', tools: [pay] } },
        },
      },
    )
    const session = await agent.createSession()
    const result = await session.send('go')
    expect(result.usage).toMatchObject({ inputTokens: 140, outputTokens: 14 })
    const parent = (await harness.spans()).find((span) => span.name === 'invoke_agent default')
    // Before: 100 / 10, the parent's own request only.
    expect(parent?.attributes['gen_ai.usage.input_tokens']).toBe(140)
    expect(parent?.attributes['gen_ai.usage.output_tokens']).toBe(14)
  })

  it('names the send that answers an approval after its profile and model, also when it makes no model request', async () => {
    let release: (() => void) | undefined
    const slowPay: Tool = {
      ...pay,
      execute: (_input, { signal }) =>
        new Promise((resolve) => {
          release = () => resolve('paid')
          signal?.addEventListener('abort', () => resolve('stopped'))
        }),
    }
    const { harness, agent } = setup([toolCallTurn([{ id: 'k1', name: 'pay', input: {} }])], {
      config: { tools: [slowPay] },
    })
    const session = await agent.createSession()
    expect((await session.send('go')).pending).toHaveLength(1)
    const answering = session.send([{ type: 'tool_approval', toolUseId: 'k1', approved: true }])
    await waitFor(() => release !== undefined)
    session.abort()
    await expect(answering).rejects.toThrow()
    const invokes = (await harness.spans()).filter((span) => span.name.startsWith('invoke_agent'))
    // Before: the second span was named plain `invoke_agent`, with no model.
    expect(invokes.map((span) => span.name)).toEqual(['invoke_agent default', 'invoke_agent default'])
    expect(invokes[1]?.attributes['gen_ai.agent.name']).toBe('default')
    expect(invokes[1]?.attributes['gen_ai.request.model']).toBe('model-a')
    expect(invokes[1]?.attributes['error.type']).toBe('ADAPTER_ABORTED')
  })

  it('puts each sub-agent under the execute_tool span of the call that started it, several at once and under their own tool names', async () => {
    const { harness, agent } = setup(
      [
        toolCallTurn([
          { id: 'a', name: 'researcher', input: { task: 'one' } },
          { id: 'b', name: 'researcher', input: { task: 'two' } },
          { id: 'c', name: 'ask_researcher', input: { task: 'three' } },
          { id: 'd', name: 'lookup', input: { word: 'w' } },
        ]),
        textTurn('r1'),
        textTurn('r2'),
        textTurn('r3'),
        textTurn('parent done'),
      ],
      {
        config: {
          tools: [lookup, agentTool('researcher'), agentTool('researcher', { name: 'ask_researcher' })],
          agents: { researcher: { description: 'r' } },
        },
      },
    )
    const session = await agent.createSession()
    expect((await session.send('go')).text).toBe('parent done')
    const spans = await harness.spans()
    const toolSpans = new Map(
      spans
        .filter((span) => span.name.startsWith('execute_tool'))
        .map((span) => [span.attributes['gen_ai.tool.call.id'], span]),
    )
    const children = spans.filter((span) => span.name === 'invoke_agent researcher')
    expect(children).toHaveLength(3)
    for (const child of children) {
      // The child session of call `x` is the one its own tool span started.
      const callId = String(child.attributes['gen_ai.conversation.id']).split('/').pop()
      // Before, every child hung under call `a` (the first running call named after the profile),
      // and the child of `ask_researcher` under invoke_agent.
      expect(parentOf(child)).toBe(toolSpans.get(callId)!.spanContext().spanId)
    }
  })

  it('forgets the calls a deleted session waited on: a new session of the same id traces its own calls', async () => {
    const { harness, agent } = setup(
      [
        toolCallTurn([{ id: 'k1', name: 'pay', input: {} }]),
        toolCallTurn([{ id: 'k1', name: 'lookup', input: { word: 'w' } }]),
        textTurn('done'),
      ],
      { config: { tools: [lookup, pay] } },
    )
    const waiting = await agent.createSession({ id: 'reused' })
    expect((await waiting.send('pay it')).pending).toHaveLength(1)
    await waiting.delete()
    const again = await agent.createSession({ id: 'reused' })
    await again.send('look it up')
    const tools = (await harness.spans()).filter((span) => span.name.startsWith('execute_tool'))
    // Before, the deleted session's waiting call was carried into the new session's send.
    expect(tools.map((span) => span.name)).toEqual(['execute_tool lookup'])
  })

  it('marks an aborted send and its request as ADAPTER_ABORTED', async () => {
    const { harness, agent } = setup([{ events: [{ type: 'text-delta', text: 'par' }], waitForAbort: true }])
    const session = await agent.createSession()
    const streaming = new Promise<void>((resolve) => {
      session.subscribe((event) => event.type === 'text-delta' && resolve())
    })
    const sent = session.send('hi')
    await streaming
    session.abort()
    await expect(sent).rejects.toThrow()
    const invoke = await harness.span('invoke_agent default')
    expect(invoke.attributes['error.type']).toBe('ADAPTER_ABORTED')
    expect(invoke.status.code).toBe(SpanStatusCode.ERROR)
    expect((await harness.span('chat model-a')).attributes['error.type']).toBe('ADAPTER_ABORTED')
    // The next send is traced normally.
    expect((await harness.spans()).filter((span) => span.name.startsWith('invoke_agent'))).toHaveLength(1)
  })
})

describe('metrics', () => {
  it('records gen_ai.client.token.usage per request and token type, with the conventions’ buckets', async () => {
    const { harness, agent } = setup(toolThenAnswer())
    await agent.chat('hi')
    const tokens = await harness.histogram('gen_ai.client.token.usage')
    expect(tokens.unit).toBe('{token}')
    const byType = Object.fromEntries(
      tokens.points.map((point) => [point.attributes['gen_ai.token.type'], point]),
    )
    expect(byType.input).toMatchObject({
      count: 2,
      sum: 250,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': 'model-a',
        'gen_ai.token.type': 'input',
      },
    })
    expect(byType.output).toMatchObject({ count: 2, sum: 50 })
    expect(tokens.points[0]!.boundaries).toEqual([
      1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
    ])
  })

  it('counts the tokens of the compaction summary in gen_ai.client.token.usage', async () => {
    const { harness, agent } = setup(
      [
        textTurn('one', { usage: usage(10, 1) }),
        textTurn('two', { usage: usage(20, 2) }),
        textTurn('the summary', { usage: usage(1000, 200) }),
      ],
      { config: { compaction: { thresholdTokens: 1_000_000, keepRecentMessages: 2 } } },
    )
    const session = await agent.createSession()
    await session.send('first')
    await session.send('second')
    await session.compact()
    const tokens = await harness.histogram('gen_ai.client.token.usage')
    const sum = (type: string) =>
      tokens.points
        .filter((point) => point.attributes['gen_ai.token.type'] === type)
        .reduce((total, point) => total + point.sum, 0)
    // Before, 30 and 3: the summariser's request was left out.
    expect([sum('input'), sum('output')]).toEqual([1030, 203])
  })

  it('records gen_ai.client.operation.duration in seconds per request and per send', async () => {
    const { harness, agent } = setup([{ events: textTurn('slow'), delayMs: 30 }])
    await agent.chat('hi')
    const duration = await harness.histogram('gen_ai.client.operation.duration')
    expect(duration.unit).toBe('s')
    const byOperation = Object.fromEntries(
      duration.points.map((point) => [point.attributes['gen_ai.operation.name'], point]),
    )
    expect(Object.keys(byOperation).sort()).toEqual(['chat', 'invoke_agent'])
    expect(byOperation.chat!.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'model-a',
    })
    // The scripted reply waited 30 ms per event: the duration is in seconds, not milliseconds.
    expect(byOperation.chat!.sum).toBeGreaterThan(0.025)
    expect(byOperation.chat!.sum).toBeLessThan(5)
    expect(byOperation.invoke_agent!.sum).toBeGreaterThanOrEqual(byOperation.chat!.sum)
    expect(duration.points[0]!.boundaries).toEqual([
      0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
    ])
    const chat = await harness.span('chat model-a')
    expect(ms(chat.duration)).toBeCloseTo(byOperation.chat!.sum * 1000, 0)
  })
})

describe('lifecycle', () => {
  it('refuses unknown option keys and options of the wrong type, before subscribing', () => {
    const harness = createHarness()
    const subscribed: unknown[] = []
    const agent = createAgent(
      { model: 'model-a' },
      { adapter: new ScriptedAdapter([]), persister: new InMemoryPersister() },
    )
    const watched = {
      subscribe: (listener: unknown) => {
        subscribed.push(listener)
        return agent.subscribe(listener as never)
      },
    }
    const bad: Array<[unknown, RegExp]> = [
      [
        { tracerProvider: harness.tracerProvider, recordContents: true },
        /unknown option 'recordContents'.*recordContent/,
      ],
      [{ tracerProvider: {} }, /'tracerProvider' must be a TracerProvider/],
      [{ meterProvider: 'global' }, /'meterProvider' must be a MeterProvider/],
      [{ recordContent: 'yes' }, /'recordContent' must be a boolean/],
      [{ providerName: 42 }, /'providerName' must be a non-empty string/],
      [{ agentName: '' }, /'agentName' must be a non-empty string/],
      ['tracer', /options must be an object/],
    ]
    for (const [options, message] of bad) {
      expect(() => instrumentAgent(watched, options as never)).toThrow(message)
    }
    expect(subscribed).toEqual([])
    const stop = instrumentAgent(watched, {
      tracerProvider: harness.tracerProvider,
      recordContent: undefined,
    } as never)
    expect(subscribed).toHaveLength(1)
    stop()
  })

  it('works when instrumented after initialize()', async () => {
    const harness = createHarness()
    const agent = createAgent(
      { model: 'model-a' },
      { adapter: new ScriptedAdapter([textTurn('hi')]), persister: new InMemoryPersister() },
    )
    await agent.initialize()
    const stop = instrumentAgent(agent, {
      tracerProvider: harness.tracerProvider,
      meterProvider: harness.meterProvider,
    })
    stops.push(() => agent.close(), stop)
    await agent.chat('hello')
    expect((await harness.spans()).map((span) => span.name)).toEqual(['chat model-a', 'invoke_agent default'])
  })

  it('does not initialize the agent itself', async () => {
    const calls: string[] = []
    const persister = new Proxy(new InMemoryPersister(), {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver)
        if (typeof value !== 'function') return value
        return (...args: unknown[]) => {
          calls.push(String(property))
          return value.apply(target, args)
        }
      },
    })
    const harness = createHarness()
    const agent = createAgent(
      { model: 'model-a' },
      { adapter: new ScriptedAdapter([textTurn('hi')]), persister },
    )
    const stop = instrumentAgent(agent, {
      tracerProvider: harness.tracerProvider,
      meterProvider: harness.meterProvider,
    })
    stops.push(() => agent.close(), stop)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(calls).toEqual([])
    await agent.chat('hello')
    expect(calls.length).toBeGreaterThan(0)
    expect((await harness.span('invoke_agent default')).attributes['gen_ai.provider.name']).toBe('scripted')
  })

  it('stops recording after uninstrument, ending the spans still open', async () => {
    const { harness, agent, stop } = setup([
      { events: [{ type: 'text-delta', text: 'x' }], waitForAbort: true },
      textTurn('unseen'),
    ])
    const session = await agent.createSession()
    const sent = session.send('hi')
    await waitFor(() => session.state === 'active')
    await new Promise((resolve) => setTimeout(resolve, 10))
    stop()
    expect((await harness.spans()).map((span) => span.name).sort()).toEqual([
      'chat model-a',
      'invoke_agent default',
    ])
    session.abort()
    await expect(sent).rejects.toThrow()
    await session.send('again')
    expect(await harness.spans()).toHaveLength(2)
  })

  it('ends a tool still running when it stops, instead of dropping its span', async () => {
    const slow: Tool = {
      name: 'slow',
      description: 'Takes its time.',
      inputSchema: { type: 'object' },
      execute: () => new Promise((resolve) => setTimeout(() => resolve('done'), 50)),
    }
    const { harness, agent, stop } = setup(
      [toolCallTurn([{ id: 's1', name: 'slow', input: {} }]), textTurn('after')],
      { config: { tools: [slow] } },
    )
    const session = await agent.createSession()
    const events: string[] = []
    session.subscribe((event) => events.push(event.type))
    const sent = session.send('go')
    await waitFor(() => events.includes('tool-call') && events.includes('message'))
    stop()
    await sent
    // Before: chat and invoke_agent only; the running call's execute_tool never appeared.
    expect((await harness.spans()).map((span) => span.name).sort()).toEqual([
      'chat model-a',
      'execute_tool slow',
      'invoke_agent default',
    ])
  })

  it('never lets a broken tracer break a send', async () => {
    const adapter = new ScriptedAdapter([textTurn('still works')])
    const agent = createAgent({ model: 'model-a' }, { adapter, persister: new InMemoryPersister() })
    const throwing = {
      getTracer: () => ({
        startSpan: () => {
          throw new Error('exporter exploded')
        },
        startActiveSpan: () => {
          throw new Error('exporter exploded')
        },
      }),
    }
    const stop = instrumentAgent(agent, {
      tracerProvider: throwing,
      meterProvider: createHarness().meterProvider,
    })
    stops.push(() => agent.close(), stop)
    const session = await agent.chat('hi')
    const messages = await session.getMessages()
    expect(messages.map((message) => message.type)).toEqual(['user', 'agent'])
  })

  it('rejects something that is not an agent', () => {
    expect(() => instrumentAgent({} as never)).toThrow(/subscribe/)
  })
})

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 2000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached')
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

describe('profiles on other adapters', () => {
  it('gives invoke_agent the provider of the profile that runs the send, in the span and the duration metric', async () => {
    const billingAdapter = new ScriptedAdapter([textTurn('billing answer')], { name: 'openai' })
    const { harness, agent } = setup([textTurn('default answer')], {
      config: { agents: { billing: { description: 'Billing', adapter: billingAdapter } } },
    })
    const session = await agent.createSession()
    await session.send('hello')
    await session.send('my invoice', { agent: 'billing' })

    const invokes = (await harness.spans()).filter((span) => span.name.startsWith('invoke_agent'))
    expect(invokes.map((span) => [span.name, span.attributes['gen_ai.provider.name']])).toEqual([
      ['invoke_agent default', 'anthropic'],
      ['invoke_agent billing', 'openai'],
    ])
    const duration = await harness.histogram('gen_ai.client.operation.duration')
    const invokeProviders = duration.points
      .filter((point) => point.attributes['gen_ai.operation.name'] === 'invoke_agent')
      .map((point) => point.attributes['gen_ai.provider.name'])
      .sort()
    expect(invokeProviders).toEqual(['anthropic', 'openai'])
  })
})
