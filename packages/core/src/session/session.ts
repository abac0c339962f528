import type { AnyMessage, ContentBlock, TokenUsage } from '../contracts/messages.js'
import type { Tool } from '../tools/tool.js'
import type { SendResult, SessionEvent, SessionListener } from './session-events.js'
import type { SessionState } from './session-state.js'

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
  /** Sends a message and resolves when the reply (and its tool steps) are done. */
  send(content: string | ContentBlock[], options?: SendOptions): Promise<SendResult>
  /** Sends a message and yields its events live; ends after `done`, `error` or an abort. */
  stream(content: string | ContentBlock[], options?: SendOptions): AsyncIterable<SessionEvent>
  /** Cancels the running send, keeping its partial reply. */
  abort(): void
  /** The conversation, loaded from storage on first use. */
  getMessages(): Promise<AnyMessage[]>
  /** The session's usage over all sends. */
  getTokenUsage(): TokenUsage
  /** Listens to every event of every send; returns the function that stops listening. */
  subscribe(listener: SessionListener): () => void
  /** Resolves when every write accepted so far is durable; rejects if one failed for good. */
  flush(): Promise<void>
  /** Deletes the session and its messages; the object is `deleted` from then on. */
  delete(): Promise<void>
}
