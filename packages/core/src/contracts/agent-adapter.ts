import type { AnyMessage, ContentBlock, StopReason, TokenUsage } from './messages.js'

/**
 * A tool as an adapter sees it: what the model may call. Core's {@link Tool} adds `execute`.
 */
export interface ToolDefinition {
  name: string
  description: string
  /** A JSON Schema object describing the tool's input. */
  inputSchema: Record<string, unknown>
}

/** Options of one {@link AgentAdapter.stream} call, built by the session for each model request. */
export interface AdapterStreamOptions {
  model: string
  /**
   * The persisted conversation before `prompt`, in `seq` order. A stateless provider replays it;
   * a stateful one may skip it when `resume` is given (rules A-REQ-009, A-REQ-010).
   */
  history: AnyMessage[]
  systemPrompt?: string
  tools?: ToolDefinition[]
  /** A provider session id that an earlier `session` {@link AdapterMessage} reported. */
  resume?: string
  /** Cancels the request. The adapter MUST close the connection and throw kind `aborted` (A-ABT-002, A-ABT-003). */
  signal?: AbortSignal
  maxOutputTokens?: number
  temperature?: number
  /** Provider-specific options, keyed by provider name (`{ openai: { … } }`). */
  providerOptions?: Record<string, unknown>
  /**
   * Structured output requested by the caller: the final text must be JSON matching `schema`. An
   * adapter with capability `structuredOutput` MUST send it through the provider's native
   * mechanism, for this call only, and stream the JSON as text (A-REQ-011, A-REQ-012); the kernel
   * parses and validates the text either way. Default is none.
   */
  output?: { name: string; schema: Record<string, unknown> }
}

/** What an adapter yields while a model response streams. */
export type AdapterMessage =
  | { type: 'text-delta'; text: string }
  | { type: 'thinking-delta'; text: string }
  /** A fully assembled tool call (arguments parsed). */
  | { type: 'tool-call'; id: string; name: string; input: unknown }
  /** The complete response: exactly one per model response, after its deltas (A-STR-005). */
  | { type: 'message'; content: ContentBlock[]; stopReason: StopReason | undefined }
  /** Usage of this response. Adapters report it once per response; core adds up what it receives. */
  | { type: 'usage'; usage: TokenUsage }
  /** The provider's own id for this conversation, sent back as `resume` next time. */
  | { type: 'session'; sessionId: string }

/**
 * The plugin boundary to a model provider.
 *
 * Called by a session once per model request. An adapter reports a failure by throwing an
 * {@link AdapterError}; it MUST NOT swallow one, and MUST NOT retry once it has yielded an event
 * (A-REQ-007): retries are the kernel's job.
 */
export interface AgentAdapter {
  /** Contract version. Default is `'v1'`. */
  readonly specificationVersion?: 'v1'
  /** A short provider name: `'claude'`, `'openai'`, `'gemini'` … used as `AdapterError.provider`. */
  getName(): string
  /**
   * Optional: the model this adapter asks for when a request names none (`options.model` empty).
   * Shown as `session.model` and in `step-start` events when neither the session nor the agent
   * names a model. Default is absent (shown as `''`).
   */
  readonly defaultModel?: string | undefined
  /** Streams one model response for `prompt` after `options.history`. */
  stream(prompt: string | ContentBlock[], options: AdapterStreamOptions): AsyncIterable<AdapterMessage>
  /**
   * Optional: throws a `ValidationError` (naming the option) for a send option this adapter would
   * refuse — a reserved or conflicting `providerOptions` field, a sampling option the API version
   * does not take, an output schema it cannot send. The kernel calls it before a send stores or
   * sends anything (with `history` empty and no `signal` or `resume`), so a refused option writes
   * nothing and cannot poison the session. Synchronous and without I/O.
   */
  checkOptions?(options: AdapterStreamOptions): void
}
