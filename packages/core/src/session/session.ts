import type { AnyMessage, ContentBlock, TokenUsage } from '../contracts/messages.js'
import type { PendingToolCall, ToolAnswer, ToolApproval } from '../tools/tool.js'
import type { SchemaLike } from '../tools/schema.js'
import type { Tool } from '../tools/tool.js'
import type { SendResult, SessionEvent, SessionListener } from './session-events.js'
import type { MessagesQuery } from './session-history.js'
import type { SessionState } from '../contracts/session-state.js'
import type { CompactOptions } from './compaction-options.js'
import type { ForkOptions } from './session-fork.js'
import type { SessionUpdate } from './session-update.js'

/** Options of one `send` or `stream` call; they win over the session's and the agent's. */
export interface SendOptions {
  /** Aborts this send, like `session.abort()`. */
  signal?: AbortSignal
  /** The model for this send. Default is the session's. */
  model?: string
  /** The system prompt for this send. Default is the session's. */
  systemPrompt?: string
  /** More tools for this send; later ones win by name. */
  tools?: Tool[]
  /** Model requests at most (tool loop). Default is the agent's `maxSteps` (20). */
  maxSteps?: number
  maxOutputTokens?: number
  temperature?: number
  /** Provider-specific options keyed by provider name, passed to the adapter. */
  providerOptions?: Record<string, unknown>
  /**
   * The profile of `AgentConfig.agents` that answers this send (`'default'` is the top-level one).
   * Default is the session's `activeAgent`, the profile that answered last.
   */
  agent?: string
  /**
   * Structured output: the reply's final text must be JSON matching `schema` (a JSON Schema
   * object, or a Standard Schema such as a zod 4 or valibot schema). `SendResult.output` holds the
   * parsed (and, for a Standard Schema, validated) value; output that does not parse or validate
   * rejects with a `ValidationError` of code `OUTPUT_INVALID`, the reply staying stored.
   */
  output?: { schema: SchemaLike; name?: string }
}

/** A conversation. Made by the agent (`createSession`, `getSession`), never with `new` by users. */
export interface Session {
  readonly id: string
  readonly state: SessionState
  readonly model: string
  readonly summary: string
  readonly createdAt: string
  readonly lastActivity: string
  readonly providerSessionId: string | undefined
  readonly userId: string | undefined
  readonly appName: string | undefined
  readonly metadata: Record<string, unknown> | undefined
  /**
   * Sends a message and resolves when the reply (and its tool steps) are done, or when the send
   * stops to wait for the application (`SendResult.pending`). `content` is a string, content
   * blocks, or — while `waiting_input` — the answers to every pending call.
   */
  send<Output = unknown>(
    content: string | Array<ContentBlock | ToolApproval | ToolAnswer>,
    options?: SendOptions,
  ): Promise<SendResult<Output>>
  /**
   * Sends a message and yields its events live. A failed send yields its `error` event and then
   * throws that error from the iterator; an abort ends the iteration quietly after `state: aborted`.
   * Leaving the loop early aborts the send. A consumer that lags makes the send wait (bounded buffer).
   */
  stream(
    content: string | Array<ContentBlock | ToolApproval | ToolAnswer>,
    options?: SendOptions,
  ): AsyncIterable<SessionEvent>
  /**
   * Runs the model again for the last user message after `error`, `aborted` or `interrupted`,
   * without storing that message again; an incomplete reply stays stored but leaves the model's
   * history. Events go to `subscribe` listeners. Other states reject with `SessionStateError`.
   */
  retry(options?: SendOptions): Promise<SendResult>
  /** Marks the session `completed`; a later send reopens it. */
  complete(): Promise<void>
  /**
   * Changes the session's `summary`, `metadata` (replaced as a whole), `systemPrompt` or `model`
   * and resolves when the change is durable. Invalid input rejects with `ValidationError` and
   * writes nothing; changing `model` or `systemPrompt` while a send runs rejects with
   * `SessionBusyError` (`summary` and `metadata` may change at any time).
   */
  update(update: SessionUpdate): Promise<void>
  /**
   * Copies the conversation up to `throughSeq` (default: all of it) into a new session and
   * resolves to it once it is stored: new ids, the same seqs, `forkedFrom = { sessionId, seq }`,
   * no provider session id, usage from zero. The messages are written together, not one write per
   * message. A session running a send rejects with `SessionBusyError`; one with no messages with
   * `SessionStateError`; a `throughSeq` that names no message with `ValidationError`.
   */
  fork(options?: ForkOptions): Promise<Session>
  /**
   * The tool calls the session waits on, derived from the stored messages (the conversation ends
   * with calls that need approval or an application's answer and have no results): works after a
   * restart — also one that interrupted the session before it was saved as `waiting_input` — and
   * from any process. `[]` while a send runs.
   */
  getPending(): Promise<PendingToolCall[]>
  /** Cancels the running send, keeping its partial reply. */
  abort(): void
  /**
   * The conversation in seq order. Without a query, all of it (loaded from storage on first use);
   * `{ limit, beforeSeq? }` the `limit` messages just before `beforeSeq` (default: the latest);
   * `{ afterSeq, limit? }` a page forward. A page reads only that page from the store. Messages
   * are immutable (frozen): copy one to change it.
   */
  getMessages(query?: MessagesQuery): Promise<AnyMessage[]>
  /**
   * Compacts the conversation now (DESIGN §10.4): asks the summariser (`compaction.adapter`, or
   * the session's adapter) for a summary of everything before the last `keepRecentMessages`
   * messages (and of the previous summary), persists it as a `system` message with
   * `compaction: { throughSeq }`, emits `message` and `compaction`, and resolves to it. Works
   * without `compaction` options. Rejects with `SessionBusyError` while a send runs,
   * `SessionStateError` when nothing is old enough to summarise, and the summariser's error when
   * it fails (nothing is written then).
   */
  compact(options?: CompactOptions): Promise<AnyMessage>
  /** The session's usage over all sends. */
  getTokenUsage(): TokenUsage
  /** Listens to every event of every send; returns the function that stops listening. */
  subscribe(listener: SessionListener): () => void
  /** Resolves when every write accepted so far is durable; rejects if one failed for good. */
  flush(): Promise<void>
  /** Deletes the session and its messages; the object is `deleted` from then on. */
  delete(): Promise<void>
}
