import type {
  AgentPersister,
  DeleteSessionsQuery,
  GetMessagesQuery,
  ListSessionsQuery,
  SessionData,
  SessionScope,
} from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import { NotFoundError } from '../errors/not-found-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import type { SessionState } from '../session/session-state.js'
import { cloneJson } from './json-copy.js'
import {
  validateClaimArguments,
  validateDeleteSessionsQuery,
  validateListQuery,
  validateMessage,
  validateMessagesQuery,
  validateReleaseArguments,
  validateKey,
  validateSessionData,
} from './validate.js'

/** Options of {@link InMemoryPersister}. */
export interface InMemoryPersisterOptions {
  /**
   * The clock leases are measured with, in milliseconds since the epoch. Tests pass a fake one to
   * let a lease expire without waiting. Default is `Date.now`.
   */
  now?: () => number
}

interface Lease {
  owner: string
  /** When the lease ends, on the persister's clock (ms). */
  expiresAt: number
}

interface StoredSession {
  data: SessionData
  /** Messages sorted by seq. */
  messages: AnyMessage[]
  /** The same messages by id. */
  byId: Map<string, AnyMessage>
  lease: Lease | undefined
}

/**
 * A persister that keeps everything in this process's memory: the reference implementation of
 * {@link AgentPersister}, with every optional capability (`leases`, `retention`), for tests, demos
 * and short-lived agents. Nothing survives the process.
 */
export class InMemoryPersister implements AgentPersister {
  readonly specificationVersion = 'v1' as const
  #sessions = new Map<string, StoredSession>()
  /** Child session ids by parent session id. */
  #children = new Map<string, Set<string>>()
  #closed = false
  readonly #now: () => number

  constructor(options: InMemoryPersisterOptions = {}) {
    this.#now = options.now ?? Date.now
  }

  async saveSession(session: SessionData): Promise<void> {
    this.#assertOpen()
    const data = validateSessionData(session)
    const stored = this.#sessions.get(data.id)
    if (stored) {
      this.#unlinkParent(stored.data)
      stored.data = data
    } else {
      this.#sessions.set(data.id, { data, messages: [], byId: new Map(), lease: undefined })
    }
    if (data.parentSessionId !== undefined) {
      const children = this.#children.get(data.parentSessionId) ?? new Set<string>()
      children.add(data.id)
      this.#children.set(data.parentSessionId, children)
    }
  }

  async getSession(id: string): Promise<SessionData | null> {
    this.#assertOpen()
    validateKey(id, 'id')
    const stored = this.#sessions.get(id)
    return stored ? cloneJson(stored.data) : null
  }

