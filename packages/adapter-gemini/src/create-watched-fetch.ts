import type { IdleWatchdog } from './idle-watchdog.js'

/** What a {@link createWatchedFetch} saw of its response. */
export interface WatchedResponse {
  /** Headers of the last response (for `Retry-After` on errors). */
  headers: Headers | undefined
  /** The last characters received, for the excerpt of a malformed-frame error. */
  tail: string
}

/** Enough for the frames the SDK has read ahead of the one it is parsing. */
const TAIL_LENGTH = 16_384

/**
 * Wraps a `fetch` so that every byte of the response body restarts `watchdog`, and records the
 * response headers and the last bytes received into `seen`.
 *
 * The SDK only surfaces whole SSE frames, so the idle timeout has to look at bytes one level lower.
 * Used by `GeminiAdapter` as `httpOptions.fetch` of each request; internal to this package.
 */
export function createWatchedFetch(
  baseFetch: typeof fetch,
  watchdog: IdleWatchdog,
  seen: WatchedResponse,
): typeof fetch {
  return async (input, init) => {
    watchdog.touch()
    const response = await baseFetch(input, init)
    watchdog.touch()
    seen.headers = response.headers
    if (response.body === null) return response
    const decoder = new TextDecoder()
    const watched = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          watchdog.touch()
          seen.tail = (seen.tail + decoder.decode(chunk, { stream: true })).slice(-TAIL_LENGTH)
          controller.enqueue(chunk)
        },
      }),
    )
    return new Response(watched, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    })
  }
}
