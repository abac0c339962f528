import type { AnyMessage } from '@agentx/core'
import { type FakeProvider, openAIResponsesDialect, startFakeProvider } from '@agentx/contract-tests'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { deltas, messageOf, run } from '../test/stream-helpers.js'
import { fixture, sse } from '../test/openai-fixtures.js'
import { OpenAIAdapter } from './openai-adapter.js'

let fake: FakeProvider

beforeAll(async () => {
  fake = await startFakeProvider({ dialect: openAIResponsesDialect })
})
afterAll(async () => {
  await fake.close()
})
afterEach(() => {
  fake.reset()
})

const options = { model: 'gpt-test', history: [] as AnyMessage[] }

function message(seq: number, type: AnyMessage['type'], content: AnyMessage['content']): AnyMessage {
  return { id: `m${seq}`, sessionId: 's', seq, type, content, timestamp: '2026-01-01T00:00:00.000Z' }
}

describe('OpenAIAdapter, Responses API stream', () => {
  it('maps a recorded text + function call stream: deltas, assembled call, usage, session id, tool_use stop', async () => {
    fake.enqueue(sse(fixture('responses-text-and-function-call.sse.txt')))
    const adapter = new OpenAIAdapter({ apiKey: 'sk-test', baseURL: fake.baseURL })
    const { events, failed } = await run(adapter.stream('Weather?', options))
    expect(failed).toBe(false)
    expect(deltas(events)).toBe('Got it')
    expect(events.filter((event) => event.type === 'tool-call')).toEqual([
      {
        type: 'tool-call',
        id: 'call_pddfxhfOx4gY56zn4vIIEbFp',
        name: 'get_weather',
        input: { location: 'San Francisco, CA', unit: 'fahrenheit' },
      },
    ])
    expect(events.find((event) => event.type === 'usage')).toEqual({
      type: 'usage',
      usage: {
        inputTokens: 7112,
        outputTokens: 463,
        cacheReadTokens: 3072,
        reasoningTokens: 64,
        totalTokens: 7575,
      },
    })
    const responseId = 'resp_0a63f40a2632b74300699f8818e5648196a8fa657ae8091421'
    expect(events.find((event) => event.type === 'session')).toEqual({
      type: 'session',
      sessionId: responseId,
    })
    const final = messageOf(events)
    expect(final.stopReason).toBe('tool_use')
    expect(final.content).toEqual([
      {
        type: 'text',
        text: 'Got it',
        providerMetadata: {
          openai: { itemId: 'msg_0a63f40a2632b74300699f8819a5e08196ac270722d369af5a', responseId },
        },
      },
      {
        type: 'tool_use',
        id: 'call_pddfxhfOx4gY56zn4vIIEbFp',
        name: 'get_weather',
        input: { location: 'San Francisco, CA', unit: 'fahrenheit' },
        providerMetadata: {
          openai: { itemId: 'fc_08a14073c7135dc10069aa68630840819098f7c17c4e577327', responseId },
        },
      },
    ])
    expect(events.at(-1)?.type).toBe('message')
    expect(fake.requests[0]?.received.url).toBe('/v1/responses')
    expect(fake.requests[0]?.received.headers.authorization).toBe('Bearer sk-test')
  })

  it('accepts a lenient server that streams deltas without announcing items, and data-only frames', async () => {
    const frame = (event: Record<string, unknown>) => `data: ${JSON.stringify(event)}\n\n`
    fake.enqueue(
      sse(
        frame({
          type: 'response.created',
          response: { id: 'resp_lenient', status: 'in_progress', output: [] },
        }) +
          frame({
            type: 'response.output_text.delta',
            item_id: 'msg_1',
            output_index: 0,
            content_index: 0,
            delta: 'Hel',
          }) +
          frame({
            type: 'response.output_text.delta',
            item_id: 'msg_1',
            output_index: 0,
            content_index: 0,
            delta: 'lo',
          }) +
          frame({
            type: 'response.function_call_arguments.delta',
            item_id: 'fc_1',
            output_index: 1,
            delta: '{"a":',
          }) +
          frame({
            type: 'response.function_call_arguments.delta',
            item_id: 'fc_1',
            output_index: 1,
            delta: '1}',
          }) +
          frame({
            type: 'response.completed',
            response: {
              id: 'resp_lenient',
              status: 'completed',
              output: [
                {
                  id: 'msg_1',
                  type: 'message',
                  role: 'assistant',
                  content: [{ type: 'output_text', text: 'Hello' }],
                },
                { id: 'fc_1', type: 'function_call', call_id: 'call_9', name: 'f', arguments: '{"a":1}' },
              ],
            },
          }),
      ),
    )
    const adapter = new OpenAIAdapter({ apiKey: 'sk-test', baseURL: fake.baseURL })
    const { events, failed } = await run(adapter.stream('Hi', options))
    expect(failed).toBe(false)
    expect(deltas(events)).toBe('Hello')
    expect(events.filter((event) => event.type === 'tool-call')).toEqual([
      { type: 'tool-call', id: 'call_9', name: 'f', input: { a: 1 } },
    ])
    expect(messageOf(events)).toMatchObject({
      stopReason: 'tool_use',
      content: [
        { type: 'text', text: 'Hello' },
        { type: 'tool_use', id: 'call_9', name: 'f', input: { a: 1 } },
      ],
    })
  })

  it('throws the in-stream quota error of a recorded stream as a non-retryable rate_limit', async () => {
    fake.enqueue(sse(fixture('responses-quota-error.sse.txt')))
    const adapter = new OpenAIAdapter({ apiKey: 'sk-test', baseURL: fake.baseURL })
    const { error } = await run(adapter.stream('Hi', options))
    expect(error).toMatchObject({
      name: 'AdapterError',
      kind: 'rate_limit',
      retryable: false,
      provider: 'openai',
    })
    expect((error as Error).message).toContain('insufficient_quota')
  })

  it('streams reasoning summaries as thinking with the encrypted content as signature, and replays it', async () => {
    fake.enqueue({
      response: {
        blocks: [
          { type: 'thinking', text: 'Compare both options.', signature: 'gAAAAenc==' },
          { type: 'text', text: 'Option B.' },
        ],
        stopReason: 'end_turn',
        responseId: 'resp_think',
        deltaSize: 5,
        usage: {
          inputTokens: 20,
          outputTokens: 50,
          reasoningTokens: 40,
          cacheReadTokens: 8,
          cacheWriteTokens: 4,
        },
      },
    })
    const adapter = new OpenAIAdapter({ apiKey: 'sk-test', baseURL: fake.baseURL })
    const { events } = await run(
      adapter.stream('Which?', {
        ...options,
        providerOptions: { openai: { reasoning: { effort: 'low', summary: 'auto' } } },
      }),
    )
    expect(deltas(events, 'thinking-delta')).toBe('Compare both options.')
    expect(events.find((event) => event.type === 'usage')).toEqual({
      type: 'usage',
      usage: {
        inputTokens: 20,
        outputTokens: 50,
        cacheReadTokens: 8,
        cacheWriteTokens: 4,
        reasoningTokens: 40,
        totalTokens: 70,
      },
    })
    const final = messageOf(events)
    expect(final.content[0]).toMatchObject({
      type: 'thinking',
      text: 'Compare both options.',
      signature: 'gAAAAenc==',
    })
    expect(JSON.parse(fake.requests[0]!.received.body).reasoning).toEqual({ effort: 'low', summary: 'auto' })

    // Replayed (no resume), the reasoning goes back as a reasoning item with its encrypted content.
    fake.enqueue({ response: { blocks: [{ type: 'text', text: 'ok' }], stopReason: 'end_turn' } })
    const history = [message(0, 'user', 'Which?'), message(1, 'agent', final.content)]
    await run(adapter.stream('Why?', { ...options, history }))
    const input = JSON.parse(fake.requests[1]!.received.body).input
    expect(input).toEqual([
      { role: 'user', content: 'Which?' },
      {
        type: 'reasoning',
        id: (final.content[0]!.providerMetadata as { openai: { itemId: string } }).openai.itemId,
        summary: [{ type: 'summary_text', text: 'Compare both options.' }],
        encrypted_content: 'gAAAAenc==',
      },
      { role: 'assistant', content: 'Option B.' },
      { role: 'user', content: 'Why?' },
    ])
  })

  it('assembles parallel calls from interleaved one-character fragments; empty arguments are {}, invalid JSON stays raw', async () => {
    fake.enqueue({
      response: {
        blocks: [
          { type: 'tool-call', id: 'call_a', name: 'lookup', input: { q: 'a "quoted" \\ value ✓' } },
          { type: 'tool-call', id: 'call_b', name: 'noop', rawArguments: '' },
          { type: 'tool-call', id: 'call_c', name: 'broken', rawArguments: '{"q": tru' },
        ],
        stopReason: 'tool_use',
        deltaSize: 1,
        interleaveToolCalls: true,
      },
    })
    const adapter = new OpenAIAdapter({ apiKey: 'sk-test', baseURL: fake.baseURL })
    const { events, failed } = await run(adapter.stream('Go', options))
    expect(failed).toBe(false)
    expect(events.filter((event) => event.type === 'tool-call')).toEqual([
      { type: 'tool-call', id: 'call_a', name: 'lookup', input: { q: 'a "quoted" \\ value ✓' } },
      { type: 'tool-call', id: 'call_b', name: 'noop', input: {} },
      { type: 'tool-call', id: 'call_c', name: 'broken', input: '{"q": tru' },
    ])
    const broken = messageOf(events).content[2]
    expect(broken?.providerMetadata).toMatchObject({ openai: { rawArguments: '{"q": tru' } })

    // The raw arguments go back unchanged with the call.
    fake.enqueue({ response: { blocks: [{ type: 'text', text: 'ok' }], stopReason: 'end_turn' } })
    const history = [message(0, 'user', 'Go'), message(1, 'agent', messageOf(events).content)]
    const results = ['call_a', 'call_b', 'call_c'].map((id) => ({
      type: 'tool_result' as const,
      toolUseId: id,
      content: 'done',
    }))
    await run(adapter.stream(results, { ...options, history }))
    const input = JSON.parse(fake.requests[1]!.received.body).input as Array<Record<string, unknown>>
    expect(input.filter((item) => item.type === 'function_call').map((item) => item.arguments)).toEqual([
      '{"q":"a \\"quoted\\" \\\\ value ✓"}',
      '{}',
      '{"q": tru',
    ])
    expect(input.filter((item) => item.type === 'function_call_output')).toHaveLength(3)
  })

  it.each([
    ['max_tokens', undefined, 'max_tokens'],
    ['content_filter', undefined, 'content_filter'],
    ['other', 'something_new', 'other'],
    ['end_turn', undefined, 'end_turn'],
  ] as const)('maps stop reason %s (raw %s) to %s', async (stopReason, rawStopReason, expected) => {
    fake.enqueue({
      response: {
        blocks: [{ type: 'text', text: 'cut' }],
        stopReason,
        ...(rawStopReason === undefined ? {} : { rawStopReason }),
      },
    })
    const adapter = new OpenAIAdapter({ apiKey: 'sk-test', baseURL: fake.baseURL })
    const { events } = await run(adapter.stream('Hi', options))
    expect(messageOf(events).stopReason).toBe(expected)
  })

  it('sends model, stream flag, instructions, tools, history and options as the Responses API expects', async () => {
    fake.enqueue({ response: { blocks: [{ type: 'text', text: 'ok' }], stopReason: 'end_turn' } })
    const adapter = new OpenAIAdapter({ apiKey: 'sk-test', baseURL: fake.baseURL })
    const history = [
      message(0, 'user', [
        { type: 'text', text: 'What is on this picture?' },
        { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
        { type: 'image', mediaType: 'image/jpeg', url: 'https://example.com/cat.jpg' },
      ]),
      message(1, 'agent', [
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'call_1', name: 'vision', input: { zoom: 2 } },
      ]),
      message(2, 'tool', [
        { type: 'tool_result', toolUseId: 'call_1', content: [{ type: 'text', text: 'a cat' }] },
      ]),
      message(3, 'agent', [
        { type: 'thinking', text: 'no signature, not sent' },
        { type: 'text', text: 'A cat.' },
      ]),
    ]
    await run(
      adapter.stream('Thanks', {
        ...options,
        history,
        systemPrompt: 'You are terse.',
        maxOutputTokens: 256,
        temperature: 0.2,
        tools: [
          { name: 'vision', description: 'Looks closer', inputSchema: { type: 'object', properties: {} } },
        ],
        providerOptions: { openai: { store: true, parallel_tool_calls: false } },
      }),
    )
    const body = JSON.parse(fake.requests[0]!.received.body)
    expect(body).toEqual({
      store: true,
      parallel_tool_calls: false,
      model: 'gpt-test',
      stream: true,
      instructions: 'You are terse.',
      tools: [
        {
          type: 'function',
          name: 'vision',
          description: 'Looks closer',
          parameters: { type: 'object', properties: {} },
          strict: false,
        },
      ],
      max_output_tokens: 256,
      temperature: 0.2,
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is on this picture?' },
            { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
            { type: 'input_image', image_url: 'https://example.com/cat.jpg', detail: 'auto' },
          ],
        },
        { role: 'assistant', content: 'Let me check.' },
        { type: 'function_call', call_id: 'call_1', name: 'vision', arguments: '{"zoom":2}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'a cat' },
        { role: 'assistant', content: 'A cat.' },
        { role: 'user', content: 'Thanks' },
      ],
    })
    expect(fake.requests[0]!.decoded.apiKey).toBe('sk-test')
  })

  it('with resume sends previous_response_id and only what came after that response', async () => {
    fake.enqueue({
      response: { blocks: [{ type: 'text', text: 'ok' }], stopReason: 'end_turn', responseId: 'resp_3' },
    })
    const adapter = new OpenAIAdapter({ apiKey: 'sk-test', baseURL: fake.baseURL })
    const history = [
      message(0, 'user', 'one'),
      message(1, 'agent', [
        { type: 'text', text: 'reply one', providerMetadata: { openai: { responseId: 'resp_1' } } },
      ]),
      message(2, 'user', 'two (its reply failed)'),
    ]
    const { events } = await run(adapter.stream('three', { ...options, history, resume: 'resp_1' }))
    expect(events.find((event) => event.type === 'session')).toEqual({ type: 'session', sessionId: 'resp_3' })
    const body = JSON.parse(fake.requests[0]!.received.body)
    expect(body.previous_response_id).toBe('resp_1')
    expect(body.input).toEqual([
      { role: 'user', content: 'two (its reply failed)' },
      { role: 'user', content: 'three' },
    ])
  })

  it('with store: false neither reports a session id nor sends previous_response_id', async () => {
    fake.enqueue({
      response: { blocks: [{ type: 'text', text: 'ok' }], stopReason: 'end_turn', responseId: 'resp_x' },
    })
    const adapter = new OpenAIAdapter({ apiKey: 'sk-test', baseURL: fake.baseURL })
    const { events } = await run(
      adapter.stream('Hi', {
        ...options,
        history: [message(0, 'user', 'before')],
        resume: 'resp_old',
        providerOptions: { openai: { store: false } },
      }),
    )
    expect(events.some((event) => event.type === 'session')).toBe(false)
    const body = JSON.parse(fake.requests[0]!.received.body)
    expect(body).not.toHaveProperty('previous_response_id')
    expect(body.input).toEqual([
      { role: 'user', content: 'before' },
      { role: 'user', content: 'Hi' },
    ])
  })

  it('with a Conversations API conversation sends only the new input and no previous_response_id', async () => {
    fake.enqueue({
      response: { blocks: [{ type: 'text', text: 'ok' }], stopReason: 'end_turn', responseId: 'resp_c2' },
    })
    const adapter = new OpenAIAdapter({ apiKey: 'sk-test', baseURL: fake.baseURL })
    const history = [
      message(0, 'user', 'one'),
      message(1, 'agent', [
        { type: 'text', text: 'reply', providerMetadata: { openai: { responseId: 'resp_c1' } } },
      ]),
    ]
    await run(
      adapter.stream('two', {
        ...options,
        history,
        resume: 'resp_c1',
        providerOptions: { openai: { conversation: 'conv_1' } },
      }),
    )
    const body = JSON.parse(fake.requests[0]!.received.body)
    expect(body.conversation).toBe('conv_1')
    expect(body).not.toHaveProperty('previous_response_id')
    expect(body.input).toEqual([{ role: 'user', content: 'two' }])
  })

  it('does not fall back to a replay for other 400 errors', async () => {
    fake.enqueue({ httpError: { kind: 'invalid_request' } })
    const adapter = new OpenAIAdapter({ apiKey: 'sk-test', baseURL: fake.baseURL })
    const { error } = await run(adapter.stream('Hi', { ...options, resume: 'resp_1' }))
    expect(error).toMatchObject({ kind: 'invalid_request', status: 400, retryable: false })
    expect(fake.requests).toHaveLength(1)
  })
})
