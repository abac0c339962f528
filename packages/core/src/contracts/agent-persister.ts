import type { AnyMessage, TokenUsage } from './messages.js'
import type { SessionState } from '../session/session-state.js'

/** A session's metadata as stored. Optional fields that are absent stay absent on read. */
export interface SessionData {
  id: string
  summary: string
  /** ISO-8601 UTC with milliseconds. */
  createdAt: string
  /** ISO-8601 UTC with milliseconds. */
  lastActivity: string
  cwd?: string
  model?: string
  systemPrompt?: string
  state: SessionState
  providerSessionId?: string
  tokenUsage: TokenUsage
  userId?: string
  appName?: string
  metadata?: Record<string, unknown>
}

/** A query of {@link AgentPersister.listSessions}. */
export interface ListSessionsQuery {
  /** Only sessions of this user. Default is every user. */
  userId?: string
  /** Only sessions of this app. Default is every app. */
  appName?: string
  /** Only sessions in this state (the kernel asks for `active` ones at start-up). Default is any. */
  state?: SessionState
  /** Page size. Default is no limit. */
  limit?: number
  /** Sessions to skip. Default is `0`. */
  offset?: number
}

/** A query of {@link AgentPersister.getMessages}. */
export interface GetMessagesQuery {
  /** Only messages with `seq` greater than this. Default is all. */
  afterSeq?: number
  /** At most this many. `0` returns `[]`; a negative or non-integer limit rejects with `VALIDATION`. */
  limit?: number
}

/**
 * The plugin boundary to storage.
 *
 * Called by the kernel's write queue (writes) and by the session manager (reads). Every method
 * returns a promise and MUST NOT throw synchronously (P-LIF-001). Every value returned MUST be
 * deep-equal to what was saved (P-SES-001, P-MSG-001), and a copy (P-SES-011, P-MSG-021). Errors are
 * {@link AgentError}s with a stable code: `NOT_FOUND`, `VALIDATION`, `CLOSED`, `PAYLOAD_TOO_LARGE`
 * or `PERSISTENCE` (P-ERR-001).
 */
export interface AgentPersister {
  /** Contract version. Default is `'v1'`. */
  readonly specificationVersion?: 'v1'
  /** Creates or replaces a session's metadata (upsert, P-SES-003). */
  saveSession(session: SessionData): Promise<void>
  /** Resolves to `null` for an unknown id (P-SES-002). */
  getSession(id: string): Promise<SessionData | null>
  getAllSessions(): Promise<SessionData[]>
  /**
   * Sessions by `lastActivity` descending, `id` as tie-break (P-SES-007). The kernel calls it with
   * `state: 'active'` at start-up: a persister SHOULD answer that from an index.
   */
  listSessions(query: ListSessionsQuery): Promise<SessionData[]>
  /** Deletes a session and its messages (cascade, P-SES-017). An unknown id is a no-op. */
  deleteSession(id: string): Promise<void>
  /**
   * Creates or replaces a message by id (P-MSG-003). An unknown session rejects with `NOT_FOUND`
   * and writes nothing (P-MSG-007).
   */
  saveMessage(sessionId: string, message: AnyMessage): Promise<void>
  /** A session's messages in `seq` order (P-MSG-002); `[]` for an unknown session. */
  getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]>
  /** Deletes a session's messages, keeping the session (P-MSG-015). */
  deleteMessages(sessionId: string): Promise<void>
  /** Releases resources the persister created. Idempotent; later calls reject with `CLOSED`. */
  close?(): Promise<void>
}
