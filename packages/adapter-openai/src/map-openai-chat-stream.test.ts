import type { AnyMessage, ContentBlock } from '@agentx/core'
import { type FakeProvider, openAIChatDialect, startFakeProvider } from '@agentx/contract-tests'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { bodyOf, fixture, sse } from '../test/openai-fixtures.js'
import { deltas, messageOf, run } from '../test/stream-helpers.js'
import { OpenAIAdapter } from './openai-adapter.js'

let fake: FakeProvider

beforeAll(async () => {
  fake = await startFakeProvider({ dialect: openAIChatDialect })
})
afterAll(async () => {
  await fake.close()
})
afterEach(() => {
  fake.reset()
})

const options = { model: 'local-model', history: [] as AnyMessage[] }

function message(seq: number, type: AnyMessage['type'], content: AnyMessage['content']): AnyMessage {
  return { id: `m${seq}`, sessionId: 's', seq, type, content, timestamp: '2026-01-01T00:00:00.000Z' }
}

function chatAdapter(baseURL: string): OpenAIAdapter {
  return new OpenAIAdapter({ api: 'chat', apiKey: 'sk-test', baseURL })
}

describe('OpenAIAdapter, Chat Completions stream', () => {
  it('maps a recorded text stream with usage in the trailing choices: [] chunk', async () => {
    fake.enqueue(sse(fixture('chat-text.sse.txt')))
    const { events, failed } = await run(chatAdapter(fake.baseURL).stream('Hi', options))
    expect(failed).toBe(false)
    expect(deltas(events)).toBe('**.')
    expect(events.find((event) => event.type === 'usage')).toEqual({
      type: 'usage',
      usage: { inputTokens: 16, outputTokens: 300, cacheReadTokens: 0, reasoningTokens: 0, totalTokens: 316 },
    })
    expect(messageOf(events)).toEqual({
      type: 'message',
      content: [{ type: 'text', text: '**.' }],
      stopReason: 'end_turn',
    })
    expect(fake.requests[0]?.received.url).toBe('/v1/chat/completions')
    expect(bodyOf(fake, 0)).toMatchObject({ stream: true, stream_options: { include_usage: true } })
  })

  it('assembles the recorded tool-call fragments by index', async () => {
    fake.enqueue(sse(fixture('chat-tool-deltas.sse.txt')))
    const { events } = await run(chatAdapter(fake.baseURL).stream('Hi', options))
    expect(events.filter((event) => event.type === 'tool-call')).toEqual([
      {
        type: 'tool-call',
        id: 'call_O17Uplv4lJvD6DVdIvFFeRMw',
        name: 'test-tool',
        input: { value: 'Sparkle Day' },
      },
    ])
    expect(messageOf(events).stopReason).toBe('tool_use')
    expect(events.find((event) => event.type === 'usage')).toEqual({
      type: 'usage',
      usage: { inputTokens: 53, outputTokens: 17, totalTokens: 70 },
    })
  })

  it('starts a new call when a server reuses index 0 with a new id', async () => {
    const chunk = (delta: unknown, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
    fake.enqueue(
      sse(
        chunk({
          role: 'assistant',
          tool_calls: [
            { index: 0, id: 'a', type: 'function', function: { name: 'one', arguments: '{"x":1}' } },
          ],
        }) +
          chunk({
            tool_calls: [
              { index: 0, id: 'b', type: 'function', function: { name: 'two', arguments: '{"y":2}' } },
            ],
          }) +
          chunk({}, 'tool_calls') +
          'data: [DONE]\n\n',
      ),
    )
    const { events } = await run(chatAdapter(fake.baseURL).stream('Hi', options))
    expect(events.filter((event) => event.type === 'tool-call')).toEqual([
      { type: 'tool-call', id: 'a', name: 'one', input: { x: 1 } },
      { type: 'tool-call', id: 'b', name: 'two', input: { y: 2 } },
    ])
  })

  it('continues the last call when a server sends fragments without an index', async () => {
    const chunk = (delta: unknown, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
    fake.enqueue(
      sse(
        chunk({
          role: 'assistant',
          tool_calls: [{ id: 'a', type: 'function', function: { name: 'one', arguments: '{"x"' } }],
        }) +
          chunk({ tool_calls: [{ function: { arguments: ':1}' } }] }) +
          chunk({ tool_calls: [{ id: 'b', type: 'function', function: { name: 'two', arguments: '{}' } }] }) +
          chunk({}, 'tool_calls') +
          'data: [DONE]\n\n',
      ),
    )
    const { events } = await run(chatAdapter(fake.baseURL).stream('Hi', options))
    expect(events.filter((event) => event.type === 'tool-call')).toEqual([
      { type: 'tool-call', id: 'a', name: 'one', input: { x: 1 } },
      { type: 'tool-call', id: 'b', name: 'two', input: {} },
    ])
  })

  it('streams reasoning_content of compatible servers as thinking, before the text', async () => {
    fake.enqueue({
      response: {
        blocks: [
          { type: 'thinking', text: 'Hmm, 2+2.' },
          { type: 'text', text: '4' },
        ],
        stopReason: 'end_turn',
        deltaSize: 3,
      },
    })
    const { events } = await run(chatAdapter(fake.baseURL).stream('2+2?', options))
    expect(deltas(events, 'thinking-delta')).toBe('Hmm, 2+2.')
    expect(messageOf(events).content).toEqual([
      {
        type: 'thinking',
        text: 'Hmm, 2+2.',
        providerMetadata: { openai: { reasoningField: 'reasoning_content' } },
      },
      { type: 'text', text: '4' },
    ])
    expect(events.some((event) => event.type === 'usage')).toBe(false)
  })

  it('sends the reasoning a compatible server streamed back in its own field (DeepSeek requires it in a tool loop), and no other thinking', async () => {
    fake.enqueue(
      {
        response: {
          blocks: [
            { type: 'thinking', text: 'Need the weather.' },
            { type: 'tool-call', id: 'call_w', name: 'weather', input: { city: 'Oslo' } },
          ],
          stopReason: 'tool_use',
        },
      },
      { response: { blocks: [{ type: 'text', text: 'Sunny.' }], stopReason: 'end_turn' } },
    )
    const tools = [{ name: 'weather', description: 'Weather', inputSchema: { type: 'object' } }]
    const { events } = await run(chatAdapter(fake.baseURL).stream('Oslo?', { ...options, tools }))
    const reply = messageOf(events)
    const history = [
      message(0, 'user', 'Oslo?'),
      message(1, 'agent', [
        { type: 'thinking', text: 'Claude thought this.', signature: 'sig' },
        ...(reply.content as ContentBlock[]),
      ]),
    ]
    await run(
      chatAdapter(fake.baseURL).stream([{ type: 'tool_result', toolUseId: 'call_w', content: 'sunny' }], {
        ...options,
        tools,
        history,
      }),
    )
    const body = JSON.parse(fake.requests[1]!.received.body)
    expect(body.messages[1]).toEqual({
      role: 'assistant',
      content: null,
      reasoning_content: 'Need the weather.',
      tool_calls: [
        { id: 'call_w', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
      ],
    })
  })

  it.each([
    ['length', 'max_tokens'],
    ['content_filter', 'content_filter'],
    ['tool_calls', 'tool_use'],
    ['stop', 'end_turn'],
    ['something_new', 'other'],
  ])('maps finish_reason %s to %s', async (finish, expected) => {
    fake.enqueue({
      response: { blocks: [{ type: 'text', text: 'x' }], stopReason: 'other', rawStopReason: finish },
    })
    const { events } = await run(chatAdapter(fake.baseURL).stream('Hi', options))
    expect(messageOf(events).stopReason).toBe(expected)
  })

  it('converts system prompt, images, tool calls and results into chat messages', async () => {
    fake.enqueue({ response: { blocks: [{ type: 'text', text: 'ok' }], stopReason: 'end_turn' } })
    const history = [
      message(0, 'user', [
        { type: 'text', text: 'Describe' },
        { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
      ]),
      message(1, 'agent', [
        { type: 'thinking', text: 'not sent' },
        { type: 'tool_use', id: 'call_1', name: 'zoom', input: { level: 3 } },
        { type: 'tool_use', id: 'call_orphan', name: 'zoom', input: { level: 9 } },
      ]),
      message(2, 'tool', [
        {
          type: 'tool_result',
          toolUseId: 'call_1',
          content: [
            { type: 'text', text: 'zoomed' },
            { type: 'image', mediaType: 'image/png', url: 'https://example.com/z.png' },
          ],
          isError: false,
        },
      ]),
    ]
    await run(
      chatAdapter(fake.baseURL).stream('And now?', {
        ...options,
        history,
        systemPrompt: 'Be exact.',
        maxOutputTokens: 64,
        tools: [{ name: 'zoom', description: 'Zooms in', inputSchema: { type: 'object' } }],
      }),
    )
    const body = JSON.parse(fake.requests[0]!.received.body)
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be exact.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Describe' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'zoom', arguments: '{"level":3}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'zoomed' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Images returned by tool call call_1:' },
          { type: 'image_url', image_url: { url: 'https://example.com/z.png' } },
        ],
      },
      { role: 'user', content: 'And now?' },
    ])
    expect(body.tools).toEqual([
      {
        type: 'function',
        function: { name: 'zoom', description: 'Zooms in', parameters: { type: 'object' } },
      },
    ])
    // Not api.openai.com: compatible servers know max_tokens.
    expect(body.max_tokens).toBe(64)
    expect(body).not.toHaveProperty('max_completion_tokens')
    expect(fake.requests[0]!.decoded.systemPrompt).toBe('Be exact.')
  })

  it('treats a stream without data: [DONE] as a retryable network error, never a success', async () => {
    fake.enqueue({
      response: { blocks: [{ type: 'text', text: 'partial answer' }], stopReason: 'end_turn', deltaSize: 2 },
      delivery: { truncateAfterFrame: 4 },
    })
    const { events, error } = await run(chatAdapter(fake.baseURL).stream('Hi', options))
    expect(deltas(events)).toBe('partia')
    expect(events.some((event) => event.type === 'message')).toBe(false)
    expect(error).toMatchObject({ kind: 'network', retryable: true })
  })

  it('a refusal is shown as text and stops with content_filter, as the Responses API and Claude do', async () => {
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
    fake.enqueue(
      sse(
        chunk({ role: 'assistant', content: null, refusal: '' }) +
          chunk({ refusal: "I can't help " }) +
          chunk({ refusal: 'with that.' }) +
          chunk({}, 'stop') +
          'data: [DONE]\n\n',
      ),
    )
    const { events, failed } = await run(chatAdapter(fake.baseURL).stream('Hi', options))
    expect(failed).toBe(false)
    expect(deltas(events)).toBe("I can't help with that.")
    // Before, 'end_turn': a refusal could not be told from an answer.
    expect(messageOf(events)).toEqual({
      type: 'message',
      content: [{ type: 'text', text: "I can't help with that." }],
      stopReason: 'content_filter',
    })
  })

  it('throws a mid-stream error chunk after the deltas before it', async () => {
    fake.enqueue({
      response: { blocks: [{ type: 'text', text: 'abcdefgh' }], stopReason: 'end_turn', deltaSize: 2 },
      delivery: { errorFrameAfter: 3 },
      streamError: { kind: 'server' },
    })
    const { events, error } = await run(chatAdapter(fake.baseURL).stream('Hi', options))
    expect(deltas(events)).toBe('abcd')
    expect(error).toMatchObject({ kind: 'server', retryable: true, provider: 'openai' })
  })
})
