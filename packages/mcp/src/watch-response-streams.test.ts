import { describe, expect, it } from 'vitest'
import { type RequestId, watchResponseStreams } from './watch-response-streams.js'

/** A fetch that answers with an SSE body made of these chunks, optionally breaking at the end. */
function sseFetch(chunks: string[], options: { breakAtEnd?: boolean; contentType?: string } = {}) {
  return async (): Promise<Response> => {
    const encoder = new TextEncoder()
    let index = 0
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (index < chunks.length) controller.enqueue(encoder.encode(chunks[index++]!))
        else if (options.breakAtEnd) controller.error(new TypeError('terminated'))
        else controller.close()
      },
    })
    return new Response(body, { headers: { 'content-type': options.contentType ?? 'text/event-stream' } })
  }
}

async function run(
  chunks: string[],
  body: unknown,
  options: { breakAtEnd?: boolean; contentType?: string } = {},
): Promise<{ lost: Array<[RequestId[], boolean]>; text: string }> {
  const lost: Array<[RequestId[], boolean]> = []
  const fetch = watchResponseStreams(
    (ids, resumable) => lost.push([ids, resumable]),
    sseFetch(chunks, options),
  )
  const response = await fetch('http://127.0.0.1/mcp', { method: 'POST', body: JSON.stringify(body) })
  let text = ''
  try {
    text = await response.text()
  } catch {
    // The broken stream reaches the reader too, as it would without the watch.
  }
  return { lost, text }
}

const request = (id: RequestId) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: {} })

describe('watchResponseStreams', () => {
  it('passes an answered stream through unchanged and reports nothing', async () => {
    const chunks = ['event: message\ndata: {"jsonrpc":"2.0","id":7,', '"result":{}}\n\n']
    const { lost, text } = await run(chunks, request(7))
    expect(lost).toEqual([])
    expect(text).toBe(chunks.join(''))
  })

  it('reports requests a stream ended without answering', async () => {
    const { lost } = await run(
      ['data: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n'],
      request('a'),
    )
    expect(lost).toEqual([[['a'], false]])
  })

  it('reports requests of a stream that broke, with CRLF lines and events split across chunks', async () => {
    const chunks = ['data: {"jsonrpc":"2.0","id":1,"result":{}}\r', '\n\r\ndata: {"jsonrpc":"2.0","id":', '2']
    const { lost } = await run(chunks, [request(1), request(2), request(3)], { breakAtEnd: true })
    expect(lost).toEqual([[[2, 3], false]])
  })

  it('says when the server sent event ids (the SDK will try to resume)', async () => {
    const { lost } = await run(['id: ev-1\ndata: \n\n'], request(5), { breakAtEnd: true })
    expect(lost).toEqual([[[5], true]])
  })

  it('leaves JSON answers, notifications and GETs alone', async () => {
    expect(
      (await run(['{"jsonrpc":"2.0","id":1,"result":{}}'], request(1), { contentType: 'application/json' }))
        .lost,
    ).toEqual([])
    expect((await run([''], { jsonrpc: '2.0', method: 'notifications/initialized' })).lost).toEqual([])
  })
})
