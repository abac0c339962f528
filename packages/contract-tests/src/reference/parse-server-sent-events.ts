/** One server-sent event: its `event:` type (default `message`) and its `data:` lines joined by `\n`. */
export interface ServerSentEvent {
  readonly event: string
  readonly data: string
}

/**
 * Parses a byte stream as server-sent events per the WHATWG grammar: CR, LF and CRLF end lines
 * (also when split across chunks), `:` lines are comments, multi-line `data:` joins with `\n`,
 * an event is dispatched at a blank line, and a partial event at the end is dropped. UTF-8 is
 * decoded in streaming mode, so a character split across chunks survives.
 *
 * `onChunk` runs for every chunk read (the caller re-arms its idle timer there).
 */
export async function* parseServerSentEvents(
  body: ReadableStream<Uint8Array>,
  onChunk: () => void = () => {},
): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader()
  const decoder = new TextDecoder('utf-8')
  let buffer = ''
  let eventType = ''
  let data: string[] = []
  let done = false
  const take = function* (line: string): Generator<ServerSentEvent> {
    if (line === '') {
      if (data.length > 0) yield { event: eventType || 'message', data: data.join('\n') }
      eventType = ''
      data = []
      return
    }
    if (line.startsWith(':')) return
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'event') eventType = value
    else if (field === 'data') data.push(value)
  }
  try {
    for (;;) {
      const chunk = await reader.read()
      if (chunk.done) {
        done = true
        buffer += decoder.decode()
      } else {
        onChunk()
        buffer += decoder.decode(chunk.value, { stream: true })
      }
      let start = 0
      for (let index = 0; index < buffer.length; index += 1) {
        const character = buffer[index]
        if (character !== '\n' && character !== '\r') continue
        // A CR at the very end may be the first half of a CRLF split across chunks.
        if (character === '\r' && index === buffer.length - 1 && !done) break
        const line = buffer.slice(start, index)
        if (character === '\r' && buffer[index + 1] === '\n') index += 1
        start = index + 1
        yield* take(line)
      }
      buffer = buffer.slice(start)
      if (done) return
    }
  } finally {
    if (!done) await reader.cancel().catch(() => undefined)
    reader.releaseLock()
  }
}
