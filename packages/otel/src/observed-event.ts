/**
 * An event as `agent.subscribe` delivers it. Typed loosely on purpose: the instrumentation reads
 * the fields it knows (`SessionEvent` of `@agentx/core`, DESIGN §3 and §10) and ignores the rest,
 * so an agent from a newer or older `@agentx/core` — or any object with the same `subscribe` — can
 * be instrumented, and events this package does not know yet pass through harmlessly.
 */
export interface ObservedEvent {
  readonly type: string
  readonly [field: string]: unknown
}

/** The listener `instrumentAgent` registers: an event and the session it belongs to. */
export type ObservedEventListener = (event: ObservedEvent, session: { readonly id: string }) => void

/**
 * What `instrumentAgent` needs of an agent: `subscribe` (DESIGN §10.8), which every `Agent` of
 * `@agentx/core` has. `getAdapter` is optional: when the agent offers it, the adapter's
 * `getName()` becomes `gen_ai.provider.name` (asked only after the first event, so instrumenting
 * never initializes the agent).
 */
export interface InstrumentableAgent {
  subscribe(listener: ObservedEventListener): () => void
  getAdapter?(): Promise<{ getName(): string }>
}

/** The usage fields read from `step-finish`, `done` and compaction messages. */
export interface ObservedUsage {
  inputTokens?: number
  outputTokens?: number
  cacheReadTokens?: number
  cacheWriteTokens?: number
  reasoningTokens?: number
}

/** A persisted message (`message` events) as far as telemetry reads it. */
export interface ObservedMessage {
  type?: string
  content?: unknown
  stopReason?: string
  incomplete?: boolean
  usage?: ObservedUsage
  compaction?: { throughSeq?: number }
}

/** A content block as far as telemetry reads it. */
export interface ObservedBlock {
  type?: string
  text?: string
  id?: string
  name?: string
  input?: unknown
  toolUseId?: string
  content?: unknown
  isError?: boolean
  mediaType?: string
  data?: string
  url?: string
}
