import type { StopReason } from '@agentx/core'

/**
 * Abstract scenarios for the fake provider: what the model "answers", independent of any wire
 * protocol. A {@link WireDialect} turns a scenario into one provider's exact bytes.
 */

/** One block of a scripted model response, in the order the model streams them. */
export type ScenarioBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; text: string; signature?: string }
  /**
   * A tool call. `input` is sent as JSON arguments; `rawArguments` (when given) is sent as is
   * instead, e.g. invalid JSON or an empty string.
   */
  | { type: 'tool-call'; id: string; name: string; input?: unknown; rawArguments?: string }

/** Provider token counts in the abstract (the dialect maps them onto its own fields). */
export interface ScenarioUsage {
  /** All input tokens, cached included. */
  inputTokens: number
  /** All output tokens, reasoning included. */
  outputTokens: number
  cacheReadTokens?: number
  cacheWriteTokens?: number
  reasoningTokens?: number
}

/** A successful streamed response. */
export interface ScenarioResponse {
  blocks: ScenarioBlock[]
  /** The stop reason as core names it; `rawStopReason` overrides the wire value (for unknown reasons). */
  stopReason: StopReason
  rawStopReason?: string
  /** Omitted: the provider sends no usage at all (A-USG-02). */
  usage?: ScenarioUsage
  /** When `true`, usage arrives in a trailing frame that carries no content (A-USG-03). */
  usageInTrailingFrame?: boolean
  /** The provider's response/session id (OpenAI Responses `resp_…`), when the dialect has one. */
  responseId?: string
  /** Split every text and tool-argument fragment into deltas of at most this many characters. Default is whole blocks. */
  deltaSize?: number
  /** Interleave the argument fragments of parallel tool calls (A-TOOL-02). */
  interleaveToolCalls?: boolean
}

/** An error as the provider would describe it, abstract. */
export interface ScenarioError {
  /** What kind of error the scenario means; the dialect picks the provider's status, type and body. */
  kind:
    | 'rate_limit'
    | 'overloaded'
    | 'authentication'
    | 'permission'
    | 'invalid_request'
    | 'not_found'
    | 'context_length'
    | 'server'
    | 'unknown_resume'
  /** HTTP status; default is the dialect's usual status for `kind`. */
  status?: number
  message?: string
  /** Extra response headers, e.g. `{ 'retry-after': '2' }`. */
  headers?: Record<string, string>
}

/** How the server delivers the encoded frames, and what goes wrong on the way. */
export interface ScenarioDelivery {
  /** Write the bytes in pieces of this size (1 = split at every byte, A-STR-02). Default is one write per frame. */
  chunkBytes?: number
  /** Use CRLF line endings instead of LF (A-STR-03). */
  crlf?: boolean
  /**
   * Spread the JSON of every `data:` line over several `data:` lines (pretty-printed), which a
   * client must join with `\n` (A-STR-003).
   */
  multiLineData?: boolean
  /** Add SSE comment / keep-alive lines between frames (A-STR-03). */
  keepAlive?: boolean
  /** Pause this long before frame `pauseBeforeFrame` (A-STR-04), or forever with `Infinity` (stall). */
  pauseMs?: number
  pauseBeforeFrame?: number
  /**
   * While pausing, send an SSE comment line (`: heartbeat`) this often, so the client's idle
   * timer never fires and only the client itself can end the response (A-ABT-003/004). Default is
   * silence.
   */
  heartbeatMs?: number
  /** With `pauseBeforeFrame: 0`: hold back the response headers too, until the pause ends (A-ABT-005). */
  holdHeaders?: boolean
  /**
   * End the response cleanly after this many frames, without the protocol's terminal frame
   * (A-ERR-005). With `truncateMode: 'reset'` the socket is destroyed instead.
   */
  truncateAfterFrame?: number
  /** How a truncated response ends: `end` (a clean end of the HTTP body) or `reset` (socket destroyed). Default is `end`. */
  truncateMode?: 'end' | 'reset'
  /** Replace frame N with a malformed one (A-ERR-04). */
  malformedFrame?: number
  /**
   * After this many frames (counted in the dialect's `encodeResponse` output, so pick a response
   * with enough deltas), send the dialect's in-stream error frame for `Scenario.streamError` and
   * end the response (A-ERR-004).
   */
  errorFrameAfter?: number
  /**
   * Insert a well-formed frame of an event type the client cannot know before every content
   * frame (A-STR-003). Needs `WireDialect.encodeUnknownFrame`; ignored by dialects without it.
   */
  unknownFrames?: boolean
}

/**
 * A recorded answer, served byte for byte instead of one the dialect encodes: a provider's real
 * stream kept in a fixture file, or an error body exactly as the provider sent it.
 */
export interface ScenarioReplay {
  /** The HTTP status. Default is `200`. */
  status?: number
  /**
   * The response headers. Default is the dialect's stream headers for a 2xx status, else
   * `content-type: application/json`.
   */
  headers?: Record<string, string>
  /**
   * The exact body. It is cut into frames after each blank line (`\n\n`, `\r\n\r\n`), so that
   * `delivery` (pauses, cuts, splitting, malformed frames) works on it as on an encoded response.
   */
  body: string
}

/** Everything the fake provider does for one request. */
export interface Scenario {
  /** A streamed answer. Exactly one of `response`, `httpError` and `replay` is set. */
  response?: ScenarioResponse
  /** Answer with an HTTP error status instead of a stream. */
  httpError?: ScenarioError
  /** Answer with recorded bytes (a fixture) instead of an encoded response. */
  replay?: ScenarioReplay
  /** With `delivery.errorFrameAfter`: the error sent inside the stream. */
  streamError?: ScenarioError
  delivery?: ScenarioDelivery
}
