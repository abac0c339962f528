import { ServerSentEventParser } from '@agentx/core/provider'

/** One server-sent event: its `event:` type (default `message`) and its `data:` lines joined by `\n`. */
export interface ServerSentEvent {
  readonly event: string
  readonly data: string
}

/**
 * Reads a byte stream as server-sent events with the shared `ServerSentEventParser` of
 * `@agentx/core/provider` (WHATWG grammar: CR, LF and CRLF line ends, also split across chunks;
 * comments; multi-line `data:`; a partial event at the end dropped). UTF-8 is decoded in
 * streaming mode, so a character split across chunks survives.
 *
 * `onChunk` runs for every chunk read (the reference adapter re-arms its idle timer there).
 */
export async function* parseServerSentEvents(
  body: ReadableStream<Uint8Array>,
  onChunk: () => void = () => {},
): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader()
  const decoder = new TextDecoder('utf-8')
  const ready: ServerSentEvent[] = []
  const parser = new ServerSentEventParser((event, data) => ready.push({ event: event ?? 'message', data }))
  let done = false
  try {
    while (!done) {
      const chunk = await reader.read()
      if (chunk.done) {
        done = true
        parser.feed(decoder.decode())
        parser.end()
      } else {
        onChunk()
        parser.feed(decoder.decode(chunk.value, { stream: true }))
      }
      yield* ready.splice(0)
    }
  } finally {
    if (!done) await reader.cancel().catch(() => undefined)
    reader.releaseLock()
  }
}
