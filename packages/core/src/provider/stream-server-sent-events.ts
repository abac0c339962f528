import type { AdapterMessage } from '../contracts/agent-adapter.js'
import type { AdapterError } from '../errors/adapter-error.js'
import { isAgentError } from '../errors/agent-error.js'
import { IdleWatchdog } from './idle-watchdog.js'
import type { ProviderIdentity } from './provider-identity.js'
import { ServerSentEventParser } from './server-sent-event-parser.js'
import { abortedError, idleTimeoutError, notAStreamError } from './stream-errors.js'

/** How long to wait for the end of a body whose response is already complete. */
export const DRAIN_GRACE_MS = 1_000

/**
 * A provider's stream protocol, as one request's state machine: turns each server-sent event into
 * {@link AdapterMessage}s. The vendor part of a streaming adapter (`map-<vendor>-stream.ts`).
 *
 * It MUST be synchronous and push onto `output` (never yield): {@link streamServerSentEvents}
 * owns the only async generator between the socket and the caller.
 */
export interface ServerSentEventMapper {
  /**
   * Handles one event; pushes what it means onto `output`. Throws an `AdapterError` for an error
   * event or a malformed frame (`parseJsonFrame`); the messages pushed before are still delivered.
   */
  onEvent(event: string | undefined, data: string, output: AdapterMessage[]): void
  /**
   * Whether the response is complete (its terminal event arrived and its closing messages were
   * pushed). Events after it are ignored and the rest of the body is only drained.
   */
  readonly complete: boolean
  /** Whether a bare JSON object in the stream is an event of its own (see `ServerSentEventParserOptions`). */
  readonly unframedJson?: boolean
  /**
   * The body ended: pushes the closing messages if the protocol ends that way, or throws
   * `incompleteStreamError` when the terminal event never came (never a success).
   */
  onEnd(output: AdapterMessage[]): void
}

/** What {@link StreamServerSentEventsOptions.open} resolves to: the HTTP response and its mapper. */
export interface OpenedEventStream {
  /** The raw streaming response (status 2xx), its body unread. */
  response: Response
  /** A fresh mapper for this response. */
  mapper: ServerSentEventMapper
}

/**
 * What {@link streamServerSentEvents} needs of an adapter beyond one request: who it is, how long
 * a stream may stay silent, how its vendor errors map. An adapter makes one in its constructor.
 */
export interface ServerSentEventTransport {
  /** The adapter, as errors name it. */
  readonly provider: ProviderIdentity
  /** Silence allowed before a request fails with kind `timeout` (`Infinity`: none). */
  readonly idleTimeoutMs: number
  /**
   * Maps what `open` or the body read threw (an SDK error class, a network failure) to an
   * `AdapterError`. Not called for aborts, idle timeouts and errors that already are `AgentError`s.
   */
  mapError(error: unknown): AdapterError
}

/**
 * Builds and sends one request with `signal` (validating options first, so that a bad one throws
 * before anything is sent) and resolves to the raw response and its mapper. Runs inside the
 * stream, after the already-aborted check. An HTTP error SHOULD be thrown as the SDK throws it;
 * `mapError` maps it.
 */
export type OpenEventStream = (signal: AbortSignal) => Promise<OpenedEventStream>

const STREAM = { stream: true } as const
const JSON_CONTENT = /\bapplication\/(?:[\w.+-]+\+)?json\b/i

/**
 * Streams one model response over server-sent events: the one async generator between the socket
 * and the caller, shared by every adapter of this repository (and available to any other).
 *
 * It checks the caller's signal before any I/O, calls `open`, reads the body chunk by chunk,
 * parses events with {@link ServerSentEventParser} and hands each to the vendor `mapper`, which
 * pushes messages that are yielded in order. It guarantees, for every adapter alike:
 *
 * - abort (before the request, while waiting for headers, mid-stream) → `AdapterError` kind
 *   `aborted`, nothing yielded afterwards, the connection closed;
 * - no byte for `idleTimeoutMs` → kind `timeout`; the time the caller holds an event does not
 *   count (see {@link IdleWatchdog});
 * - an early `break` closes the connection; a complete response lets the body end so that the
 *   connection can be reused (at most {@link DRAIN_GRACE_MS} of waiting);
 * - a `2xx` answer that is JSON instead of a stream fails with kind `unknown`;
 * - messages pushed before an error are delivered, then the error is thrown;
 * - per chunk: one read, one decode, no promise, closure or timer work beyond the read itself.
 *
 * @example
 * // In the constructor:
 * this.#transport = { provider: identity, idleTimeoutMs, mapError: (error) => mapAcmeError(error) }
 * // The whole of stream():
 * stream(prompt, options) {
 *   return streamServerSentEvents(this.#transport, options.signal, async (signal) => ({
 *     response: await fetch(url, { method: 'POST', body: JSON.stringify(toAcme(prompt, options)), signal }),
 *     mapper: new AcmeStreamMapper(),
 *   }))
 * }
 */
