/**
 * Message and content types: what a session persists and what adapters exchange.
 *
 * Everything here is plain JSON data so that any {@link AgentPersister} can store it and return a
 * deep-equal copy.
 */

/** Any JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }

/**
 * Provider-specific data attached to a content block or message, keyed by provider name
 * (`{ claude: { … } }`). Persisters MUST round-trip it unchanged (rule P-MSG-020).
 */
export type ProviderMetadata = Record<string, unknown>

/** Who produced a message. */
export type MessageType = 'user' | 'agent' | 'tool' | 'system'

/**
 * Why a model response ended. Adapters map their provider's reasons onto this list; a reason
 * they do not know becomes `other` (rule A-FIN-004).
 */
export type StopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'tool_use'
  | 'content_filter'
  | 'aborted'
  | 'error'
  | 'other'

/** A piece of text. */
export interface TextBlock {
  type: 'text'
  text: string
  providerMetadata?: ProviderMetadata
}

/** An image, inline as base64 `data` or by `url`. */
export interface ImageBlock {
  type: 'image'
  /** IANA media type, e.g. `image/png`. */
  mediaType: string
  /** Base64 bytes. */
  data?: string
  url?: string
  providerMetadata?: ProviderMetadata
}

/** The model's reasoning. `signature` (when the provider gives one) must be sent back unchanged. */
export interface ThinkingBlock {
  type: 'thinking'
  text: string
  signature?: string
  providerMetadata?: ProviderMetadata
}

/** A request of the model to run a tool. */
export interface ToolUseBlock {
  type: 'tool_use'
  id: string
  name: string
  input: unknown
  providerMetadata?: ProviderMetadata
}

/** The result of running a tool, answering the {@link ToolUseBlock} with the same id. */
export interface ToolResultBlock {
  type: 'tool_result'
  toolUseId: string
  content: string | ContentBlock[]
  isError?: boolean
  providerMetadata?: ProviderMetadata
}

/** One block of message content. */
export type ContentBlock = TextBlock | ImageBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock

/**
 * Token counts, with the same meaning for every provider.
 *
 * `inputTokens` counts all input, cached included (`cacheReadTokens` and `cacheWriteTokens` are
 * parts of it); `outputTokens` counts all output, reasoning included (`reasoningTokens` is a part
 * of it); `totalTokens` is `inputTokens + outputTokens`.
 */
export interface TokenUsage {
  inputTokens: number
  outputTokens: number
  cacheReadTokens?: number
  cacheWriteTokens?: number
  reasoningTokens?: number
  totalTokens: number
}

/** A persisted message of a session. */
export interface AnyMessage {
  /** Opaque id; UUIDv7 when core makes it. Saving a message with the same id again is an upsert. */
  id: string
  sessionId: string
  /** 0, 1, 2 … per session: the order of the conversation. */
  seq: number
  type: MessageType
  content: string | ContentBlock[]
  /** ISO-8601 UTC with milliseconds. */
  timestamp: string
  /** On `agent` messages: the usage of the model response that produced it. */
  usage?: TokenUsage
  stopReason?: StopReason
  /** `true` on a partial reply kept after an abort, a crash or an error, or while it streams. */
  incomplete?: boolean
  metadata?: Record<string, unknown>
  /**
   * On `agent` messages of an agent that defines profiles: the profile that wrote it (`'default'`
   * for the top-level one). Default is absent (an agent without profiles writes none). Persisters
   * MUST round-trip it and keep it absent when it was absent (P-MSG-025).
   */
  agentName?: string
  /**
   * On a `system` message that summarises the conversation: the summary covers every message up to
   * and including seq `throughSeq`, which the model no longer sees. Default is absent (an ordinary
   * message). Persisters MUST round-trip it (P-MSG-025).
   */
  compaction?: MessageCompaction
}

/** What a compaction summary stands for: see {@link AnyMessage.compaction}. */
export interface MessageCompaction {
  /** The last seq the summary covers (inclusive). */
  throughSeq: number
}
