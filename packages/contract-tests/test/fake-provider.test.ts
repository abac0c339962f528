import { afterEach, describe, expect, it } from 'vitest'
import { anthropicMessagesDialect } from '../src/dialects/anthropic-messages-dialect.js'
import type { FakeProvider } from '../src/fake-provider/fake-provider.js'
import { startFakeProvider } from '../src/fake-provider/start-fake-provider.js'
import { parseServerSentEvents } from '../src/reference/parse-server-sent-events.js'

let fake: FakeProvider | undefined
afterEach(async () => {
  await fake?.close()
  fake = undefined
})

async function start(): Promise<FakeProvider> {
  fake = await startFakeProvider({ dialect: anthropicMessagesDialect })
  return fake
}

function post(
  provider: FakeProvider,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${provider.baseURL}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  })
}

const REQUEST = {
  model: 'claude-test',
  max_tokens: 64,
  stream: true,
  system: 'Be brief.',
  messages: [
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'time', input: {} }] },
    {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'noon', is_error: false }],
    },
  ],
  tools: [{ name: 'time', description: 'Time', input_schema: { type: 'object' } }],
}

describe('startFakeProvider with the Anthropic Messages dialect', () => {
  it('streams the scenario as Anthropic SSE frames with event lines and records the decoded request', async () => {
    const provider = await start()
    provider.enqueue({
      response: {
        blocks: [{ type: 'text', text: 'Hello' }],
        stopReason: 'end_turn',
        usage: { inputTokens: 11, outputTokens: 6 },
        responseId: 'msg_fixed',
      },
    })
    const response = await post(provider, REQUEST, { 'x-api-key': 'sk-old-style' })
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
    expect(response.headers.get('request-id')).toMatch(/^req_/)
    expect(await response.text()).toBe(
      [
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_fixed","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":11,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}\n\n',
        'event: ping\ndata: {"type":"ping"}\n\n',
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}\n\n',
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":6}}\n\n',
        'event: message_stop\ndata: {"type":"message_stop"}\n\n',
      ].join(''),
    )
    expect(provider.requests).toHaveLength(1)
    expect(provider.requests[0]?.finished).toBe(true)
    expect(provider.requests[0]?.decoded).toEqual({
      model: 'claude-test',
      stream: true,
      apiKey: 'sk-old-style',
      systemPrompt: 'Be brief.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'time', input: {} }] },
        {
          role: 'user',
          content: [{ type: 'tool_result', toolUseId: 'toolu_1', content: 'noon', isError: false }],
        },
      ],
      tools: ['time'],
      resume: undefined,
    })
  })

  it('reads the key from authorization: Bearer as SDK 1.x sends it', async () => {
    const provider = await start()
    provider.enqueue({ response: { blocks: [], stopReason: 'end_turn' } })
    await (await post(provider, REQUEST, { authorization: 'Bearer sk-new-style' })).text()
    expect(provider.requests[0]?.decoded.apiKey).toBe('sk-new-style')
  })

  it('answers HTTP errors as Anthropic JSON bodies with a request-id and the scenario headers', async () => {
    const provider = await start()
    provider.enqueue({ httpError: { kind: 'rate_limit', headers: { 'retry-after': '3' } } })
    const response = await post(provider, REQUEST)
    expect(response.status).toBe(429)
    expect(response.headers.get('retry-after')).toBe('3')
    const requestId = response.headers.get('request-id')
    expect(await response.json()).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: expect.any(String) },
      request_id: requestId,
    })
  })

  it('answers 500 once the queue is empty and 404 for a path the dialect does not serve', async () => {
    const provider = await start()
    const empty = await post(provider, REQUEST)
    expect(empty.status).toBe(500)
    expect(((await empty.json()) as { error: { type: string } }).error.type).toBe('api_error')
    const wrong = await fetch(`${provider.origin}/v1/complete`, { method: 'POST', body: '{}' })
    expect(wrong.status).toBe(404)
    await wrong.text()
    expect(provider.requests).toHaveLength(1)
    expect(provider.unmatched.map((request) => request.url)).toEqual(['/v1/complete'])
  })

  it('delivers byte-split frames with the same bytes as whole frames', async () => {
    const provider = await start()
    const response = {
      blocks: [{ type: 'text' as const, text: 'héllo 👋🏽 wörld' }],
      stopReason: 'end_turn' as const,
      responseId: 'msg_same',
      deltaSize: 2,
    }
    provider.enqueue({ response }, { response, delivery: { chunkBytes: 1 } })
    const whole = await (await post(provider, REQUEST)).text()
    const split = await (await post(provider, REQUEST)).text()
    expect(split).toBe(whole)
  })

  it('counts a client that leaves mid-response as a disconnect, and only then', async () => {
    const provider = await start()
    provider.enqueue(
      { response: { blocks: [{ type: 'text', text: 'done' }], stopReason: 'end_turn' } },
      {
        response: { blocks: [{ type: 'text', text: 'a long answer' }], stopReason: 'end_turn', deltaSize: 1 },
        delivery: { pauseBeforeFrame: 5, pauseMs: Number.POSITIVE_INFINITY },
      },
    )
    await (await post(provider, REQUEST)).text()
    await expect(provider.waitForDisconnect(100)).rejects.toThrow(/no client disconnect/)
    const controller = new AbortController()
    const response = await post(provider, REQUEST, {}, controller.signal)
    const reader = response.body!.getReader()
    await reader.read()
    expect(provider.requests[1]?.finished).toBe(false)
    controller.abort()
    await provider.waitForDisconnect()
    expect(provider.disconnects).toBe(1)
    expect(provider.requests.map((request) => request.disconnected)).toEqual([false, true])
  })

  it('cuts the stream before its terminal frame when asked', async () => {
    const provider = await start()
    provider.enqueue({
      response: { blocks: [{ type: 'text', text: 'abcdef' }], stopReason: 'end_turn', deltaSize: 1 },
      delivery: { truncateAfterFrame: 4 },
    })
    const text = await (await post(provider, REQUEST)).text()
    expect(text.match(/^event: /gm)).toHaveLength(4)
    expect(text).not.toContain('message_stop')
  })
})

