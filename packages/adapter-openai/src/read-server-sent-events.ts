/** One dispatched server-sent event: its `event:` name (if any) and its `data:` lines joined by `\n`. */
export interface ServerSentEvent {
  event: string | undefined
  data: string
}

/**
 * Decodes a byte stream of `text/event-stream` into events, following the WHATWG grammar: LF,
 * CRLF and CR line endings (also split across chunks), comment and keep-alive lines, `event:`
 * fields, multi-line `data:`. Called by the adapter on the response body the SDK returned.
 *
 * `onBytes` runs for every chunk read, before it is decoded, so that an idle timer can be reset
 * by any byte (keep-alives included). An event that is not terminated by a blank line when the
 * stream ends is dropped, as the grammar says: a cut stream must not look complete.
 */
export async function* readServerSentEvents(
  body: ReadableStream<Uint8Array>,
  onBytes: () => void = () => {},
): AsyncGenerator<ServerSentEvent, void, undefined> {
  const reader = body.getReader()
  const decoder = new TextDecoder('utf-8')
  let buffer = ''
  let data: string[] = []
  let event: string | undefined
  let finished = false
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) {
        finished = true
        buffer += decoder.decode()
      } else {
        onBytes()
        buffer += decoder.decode(value, { stream: true })
      }
      let start = 0
      for (;;) {
        const lineEnd = findLineEnd(buffer, start)
        if (lineEnd === -1) break
        const line = buffer.slice(start, lineEnd)
        const isCr = buffer.charCodeAt(lineEnd) === 13
        if (isCr && lineEnd + 1 === buffer.length && !finished) break // maybe CRLF split across chunks
        start = lineEnd + (isCr && buffer.charCodeAt(lineEnd + 1) === 10 ? 2 : 1)
        if (line === '') {
          if (data.length > 0) yield { event, data: data.join('\n') }
          data = []
          event = undefined
          continue
        }
        if (line.charCodeAt(0) === 58) continue // ':' comment / keep-alive
        const colon = line.indexOf(':')
        const field = colon === -1 ? line : line.slice(0, colon)
        let fieldValue = colon === -1 ? '' : line.slice(colon + 1)
        if (fieldValue.charCodeAt(0) === 32) fieldValue = fieldValue.slice(1)
        if (field === 'data') data.push(fieldValue)
        else if (field === 'event') event = fieldValue
      }
      buffer = buffer.slice(start)
      if (finished) return
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined)
    reader.releaseLock()
  }
}

function findLineEnd(text: string, from: number): number {
  for (let index = from; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code === 10 || code === 13) return index
  }
  return -1
}
