import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js'

/** A JSON-RPC request id. */
export type RequestId = string | number

/**
 * Told when a POST's SSE response stream ended or broke before it carried the answers to these
 * requests. `resumable`: the server sent event ids, so the SDK will try to resume the stream.
 */
export type LostRequestsHandler = (ids: RequestId[], resumable: boolean) => void

/**
 * A `fetch` for the SDK's streamable HTTP client transport that watches each POST answered with an
 * SSE stream. The SDK waits for a request's answer until its timeout when that stream breaks without
 * one (a server that crashed mid-call): with this `fetch` the connection learns it at once, from the
 * bytes themselves, and fails those requests. The stream is passed on unchanged and unbuffered, so
 * progress and other server messages arrive as they are sent.
 */
export function watchResponseStreams(onLost: LostRequestsHandler, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const response = await base(url, init)
    if (init?.method !== 'POST' || !response.ok || response.body === null) return response
    if (mediaType(response.headers.get('content-type')) !== 'text/event-stream') return response
    const ids = requestIdsOf(init.body)
    if (ids.length === 0) return response
    return new Response(watch(response.body, ids, onLost), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    })
  }
}

function watch(
  body: ReadableStream<Uint8Array>,
  ids: RequestId[],
  onLost: LostRequestsHandler,
): ReadableStream<Uint8Array> {
  const scanner = new SseScanner(ids)
  const reader = body.getReader()
  let settled = false
  const settle = (): void => {
    if (settled) return
    settled = true
    if (scanner.pending.size > 0) onLost([...scanner.pending], scanner.resumable)
  }
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let next: Awaited<ReturnType<typeof reader.read>>
      try {
        next = await reader.read()
      } catch (error) {
        settle()
        controller.error(error)
        return
      }
      if (next.done) {
        scanner.end()
        settle()
        controller.close()
        return
      }
      scanner.push(next.value)
      controller.enqueue(next.value)
    },
    cancel(reason) {
      // The transport itself stopped reading (it is closing): nothing to report.
      settled = true
      return reader.cancel(reason)
    },
  })
}

/**
 * Reads SSE events just enough to know which of a POST's requests were answered and whether the
 * server sent event ids (resumable streams). Keeps only the current line and event.
 */
class SseScanner {
  readonly pending: Set<RequestId>
  resumable = false
  readonly #decoder = new TextDecoder()
  #line = ''
  #data = ''
  #lastWasCarriageReturn = false

  constructor(ids: RequestId[]) {
    this.pending = new Set(ids)
  }

  push(chunk: Uint8Array): void {
    this.#text(this.#decoder.decode(chunk, { stream: true }))
  }

  end(): void {
    this.#text(this.#decoder.decode())
    if (this.#line !== '') this.#field(this.#line)
    this.#dispatch()
  }

  #text(text: string): void {
    let start = 0
    for (let i = 0; i < text.length; i++) {
      const char = text.charCodeAt(i)
      if (char !== 10 && char !== 13) continue
      const line = this.#line + text.slice(start, i)
      this.#line = ''
      start = i + 1
      // "\r\n" is one line break.
      if (char === 10 && this.#lastWasCarriageReturn && line === '') {
        this.#lastWasCarriageReturn = false
        continue
      }
      this.#lastWasCarriageReturn = char === 13
      if (line === '') this.#dispatch()
      else this.#field(line)
    }
    this.#line += text.slice(start)
  }

  #field(line: string): void {
    const colon = line.indexOf(':')
    const name = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (name === 'data') this.#data = this.#data === '' ? value : `${this.#data}\n${value}`
    else if (name === 'id' && value !== '') this.resumable = true
  }

  #dispatch(): void {
    const data = this.#data
    this.#data = ''
    if (data === '' || this.pending.size === 0) return
    let message: unknown
    try {
      message = JSON.parse(data)
    } catch {
      return
    }
    for (const item of Array.isArray(message) ? message : [message]) {
      if (typeof item !== 'object' || item === null) continue
      const { id } = item as { id?: unknown }
      if ((typeof id === 'string' || typeof id === 'number') && ('result' in item || 'error' in item)) {
        this.pending.delete(id)
      }
    }
  }
}

function requestIdsOf(body: unknown): RequestId[] {
  if (typeof body !== 'string') return []
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return []
  }
  const ids: RequestId[] = []
  for (const item of Array.isArray(parsed) ? parsed : [parsed]) {
    if (typeof item !== 'object' || item === null || !('method' in item)) continue
    const { id } = item as { id?: unknown }
    if (typeof id === 'string' || typeof id === 'number') ids.push(id)
  }
  return ids
}

function mediaType(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase()
}