export async function* streamServerSentEvents(
  transport: ServerSentEventTransport,
  callerSignal: AbortSignal | undefined,
  open: OpenEventStream,
): AsyncGenerator<AdapterMessage, void, undefined> {
  const { provider, idleTimeoutMs } = transport
  const controller = new AbortController()
  let stop: 'aborted' | 'timeout' | undefined
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined
  // Aborting the request errors the body of a real fetch; cancelling the reader also ends a read
  // of any other body (a custom fetch, a wrapped stream).
  const halt = (cause: 'aborted' | 'timeout'): void => {
    if (stop !== undefined) return
    stop = cause
    watchdog.stop()
    controller.abort()
    reader?.cancel().catch(() => undefined)
    rejectOpen?.(new Error('stopped before the response arrived'))
  }
  let rejectOpen: ((reason: unknown) => void) | undefined
  const watchdog = new IdleWatchdog(idleTimeoutMs, () => halt('timeout'))
  const onAbort = (): void => halt('aborted')
  let ended = false
  try {
    if (callerSignal?.aborted) {
      stop = 'aborted'
      throw callerSignal.reason
    }
    callerSignal?.addEventListener('abort', onAbort, { once: true })
    watchdog.start()
    const opening = open(controller.signal)
    opening.then(
      (late) => {
        if (stop !== undefined) late.response.body?.cancel().catch(() => undefined)
      },
      () => undefined,
    )
    // Even an `open` that ignores its signal cannot keep an aborted stream waiting.
    const { response, mapper } = await new Promise<OpenedEventStream>((resolve, reject) => {
      rejectOpen = reject
      opening.then(resolve, reject)
    })
    rejectOpen = undefined
    if (stop !== undefined) {
      await response.body?.cancel().catch(() => undefined)
      throw new Error('stopped while the response headers arrived')
    }
    watchdog.touch()
    const contentType = response.headers.get('content-type') ?? ''
    if (response.body === null || JSON_CONTENT.test(contentType)) {
      const text = await response.text().catch(() => '')
      throw notAStreamError(provider, response.status, contentType, text)
    }
    reader = response.body.getReader()
    const decoder = new TextDecoder()
    const output: AdapterMessage[] = []
    let failure: unknown
    const parser = new ServerSentEventParser(
      (event, data) => {
        if (failure !== undefined || mapper.complete) return
        try {
          mapper.onEvent(event, data, output)
        } catch (error) {
          failure = error
        }
      },
      { unframedJson: mapper.unframedJson === true },
    )
    for (;;) {
      const chunk = await reader.read()
      if (stop !== undefined) throw new Error('stopped while reading')
      if (chunk.done) {
        ended = true
        parser.feed(decoder.decode())
        parser.end()
        if (failure === undefined && !mapper.complete) {
          try {
            mapper.onEnd(output)
          } catch (error) {
            failure = error
          }
        }
      } else {
        watchdog.touch()
        parser.feed(decoder.decode(chunk.value, STREAM))
      }
      if (output.length > 0) {
        watchdog.hold()
        for (let index = 0; index < output.length; index++) {
          const message = output[index] as AdapterMessage
          yield message
          // Stopped while the caller held the event: a complete response stays a success.
          if (stop !== undefined) {
            if (message.type === 'message') return
            throw new Error('stopped while the caller held an event')
          }
        }
        output.length = 0
        watchdog.release()
      }
      if (failure !== undefined) throw failure
      if (ended) return
      if (mapper.complete) {
        ended = await drain(reader, watchdog)
        return
      }
    }
  } catch (error) {
    throw toAdapterError(error)
  } finally {
    watchdog.stop()
    callerSignal?.removeEventListener('abort', onAbort)
    if (!ended) {
      // An early `break`, an error or a stop: release the connection.
      controller.abort()
      reader?.cancel().catch(() => undefined)
    }
    rejectOpen = undefined
  }

  // A stop wins over whatever the interrupted read threw.
  function toAdapterError(error: unknown): unknown {
    if (stop === 'aborted') return abortedError(provider, callerSignal?.reason)
    if (stop === 'timeout') return idleTimeoutError(provider, idleTimeoutMs, error)
    if (isAgentError(error)) return error
    return transport.mapError(error)
  }
}

/** Reads the rest of a complete response (normally nothing) so that its connection can be reused. */
async function drain(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  watchdog: IdleWatchdog,
): Promise<boolean> {
  watchdog.shorten(DRAIN_GRACE_MS)
  try {
    for (;;) if ((await reader.read()).done) return true
  } catch {
    return false
  }
}