  async getAllSessions(): Promise<SessionData[]> {
    this.#assertOpen()
    return [...this.#sessions.values()].map((stored) => cloneJson(stored.data))
  }

  async listSessions(query: ListSessionsQuery = {}): Promise<SessionData[]> {
    this.#assertOpen()
    const states = validateListQuery(query)
    const offset = query.offset ?? 0
    const metadata = query.metadata
    const matching = [...this.#sessions.values()]
      .map((stored) => stored.data)
      .filter(
        (data) =>
          inScope(data, query) &&
          (states === undefined || states.includes(data.state)) &&
          (query.includeChildren === true || data.parentSessionId === undefined) &&
          (metadata === undefined ||
            (data.metadata !== undefined &&
              Object.hasOwn(data.metadata, metadata.key) &&
              data.metadata[metadata.key] === metadata.value)),
      )
      .sort(compareByActivity)
    const page = matching.slice(offset, query.limit === undefined ? undefined : offset + query.limit)
    return page.map((data) => cloneJson(data))
  }

  async deleteSession(id: string): Promise<void> {
    this.#assertOpen()
    validateKey(id, 'id')
    this.#deleteTree(id)
  }

  async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
    this.#assertOpen()
    const copy = validateMessage(sessionId, message)
    const stored = this.#sessions.get(sessionId)
    if (!stored)
      throw new NotFoundError(`Cannot save message ${copy.id}: session ${sessionId} does not exist.`)
    const messages = stored.messages
    const sameSeq = messages[lowerBound(messages, copy.seq)]
    if (sameSeq && sameSeq.seq === copy.seq && sameSeq.id !== copy.id) {
      throw new PersistenceError(
        `Session ${sessionId} already has message ${sameSeq.id} at seq ${copy.seq}.`,
        {
          code: 'CONFLICT',
        },
      )
    }
    const existing = stored.byId.get(copy.id)
    if (existing) messages.splice(lowerBound(messages, existing.seq), 1)
    messages.splice(lowerBound(messages, copy.seq), 0, copy)
    stored.byId.set(copy.id, copy)
  }

  async getMessages(sessionId: string, query: GetMessagesQuery = {}): Promise<AnyMessage[]> {
    this.#assertOpen()
    validateKey(sessionId, 'sessionId')
    validateMessagesQuery(query)
    const messages = this.#sessions.get(sessionId)?.messages ?? []
    let start = query.afterSeq === undefined ? 0 : upperBound(messages, query.afterSeq)
    let end = query.beforeSeq === undefined ? messages.length : lowerBound(messages, query.beforeSeq)
    if (end < start) end = start
    if (query.limit !== undefined) {
      // With an upper bound the page is the last `limit` messages before it, else the first ones.
      if (query.beforeSeq === undefined) end = Math.min(end, start + query.limit)
      else start = Math.max(start, end - query.limit)
    }
    return messages.slice(start, end).map((m) => cloneJson(m))
  }

  async deleteMessages(sessionId: string): Promise<void> {
    this.#assertOpen()
    validateKey(sessionId, 'sessionId')
    const stored = this.#sessions.get(sessionId)
    if (stored) {
      stored.messages = []
      stored.byId.clear()
    }
  }

  async claimSession(id: string, owner: string, ttlMs: number): Promise<boolean> {
    this.#assertOpen()
    validateClaimArguments(id, owner, ttlMs)
    const stored = this.#sessions.get(id)
    if (!stored) throw new NotFoundError(`Cannot claim session ${id}: it does not exist.`)
    const now = this.#now()
    const lease = stored.lease
    if (lease && lease.owner !== owner && lease.expiresAt > now) return false
    stored.lease = { owner, expiresAt: now + ttlMs }
    return true
  }

  async releaseSession(id: string, owner: string): Promise<void> {
    this.#assertOpen()
    validateReleaseArguments(id, owner)
    const stored = this.#sessions.get(id)
    if (stored?.lease?.owner === owner) stored.lease = undefined
  }

  async markInterrupted(scope: SessionScope = {}): Promise<number> {
    this.#assertOpen()
    validateListQuery(scope)
    const now = this.#now()
    let changed = 0
    for (const stored of this.#sessions.values()) {
      if (stored.data.state !== 'active' || !inScope(stored.data, scope)) continue
      if (stored.lease && stored.lease.expiresAt > now) continue
      stored.data = { ...stored.data, state: 'interrupted' }
      changed++
    }
    return changed
  }

  async deleteSessions(query: DeleteSessionsQuery): Promise<number> {
    this.#assertOpen()
    const { lastActivityBefore, states } = validateDeleteSessionsQuery(query)
    const now = this.#now()
    const selected = [...this.#sessions.values()]
      // A session under a live lease runs a send: never deleted by retention (P-RET-005).
      .filter((stored) => stored.lease === undefined || stored.lease.expiresAt <= now)
      .map((stored) => stored.data)
      .filter(
        (data) =>
          // A child goes with its parent's tree, never on its own (P-RET-006).
          !this.#hasParent(data) &&
          data.lastActivity < lastActivityBefore &&
          inScope(data, query) &&
          (states === undefined || states.includes(data.state as SessionState)),
      )
    let deleted = 0
    for (const data of selected) deleted += this.#deleteTree(data.id)
    return deleted
  }

  async close(): Promise<void> {
    this.#closed = true
  }

  /** Whether `data` is the child of a session that is still stored. */
  #hasParent(data: SessionData): boolean {
    return data.parentSessionId !== undefined && this.#sessions.has(data.parentSessionId)
  }

  /** Deletes a session and its descendants; returns how many sessions were removed. */
  #deleteTree(id: string): number {
    let deleted = 0
    const pending = [id]
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      const stored = this.#sessions.get(next)
      if (!stored) continue
      this.#sessions.delete(next)
      this.#unlinkParent(stored.data)
      deleted++
      const children = this.#children.get(next)
      if (children) pending.push(...children)
    }
    return deleted
  }

  #unlinkParent(data: SessionData): void {
    if (data.parentSessionId === undefined) return
    const siblings = this.#children.get(data.parentSessionId)
    siblings?.delete(data.id)
    if (siblings?.size === 0) this.#children.delete(data.parentSessionId)
  }

  #assertOpen(): void {
    if (this.#closed) throw new PersistenceError('This persister is closed.', { code: 'CLOSED' })
  }
}

function inScope(data: SessionData, scope: SessionScope): boolean {
  return (
    (scope.userId === undefined || data.userId === scope.userId) &&
    (scope.appName === undefined || data.appName === scope.appName)
  )
}

/** `lastActivity` descending, then `id` descending: the order every persister lists sessions in. */
export function compareByActivity(a: SessionData, b: SessionData): number {
  if (a.lastActivity !== b.lastActivity) return a.lastActivity < b.lastActivity ? 1 : -1
  if (a.id === b.id) return 0
  return a.id < b.id ? 1 : -1
}

/** The first index whose seq is > `seq`. */
function upperBound(messages: AnyMessage[], seq: number): number {
  let low = 0
  let high = messages.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (messages[mid]!.seq <= seq) low = mid + 1
    else high = mid
  }
  return low
}

/** The first index whose seq is >= `seq`. */
function lowerBound(messages: AnyMessage[], seq: number): number {
  let low = 0
  let high = messages.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (messages[mid]!.seq < seq) low = mid + 1
    else high = mid
  }
  return low
}
