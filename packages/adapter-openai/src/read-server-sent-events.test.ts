import { describe, expect, it } from 'vitest'
import { readServerSentEvents, type ServerSentEvent } from './read-server-sent-events.js'

function streamOf(...chunks: Array<string | Uint8Array>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks)
        controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk)
      controller.close()
    },
  })
}

async function read(body: ReadableStream<Uint8Array>): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = []
  for await (const event of readServerSentEvents(body)) events.push(event)
  return events
}

describe('readServerSentEvents', () => {
  it('reads event names, multi-line data and skips comments, with LF, CRLF and CR line endings', async () => {
    const events = await read(
      streamOf(
        ': keep-alive\n\nevent: a\ndata: one\ndata:  two\n\r\nevent:b\r\ndata:{"x":1}\r\n\r\ndata: three\r\r',
      ),
    )
    expect(events).toEqual([
      { event: 'a', data: 'one\n two' },
      { event: 'b', data: '{"x":1}' },
      { event: undefined, data: 'three' },
    ])
  })

  it('yields the same events when the bytes are split anywhere, inside CRLF and UTF-8 sequences', async () => {
    const text = 'event: x\r\ndata: héllo 👋🏽\r\n\r\ndata: [DONE]\r\n\r\n'
    const bytes = new TextEncoder().encode(text)
    const whole = await read(streamOf(bytes))
    const split = await read(streamOf(...Array.from(bytes, (byte) => new Uint8Array([byte]))))
    expect(split).toEqual(whole)
    expect(whole).toEqual([
      { event: 'x', data: 'héllo 👋🏽' },
      { event: undefined, data: '[DONE]' },
    ])
  })

  it('drops an event that the stream cut before its blank line', async () => {
    expect(await read(streamOf('data: complete\n\ndata: {"cut":'))).toEqual([
      { event: undefined, data: 'complete' },
    ])
  })

  it('reports every chunk to onBytes, keep-alives included', async () => {
    let count = 0
    for await (const _event of readServerSentEvents(
      streamOf(': ping\n\n', ': ping\n\n', 'data: x\n\n'),
      () => count++,
    )) {
      // read all
    }
    expect(count).toBe(3)
  })
})
