import type { ContentBlock } from '@agentx/core'
import type { ScenarioError, ScenarioResponse } from '../fake-provider/scenario.js'

/** An HTTP request as the fake provider received it. */
export interface ReceivedRequest {
  method: string
  /** Path and query, e.g. `/v1/messages` or `/v1beta/models/m:streamGenerateContent?alt=sse`. */
  url: string
  /** Lower-cased header names. */
  headers: Record<string, string | string[] | undefined>
  /** The raw body text. */
  body: string
}

/** A provider request decoded into core terms, so rules can check history, tools, system prompt and resume. */
export interface DecodedRequest {
  model: string | undefined
  stream: boolean
  /** The API key the client authenticated with (from whatever header the provider uses). */
  apiKey: string | undefined
  systemPrompt: string | undefined
  /** The conversation sent, in order, as core content blocks. Tool results are role `user`. */
  messages: Array<{ role: 'user' | 'assistant'; content: ContentBlock[] }>
  /** Names of the tools offered. */
  tools: string[]
  /** The provider session id sent back (OpenAI `previous_response_id`), if any. */
  resume: string | undefined
  /**
   * The structured output the request asks for through the provider's native field (Anthropic
   * `output_config.format`, OpenAI Responses `text.format`, Chat Completions `response_format`,
   * Gemini `generationConfig.responseMimeType` + `responseJsonSchema`), if any. Checked by
   * A-REQ-011 and A-REQ-012. Default is `undefined` (a dialect that does not decode it).
   */
  output?: DecodedOutput | undefined
}

/** A structured-output request as the wire carried it. */
export interface DecodedOutput {
  /** The JSON Schema the reply must match, as sent (a provider may have adapted it, e.g. closed objects). */
  schema: Record<string, unknown>
  /** The format's name, for protocols that carry one (OpenAI). */
  name?: string
  /** Whether strict schema adherence was asked for, for protocols that have the flag (OpenAI). */
  strict?: boolean
}

/** An HTTP error response as the provider sends it. */
export interface EncodedHttpError {
  status: number
  headers: Record<string, string>
  body: string
}

/**
 * One provider's wire protocol, for the loopback fake provider: turns abstract scenarios into the
 * provider's exact bytes and decodes the requests its SDK sends.
 *
 * Used by `startFakeProvider({ dialect })`. Ship one per protocol; a third party with a compatible
 * server reuses ours.
 */
export interface WireDialect {
  /** A stable name, e.g. `anthropic-messages`. */
  readonly name: string
  /**
   * The path prefix the SDK's `baseURL` option needs, appended to the server origin
   * (`'/v1'` for OpenAI; `''` for Anthropic and Gemini, whose SDKs add their own version segment).
   */
  readonly basePath: string
  /** Whether this request is a model call this dialect answers (method and path). */
  matches(request: ReceivedRequest): boolean
  /** Response headers of a successful stream (content type and the like). */
  streamHeaders(): Record<string, string>
  /**
   * The frames of a successful streamed response, each a complete wire unit (an SSE event with its
   * terminating blank line), LF line endings. The last frame is the protocol's terminal frame.
   */
  encodeResponse(response: ScenarioResponse, request: DecodedRequest): string[]
  /** An in-stream error frame (as the provider sends mid-stream). */
  encodeStreamError(error: ScenarioError): string
  /** A frame that is not valid for this protocol (e.g. `data: {"type":` cut short). */
  encodeMalformedFrame(): string
  /** An HTTP error response. */
  encodeHttpError(error: ScenarioError): EncodedHttpError
  /** Decodes the request body and headers into core terms. */
  decodeRequest(request: ReceivedRequest): DecodedRequest
  /**
   * A well-formed frame of an event type no client knows yet (providers add event types over
   * time; clients must ignore them, A-STR-003). Optional: without it that check is left out.
   */
  encodeUnknownFrame?(): string
  /**
   * The optional `ScenarioUsage` parts this protocol can express on the wire
   * (`cacheReadTokens`, `cacheWriteTokens`, `reasoningTokens`). A-USG-001 expects an adapter to
   * report exactly these. Default is none (only input, output and total are checked).
   */
  readonly usageParts?: readonly UsagePart[]
}

/** An optional part of token usage that a protocol may report. */
export type UsagePart = 'cacheReadTokens' | 'cacheWriteTokens' | 'reasoningTokens'
