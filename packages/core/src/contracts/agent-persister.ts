import type { AnyMessage, TokenUsage } from './messages.js'
import type { SessionState } from './session-state.js'

/**
 * A session's metadata as stored. Optional fields that are absent stay absent on read (P-SES-019,
 * P-SES-020). A lease (see {@link AgentPersister.claimSession}) is not part of it: a persister
 * keeps lease data beside the session and never returns it here.
 */
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
  /** The agent profile that answered last; a send without `agent` continues with it. Default is absent. */
  activeAgent?: string
  /**
   * On a child session (an agent run as a tool): the session whose tool call started it. Default is
   * absent. Children are left out of {@link AgentPersister.listSessions} unless
   * `includeChildren` (P-SES-023) and are deleted with their parent (P-SES-024).
   */
  parentSessionId?: string
  /** On a child session: the id of the parent's `tool_use` block it answers. Default is absent. */
  parentToolUseId?: string
  /** On a fork: the session and seq it was copied from. Default is absent. */
  forkedFrom?: SessionForkOrigin
}

/** Where a forked session came from: see {@link SessionData.forkedFrom}. */
export interface SessionForkOrigin {
  /** The session that was forked. */
  sessionId: string
  /** The last seq that was copied (inclusive). */
  seq: number
}

/** The user/app a query is limited to. */
export interface SessionScope {
  /** Only sessions of this user. Default is every user. */
  userId?: string
  /** Only sessions of this app. Default is every app. */
  appName?: string
}

/** Equality on one top-level key of {@link SessionData.metadata}: see {@link ListSessionsQuery.metadata}. */
export interface MetadataFilter {
  /** The metadata key, compared exactly (any string, also one with dots or quotes). */
  key: string
  /** The value it must hold; `1` and `'1'` differ, as do `true` and `1`. */
  value: string | number | boolean
}

/** A query of {@link AgentPersister.listSessions}. Every filter given must match. */
export interface ListSessionsQuery extends SessionScope {
  /**
   * Only sessions in this state, or in one of these states (the kernel asks for `active` ones at
   * start-up when the persister has no `markInterrupted`). An empty array matches nothing.
   * Default is any state.
   */
  state?: SessionState | readonly SessionState[]
  /** Only sessions whose metadata holds exactly this value at this key (P-SES-022). Default is any. */
  metadata?: MetadataFilter
  /**
   * Whether child sessions (those with a {@link SessionData.parentSessionId}) are listed too.
   * Default is `false`: they are left out (P-SES-023).
   */
  includeChildren?: boolean
  /** Page size. `0` returns `[]`; a negative or non-integer limit rejects with `VALIDATION`. Default is no limit. */
  limit?: number
  /** Sessions to skip. Default is `0`. */
  offset?: number
}

/**
 * A query of {@link AgentPersister.getMessages}. Paging is required of every persister: the
 * kernel pages every history it reads (P-MSG-018, P-MSG-019, P-MSG-024).
 */
export interface GetMessagesQuery {
  /** Only messages with `seq` greater than this (exclusive). Default is all. */
  afterSeq?: number
  /**
   * Only messages with `seq` less than this (exclusive). With `limit`, the last `limit` messages
   * before it, still returned in seq order (P-MSG-024). Default is no upper bound.
   */
  beforeSeq?: number
  /**
   * At most this many: the first ones after `afterSeq`, or the last ones before `beforeSeq` when
   * that is given (the latest page of a session: `{ beforeSeq: Number.MAX_SAFE_INTEGER, limit }`).
   * `0` returns `[]`; a negative or non-integer limit rejects with `VALIDATION`. Default is no limit.
   */
  limit?: number
}

/** A query of {@link AgentPersister.deleteSessions}: which sessions retention removes. */
export interface DeleteSessionsQuery extends SessionScope {
  /** Sessions whose `lastActivity` is strictly before this ISO-8601 instant. Required. */
  lastActivityBefore: string
  /** Only sessions in one of these states. An empty array matches nothing. Default is any state. */
  states?: readonly SessionState[]
}

/**
 * The plugin boundary to storage.
 *
 * Called by the kernel's write queue (writes) and by the session manager (reads). Every method
 * returns a promise and MUST NOT throw synchronously (P-LIF-001). Every value returned MUST be
 * deep-equal to what was saved (P-SES-001, P-MSG-001), and a copy (P-SES-011, P-MSG-021). Errors are
 * {@link AgentError}s with a stable code: `NOT_FOUND`, `VALIDATION`, `CLOSED`, `PAYLOAD_TOO_LARGE`
 * or `PERSISTENCE` (P-ERR-001).
 *
 * Optional method groups are capabilities: `claimSession`, `releaseSession` and `markInterrupted`
 * together are `leases` (several processes on one store, P-LSE-*); `deleteSessions` is `retention`
 * (P-RET-*). A persister implements a group completely or not at all.
 */
