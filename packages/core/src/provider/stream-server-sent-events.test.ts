import { describe, expect, it } from 'vitest'
import type { AdapterMessage } from '../contracts/agent-adapter.js'
import { AdapterError, isAdapterError } from '../errors/adapter-error.js'
import { ValidationError } from '../errors/validation-error.js'
import { parseJsonFrame } from './malformed-frame.js'
import { mapStreamError } from './map-http-error.js'
import { mapTransportError } from './map-transport-error.js'
import type { ProviderIdentity } from './provider-identity.js'
import { incompleteStreamError } from './stream-errors.js'
import {
  type ServerSentEventMapper,
  type ServerSentEventTransport,
  streamServerSentEvents,
} from './stream-server-sent-events.js'

const acme: ProviderIdentity = { name: 'acme', label: 'Acme', secrets: [] }
const encoder = new TextEncoder()

/** A toy protocol: `data: {"text"}` deltas, `event: end` completes, `event: error` fails. */
class ToyMapper implements ServerSentEventMapper {
  complete = false
  #text = ''
  onEvent(event: string | undefined, data: string, output: AdapterMessage[]): void {
    const frame = parseJsonFrame(acme, data)
    if (event === 'error') throw mapStreamError(acme, { kind: 'overloaded', message: String(frame.message) })
    if (event === 'end') {
      this.complete = true
      output.push({ type: 'message', content: [{ type: 'text', text: this.#text }], stopReason: 'end_turn' })
      return
    }
    this.#text += String(frame.text)
    output.push({ type: 'text-delta', text: String(frame.text) })
  }
  onEnd(): void {
    throw incompleteStreamError(acme, 'event: end')
  }
}

/** A response body the test writes to; records whether the reader cancelled it. */
function controllableBody(): {
  body: ReadableStream<Uint8Array>
  write(text: string | Uint8Array): void
  close(): void
  readonly cancelled: boolean
} {
  let controller!: ReadableStreamDefaultController<Uint8Array>
  let cancelled = false
  const body = new ReadableStream<Uint8Array>({
    start(streamController) {
      controller = streamController
    },
    cancel() {
      cancelled = true
    },
  })
  return {
    body,
    write: (text) => controller.enqueue(typeof text === 'string' ? encoder.encode(text) : text),
    close: () => controller.close(),
    get cancelled() {
      return cancelled
    },
  }
}

function sse(body: ReadableStream<Uint8Array>): Response {
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
}

function stream(
  body: () => Response | Promise<Response>,
  overrides: { signal?: AbortSignal; idleTimeoutMs?: number } = {},
): { events: AsyncGenerator<AdapterMessage>; signals: AbortSignal[] } {
  const signals: AbortSignal[] = []
  const transport: ServerSentEventTransport = {
    provider: acme,
    idleTimeoutMs: overrides.idleTimeoutMs ?? 5_000,
    mapError: (error) => mapTransportError(acme, error),
  }
  const events = streamServerSentEvents(transport, overrides.signal, async (signal) => {
    signals.push(signal)
    return { response: await body(), mapper: new ToyMapper() }
  })
  return { events, signals }
}

async function drain(
  events: AsyncIterable<AdapterMessage>,
): Promise<{ seen: AdapterMessage[]; error: unknown }> {
  const seen: AdapterMessage[] = []
  try {
    for await (const event of events) seen.push(event)
  } catch (error) {
    return { seen, error }
  }
  return { seen, error: undefined }
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

describe('streamServerSentEvents', () => {
  it('yields what the mapper pushes, in order, and lets a complete body end without cancelling it', async () => {
    const source = controllableBody()
    source.write('data: {"text":"Hel"}\n\ndata: {"text":"lo"}\n\nevent: end\ndata: {}\n\n')
    source.close()
    const { seen, error } = await drain(stream(() => sse(source.body)).events)
    expect(error).toBeUndefined()
    expect(seen).toEqual([
      { type: 'text-delta', text: 'Hel' },
      { type: 'text-delta', text: 'lo' },
      { type: 'message', content: [{ type: 'text', text: 'Hello' }], stopReason: 'end_turn' },
    ])
    expect(source.cancelled).toBe(false)
  })

  it('decodes a character split across two chunks', async () => {
    const source = controllableBody()
    const bytes = encoder.encode('data: {"text":"é😀"}\n\nevent: end\ndata: {}\n\n')
    for (let at = 0; at < bytes.length; at += 3) source.write(bytes.subarray(at, at + 3))
    source.close()
    const { seen } = await drain(stream(() => sse(source.body)).events)
    expect(seen[0]).toEqual({ type: 'text-delta', text: 'é😀' })
  })

  it('rejects an already-aborted signal with kind aborted and never opens the request', async () => {
    let opened = false
    const controller = new AbortController()
    controller.abort(new Error('user cancelled'))
    const { seen, error } = await drain(
      stream(
        () => {
          opened = true
          return sse(controllableBody().body)
        },
        { signal: controller.signal },
      ).events,
    )
    expect(seen).toEqual([])
    expect(error).toMatchObject({ kind: 'aborted', retryable: false, provider: 'acme' })
    expect((error as Error).cause).toBe(controller.signal.reason)
    expect(opened).toBe(false)
  })

  it('aborts the request while it waits for the response headers', async () => {
    const controller = new AbortController()
    const { events, signals } = stream(() => new Promise<Response>(() => {}), { signal: controller.signal })
    const running = drain(events)
    await delay(20)
    controller.abort()
    const { error } = await running
    expect(error).toMatchObject({ kind: 'aborted' })
    expect(signals[0]?.aborted).toBe(true)
  })

  it('ends with kind aborted when aborted mid-stream, yields nothing after, and cancels the body', async () => {
    const source = controllableBody()
    source.write('data: {"text":"a"}\n\n')
    const controller = new AbortController()
    const { events, signals } = stream(() => sse(source.body), { signal: controller.signal })
    const first = await events.next()
    expect(first.value).toEqual({ type: 'text-delta', text: 'a' })
    const pending = events.next()
    await delay(10)
    controller.abort()
    await expect(pending).rejects.toMatchObject({ kind: 'aborted' })
    expect(signals[0]?.aborted).toBe(true)
    expect(source.cancelled).toBe(true)
  })

  it('throws aborted after an event the caller held while the signal aborted', async () => {
    const source = controllableBody()
    source.write('data: {"text":"a"}\n\ndata: {"text":"b"}\n\n')
    const controller = new AbortController()
    const { events } = stream(() => sse(source.body), { signal: controller.signal })
    expect((await events.next()).value).toEqual({ type: 'text-delta', text: 'a' })
    controller.abort()
    await expect(events.next()).rejects.toMatchObject({ kind: 'aborted' })
    expect((await events.next()).done).toBe(true)
  })

  it('releases the connection on an early break', async () => {
    const source = controllableBody()
    source.write('data: {"text":"a"}\n\n')
    const { events, signals } = stream(() => sse(source.body))
    for await (const event of events) {
      expect(event.type).toBe('text-delta')
      break
    }
    expect(signals[0]?.aborted).toBe(true)
    expect(source.cancelled).toBe(true)
  })

  it('fails a silent stream with kind timeout and releases it', async () => {
    const source = controllableBody()
    source.write('data: {"text":"a"}\n\n')
    const { events, signals } = stream(() => sse(source.body), { idleTimeoutMs: 80 })
    const { seen, error } = await drain(events)
    expect(seen).toEqual([{ type: 'text-delta', text: 'a' }])
    expect(error).toMatchObject({ kind: 'timeout', retryable: true })
    expect((error as Error).message).toBe(
      'Acme sent nothing for 80 ms; the request was cancelled (idle timeout).',
    )
    expect(signals[0]?.aborted).toBe(true)
  })

  it('does not count the time the caller holds an event against the idle timeout', async () => {
    const source = controllableBody()
    source.write('data: {"text":"a"}\n\ndata: {"text":"b"}\n\n')
    const { events } = stream(() => sse(source.body), { idleTimeoutMs: 80 })
    expect((await events.next()).value).toEqual({ type: 'text-delta', text: 'a' })
    await delay(300)
    expect((await events.next()).value).toEqual({ type: 'text-delta', text: 'b' })
    source.write('event: end\ndata: {}\n\n')
    source.close()
    expect((await events.next()).value).toMatchObject({ type: 'message' })
    expect((await events.next()).done).toBe(true)
  })

  it('delivers the messages pushed before an error event of the same chunk, then throws it', async () => {
    const source = controllableBody()
    source.write('data: {"text":"a"}\n\nevent: error\ndata: {"message":"busy"}\n\ndata: {"text":"never"}\n\n')
    const { seen, error } = await drain(stream(() => sse(source.body)).events)
    expect(seen).toEqual([{ type: 'text-delta', text: 'a' }])
    expect(error).toMatchObject({
      kind: 'overloaded',
      message: 'Acme reported an error in the stream: busy.',
    })
    expect(source.cancelled).toBe(true)
  })

  it('reports a body that ends before the terminal event as a retryable network error', async () => {
    const source = controllableBody()
    source.write('data: {"text":"a"}\n\ndata: {"text":"cut')
    source.close()
    const { seen, error } = await drain(stream(() => sse(source.body)).events)
    expect(seen).toEqual([{ type: 'text-delta', text: 'a' }])
    expect(error).toMatchObject({ kind: 'network', retryable: true })
  })

  it('turns a malformed frame into the shared protocol error', async () => {
    const source = controllableBody()
    source.write('data: {"text":\n\n')
    const { error } = await drain(stream(() => sse(source.body)).events)
    expect(error).toMatchObject({ kind: 'server', retryable: false })
    expect((error as AdapterError).cause).toMatchObject({ excerpt: '{"text":' })
  })

  it('fails a 2xx answer that is JSON instead of a stream', async () => {
    const { error } = await drain(
      stream(() => new Response('{"choices":[]}', { headers: { 'content-type': 'application/json' } }))
        .events,
    )
    expect(error).toMatchObject({ kind: 'unknown', retryable: false, status: 200 })
    expect((error as Error).message).toContain('instead of an event stream')
  })

  it('maps what open threw with mapError, and lets AgentErrors through untouched', async () => {
    const validation = new ValidationError('bad option')
    const first = await drain(
      stream(() => {
        throw validation
      }).events,
    )
    expect(first.error).toBe(validation)
    const second = await drain(
      stream(() => {
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
        })
      }).events,
    )
    expect(isAdapterError(second.error)).toBe(true)
    expect(second.error).toMatchObject({ kind: 'network' })
  })

  it('stops waiting for the end of a complete response that the server keeps open', async () => {
    const source = controllableBody()
    source.write('data: {"text":"a"}\n\nevent: end\ndata: {}\n\n')
    const started = performance.now()
    const { seen, error } = await drain(stream(() => sse(source.body)).events)
    expect(error).toBeUndefined()
    expect(seen.at(-1)).toMatchObject({ type: 'message' })
    expect(performance.now() - started).toBeLessThan(3_000)
    expect(source.cancelled).toBe(true)
  })

  it('never throws a non-AdapterError for a failed read', async () => {
    const failing = new ReadableStream<Uint8Array>({
      pull() {
        throw new TypeError('terminated', {
          cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
        })
      },
    })
    const { error } = await drain(stream(() => sse(failing)).events)
    expect(error).toBeInstanceOf(AdapterError)
    expect(error).toMatchObject({
      kind: 'network',
      message: 'The connection to Acme failed: other side closed (UND_ERR_SOCKET).',
    })
  })
})