describe('parseServerSentEvents (reference adapter)', () => {
  function streamOf(...chunks: string[]): ReadableStream<Uint8Array> {
    const bytes = chunks.map((chunk) => new TextEncoder().encode(chunk))
    return new ReadableStream({
      start(controller) {
        for (const chunk of bytes) controller.enqueue(chunk)
        controller.close()
      },
    })
  }

  async function parse(...chunks: string[]): Promise<Array<{ event: string; data: string }>> {
    const events = []
    for await (const event of parseServerSentEvents(streamOf(...chunks))) events.push(event)
    return events
  }

  it('handles LF, CRLF and CR line endings, also split across chunks, comments and multi-line data', async () => {
    expect(
      await parse(
        ': comment\r',
        '\nevent: a\r\ndata: 1\r',
        '\ndata: 2\r\n\r',
        '\nevent: b\rdata:3\r\rdata: {"x":',
        '"é"}\n\n',
        'data: cut',
      ),
    ).toEqual([
      { event: 'a', data: '1\n2' },
      { event: 'b', data: '3' },
      { event: 'message', data: '{"x":"é"}' },
    ])
  })

  it('keeps a multi-byte character split across chunks', async () => {
    const bytes = new TextEncoder().encode('data: 👋🏽\n\n')
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const byte of bytes) controller.enqueue(new Uint8Array([byte]))
        controller.close()
      },
    })
    const events = []
    for await (const event of parseServerSentEvents(stream)) events.push(event)
    expect(events).toEqual([{ event: 'message', data: '👋🏽' }])
  })
})

describe('multi-line data delivery', () => {
  it('spreads each JSON data line over several data lines that join back to the same JSON', async () => {
    const provider = await startFakeProvider({ dialect: anthropicMessagesDialect })
    try {
      const response = {
        blocks: [{ type: 'text' as const, text: 'a\nb' }],
        stopReason: 'end_turn' as const,
        responseId: 'msg_m',
      }
      provider.enqueue({ response }, { response, delivery: { multiLineData: true } })
      const plain: Array<{ event: string; data: unknown }> = []
      const spread: Array<{ event: string; data: unknown }> = []
      for (const target of [plain, spread]) {
        const body = (await post(provider, REQUEST)).body as ReadableStream<Uint8Array>
        for await (const event of parseServerSentEvents(body))
          target.push({ event: event.event, data: JSON.parse(event.data) })
      }
      expect(spread).toEqual(plain)
      expect(plain.length).toBeGreaterThan(5)
    } finally {
      await provider.close()
    }
  })
})

describe('replay scenarios', () => {
  it('serves a recorded body byte for byte, with its own status and headers or the dialect’s', async () => {
    const provider = await start()
    const recorded =
      'event: ping\r\ndata: {"type":"ping"}\r\n\r\nevent: message_stop\ndata: {"type":"message_stop"}\n\n'
    const error = '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'
    provider.enqueue(
      { replay: { body: recorded } },
      {
        replay: {
          status: 429,
          headers: { 'content-type': 'application/json', 'retry-after': '3' },
          body: error,
        },
      },
    )
    const stream = await post(provider, REQUEST)
    expect(stream.status).toBe(200)
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/)
    expect(await stream.text()).toBe(recorded)
    const failed = await post(provider, REQUEST)
    expect(failed.status).toBe(429)
    expect(failed.headers.get('retry-after')).toBe('3')
    expect(await failed.text()).toBe(error)
    expect(provider.requests.map((request) => request.decoded.model)).toEqual(['claude-test', 'claude-test'])
  })

  it('applies delivery quirks to the recorded frames: a cut after frame N', async () => {
    const provider = await start()
    const frames = ['data: {"n":1}\n\n', 'data: {"n":2}\n\n', 'data: {"n":3}\n\n']
    provider.enqueue({ replay: { body: frames.join('') }, delivery: { truncateAfterFrame: 2 } })
    expect(await (await post(provider, REQUEST)).text()).toBe(frames[0]! + frames[1]!)
  })
})