export interface AgentPersister {
  /** Contract version. Default is `'v1'`. */
  readonly specificationVersion?: 'v1'
  /** Creates or replaces a session's metadata (upsert, P-SES-003). It MUST NOT change a lease (P-LSE-006). */
  saveSession(session: SessionData): Promise<void>
  /** Resolves to `null` for an unknown id (P-SES-002). */
  getSession(id: string): Promise<SessionData | null>
  /** Every stored session, children included. */
  getAllSessions(): Promise<SessionData[]>
  /**
   * Sessions by `lastActivity` descending, `id` descending as tie-break (P-SES-007), filtered by the
   * query (P-SES-009, P-SES-010, P-SES-021, P-SES-022, P-SES-023) and paged with `limit`/`offset`
   * (P-SES-008). It MUST answer from an index rather than a scan where a store has indexes.
   */
  listSessions(query: ListSessionsQuery): Promise<SessionData[]>
  /**
   * Deletes a session, its messages (P-SES-017) and its child sessions — every session whose
   * `parentSessionId` chain leads to it — with theirs (P-SES-024). An unknown id is a no-op.
   */
  deleteSession(id: string): Promise<void>
  /**
   * Creates or replaces a message by id (P-MSG-003). An unknown session rejects with `NOT_FOUND`
   * and writes nothing (P-MSG-007).
   */
  saveMessage(sessionId: string, message: AnyMessage): Promise<void>
  /**
   * A session's messages in `seq` order (P-MSG-002), paged by the query (P-MSG-018, P-MSG-024);
   * `[]` for an unknown session. A page MUST be read from an index, not by reading the session's
   * whole history.
   */
  getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]>
  /** Deletes a session's messages, keeping the session (P-MSG-015). */
  deleteMessages(sessionId: string): Promise<void>
  /**
   * Claims the lease on a session for `owner` for `ttlMs` milliseconds, as one atomic step
   * (capability `leases`). Resolves `true` when the session had no lease, its lease had expired,
   * or `owner` already held it — then the lease is `owner`'s until `ttlMs` from now (claiming
   * again renews it, P-LSE-003); `false` when another owner holds a live lease, changing nothing.
   * Of any number of owners racing for a free session exactly one MUST win, also across processes
   * (P-LSE-001); a lease not renewed MUST be claimable by another owner once `ttlMs` has passed
   * (P-LSE-002). An unknown session rejects with `NOT_FOUND`; an empty `owner` or a `ttlMs` that is
   * not a positive integer rejects with `VALIDATION` (P-LSE-005). Default is absent (no `leases`).
   */
  claimSession?(id: string, owner: string, ttlMs: number): Promise<boolean>
  /**
   * Ends `owner`'s lease on a session so that any owner may claim it at once (P-LSE-004). A
   * session leased by someone else, not leased, or unknown is left as it is (a no-op, P-LSE-004).
   */
  releaseSession?(id: string, owner: string): Promise<void>
  /**
   * Rewrites `state` from `active` to `interrupted` for every session of the scope that holds no
   * live lease (never claimed, released, or expired), in one atomic step per session, and resolves
   * to how many it changed. Every other field stays as it was; a session with a live lease MUST
   * stay `active` (P-LSE-007). Called by `agent.initialize()` so that starting a second process
   * never interrupts a send running in the first. Default is absent (no `leases`).
   */
  markInterrupted?(scope?: SessionScope): Promise<number>
  /**
   * Deletes, with their messages and child sessions, every session of the scope whose
   * `lastActivity` is strictly before `query.lastActivityBefore` and whose state is one of
   * `query.states` (capability `retention`), and resolves to how many sessions it removed, children
   * included (P-RET-001, P-RET-002, P-RET-003). It MUST select from an index, not a scan. An invalid
   * `lastActivityBefore` rejects with `VALIDATION` (P-RET-004). With `leases`, a selected session
   * whose lease is live (a send runs in it, maybe in another process) is left (P-RET-005): retention never deletes a session under a running send. Default is absent (no
   * `retention`).
   */
  deleteSessions?(query: DeleteSessionsQuery): Promise<number>
  /** Releases resources the persister created. Idempotent; later calls reject with `CLOSED`. */
  close?(): Promise<void>
}
