/**
 * Receives each dispatched server-sent event: its `event:` name (`undefined` when the event had
 * none) and its `data:` lines joined by `\n`.
 */
export type ServerSentEventHandler = (event: string | undefined, data: string) => void

const LF = 10
const COLON = 58
const SPACE = 32
const OPEN_BRACE = 123

/** Options of {@link ServerSentEventParser}. */
export interface ServerSentEventParserOptions {
  /**
   * A line that starts with `{` is a whole event of its own (no event name), also when it ends
   * the stream without a line ending: for a server that writes a bare JSON error object into its
   * event stream (Gemini does, mid-stream). Off by default: the grammar ignores such a line.
   */
  unframedJson?: boolean
}

/**
 * A push parser for `text/event-stream` that follows the WHATWG grammar: LF, CRLF and CR line
 * endings (a CRLF split across two chunks included), `:` comment and keep-alive lines, `event:`
 * names, multi-line `data:` joined with `\n`, one optional space after the colon, unknown fields
 * ignored. An event is dispatched at its blank line, synchronously, from inside
 * {@link ServerSentEventParser.feed}; an event still open when the stream ends is dropped (a cut
 * stream must never look complete).
 *
 * Used by {@link streamServerSentEvents}, which feeds it the decoded text of each body chunk; an
 * adapter that reads its body some other way can feed it directly. It keeps no per-event state
 * beyond the event being read and allocates nothing per line but the strings it hands over.
 *
 * @example
 * const parser = new ServerSentEventParser((event, data) => console.log(event, JSON.parse(data)))
 * parser.feed('event: ping\ndata: {}\n\n')
 */
export class ServerSentEventParser {
  readonly #onEvent: ServerSentEventHandler
  /** Text after the last line ending seen (a line still arriving). */
  #rest = ''
  /** The last chunk ended with CR: an LF starting the next one belongs to that line ending. */
  #skipLeadingLf = false
  #event: string | undefined
  #data: string | undefined
  readonly #unframedJson: boolean

  constructor(onEvent: ServerSentEventHandler, options: ServerSentEventParserOptions = {}) {
    this.#onEvent = onEvent
    this.#unframedJson = options.unframedJson === true
  }

  /** Parses the next piece of the stream's text; dispatches every event it completes. */
  feed(chunk: string): void {
    let text = chunk
    let start = 0
    if (this.#skipLeadingLf) {
      this.#skipLeadingLf = false
      if (text.charCodeAt(0) === LF) start = 1
    }
    if (this.#rest !== '') {
      text = this.#rest + text.slice(start)
      start = 0
      this.#rest = ''
    }
    const length = text.length
    // Most streams use LF only: look for CR once per chunk, not once per line.
    let nextCr = text.indexOf('\r', start)
    while (start < length) {
      let end = text.indexOf('\n', start)
      let isCr = false
      if (nextCr !== -1) {
        if (nextCr < start) nextCr = text.indexOf('\r', start)
        if (nextCr !== -1 && (end === -1 || nextCr < end)) {
          end = nextCr
          isCr = true
        }
      }
      if (end === -1) break
      this.#line(text, start, end)
      if (!isCr) start = end + 1
      else if (end + 1 === length) {
        start = length
        this.#skipLeadingLf = true
      } else start = text.charCodeAt(end + 1) === LF ? end + 2 : end + 1
    }
    if (start < length) this.#rest = start === 0 ? text : text.slice(start)
  }

  /** The stream ended: drops the event still being read, as the grammar says. Reusable afterwards. */
  end(): void {
    const rest = this.#rest
    if (this.#unframedJson && rest.charCodeAt(0) === OPEN_BRACE) this.#onEvent(undefined, rest)
    this.#rest = ''
    this.#skipLeadingLf = false
    this.#event = undefined
    this.#data = undefined
  }

  #line(text: string, start: number, end: number): void {
    if (start === end) {
      const data = this.#data
      const event = this.#event
      this.#data = undefined
      this.#event = undefined
      if (data !== undefined) this.#onEvent(event, data)
      return
    }
    const first = text.charCodeAt(start)
    if (first === COLON) return
    if (first === OPEN_BRACE && this.#unframedJson) {
      this.#onEvent(undefined, text.slice(start, end))
      return
    }
    let colon = text.indexOf(':', start)
    if (colon === -1 || colon > end) colon = end
    let valueStart = colon + 1
    if (valueStart < end && text.charCodeAt(valueStart) === SPACE) valueStart++
    const value = valueStart >= end ? '' : text.slice(valueStart, end)
    const fieldLength = colon - start
    if (fieldLength === 4 && text.startsWith('data', start)) {
      this.#data = this.#data === undefined ? value : `${this.#data}\n${value}`
    } else if (fieldLength === 5 && text.startsWith('event', start)) {
      this.#event = value
    }
    // `id`, `retry` and unknown fields carry nothing a model stream needs.
  }
}
