import type {
  AgentPersister,
  GetMessagesQuery,
  ListSessionsQuery,
  SessionData,
} from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import { NotFoundError } from '../errors/not-found-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { cloneJson } from './json-copy.js'
import { validateMessage, validatePaging, validateSessionData } from './validate.js'

interface StoredSession {
  data: SessionData
  /** Messages sorted by seq. */
  messages: AnyMessage[]
  /** The same messages by id. */
  byId: Map<string, AnyMessage>
}

/**
 * A persister that keeps everything in this process's memory: the reference implementation of
 * {@link AgentPersister}, for tests, demos and short-lived agents. Nothing survives the process.
 */
export class InMemoryPersister implements AgentPersister {
  readonly specificationVersion = 'v1' as const
  #sessions = new Map<string, StoredSession>()
  #closed = false

  async saveSession(session: SessionData): Promise<void> {
    this.#assertOpen()
    const data = validateSessionData(session)
    const stored = this.#sessions.get(data.id)
    if (stored) stored.data = data
    else this.#sessions.set(data.id, { data, messages: [], byId: new Map() })
  }

  async getSession(id: string): Promise<SessionData | null> {
    this.#assertOpen()
    const stored = this.#sessions.get(id)
    return stored ? cloneJson(stored.data) : null
  }

  async getAllSessions(): Promise<SessionData[]> {
    this.#assertOpen()
    return [...this.#sessions.values()].map((stored) => cloneJson(stored.data))
  }

  async listSessions(query: ListSessionsQuery = {}): Promise<SessionData[]> {
    this.#assertOpen()
    validatePaging(query.limit, 'limit')
    validatePaging(query.offset, 'offset')
    const offset = query.offset ?? 0
    const matching = [...this.#sessions.values()]
      .map((stored) => stored.data)
      .filter(
        (data) =>
          (query.userId === undefined || data.userId === query.userId) &&
          (query.appName === undefined || data.appName === query.appName) &&
          (query.state === undefined || data.state === query.state),
      )
      .sort(compareByActivity)
    const page = matching.slice(offset, query.limit === undefined ? undefined : offset + query.limit)
    return page.map((data) => cloneJson(data))
  }

  async deleteSession(id: string): Promise<void> {
    this.#assertOpen()
    this.#sessions.delete(id)
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
    validatePaging(query.limit, 'limit')
    const messages = this.#sessions.get(sessionId)?.messages ?? []
    const start = query.afterSeq === undefined ? 0 : lowerBound(messages, query.afterSeq + 1)
    const end = query.limit === undefined ? undefined : start + query.limit
    return messages.slice(start, end).map((m) => cloneJson(m))
  }

  async deleteMessages(sessionId: string): Promise<void> {
    this.#assertOpen()
    const stored = this.#sessions.get(sessionId)
    if (stored) {
      stored.messages = []
      stored.byId.clear()
    }
  }

  async close(): Promise<void> {
    this.#closed = true
  }

  #assertOpen(): void {
    if (this.#closed) throw new PersistenceError('This persister is closed.', { code: 'CLOSED' })
  }
}

/** `lastActivity` descending, then `id` descending: the order every persister lists sessions in. */
export function compareByActivity(a: SessionData, b: SessionData): number {
  if (a.lastActivity !== b.lastActivity) return a.lastActivity < b.lastActivity ? 1 : -1
  if (a.id === b.id) return 0
  return a.id < b.id ? 1 : -1
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
