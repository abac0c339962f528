import {
  type AgentPersister,
  type AnyMessage,
  type GetMessagesQuery,
  InMemoryPersister,
  type ListSessionsQuery,
  PersistenceError,
  type SessionData,
} from '@agentx/core'

/**
 * An {@link InMemoryPersister} "storage" that outlives the persister instances opened on it, so the
 * `durable` rules can run against the reference persister: {@link reopenInMemory} closes one
 * instance and opens another over the same data, as a restarted process would see a file.
 */
export class ReopenableInMemoryPersister implements AgentPersister {
  readonly specificationVersion = 'v1' as const
  /** The storage this instance is a view of. */
  readonly storage: InMemoryPersister
  #closed = false

  constructor(storage: InMemoryPersister = new InMemoryPersister()) {
    this.storage = storage
  }

  async saveSession(session: SessionData): Promise<void> {
    this.#assertOpen()
    return this.storage.saveSession(session)
  }
  async getSession(id: string): Promise<SessionData | null> {
    this.#assertOpen()
    return this.storage.getSession(id)
  }
  async getAllSessions(): Promise<SessionData[]> {
    this.#assertOpen()
    return this.storage.getAllSessions()
  }
  async listSessions(query: ListSessionsQuery): Promise<SessionData[]> {
    this.#assertOpen()
    return this.storage.listSessions(query)
  }
  async deleteSession(id: string): Promise<void> {
    this.#assertOpen()
    return this.storage.deleteSession(id)
  }
  async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
    this.#assertOpen()
    return this.storage.saveMessage(sessionId, message)
  }
  async getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]> {
    this.#assertOpen()
    return this.storage.getMessages(sessionId, query)
  }
  async deleteMessages(sessionId: string): Promise<void> {
    this.#assertOpen()
    return this.storage.deleteMessages(sessionId)
  }
  async close(): Promise<void> {
    this.#closed = true
  }

  #assertOpen(): void {
    if (this.#closed) throw new PersistenceError('This persister is closed.', { code: 'CLOSED' })
  }
}

/** Closes `persister` and opens a new {@link ReopenableInMemoryPersister} over its storage. */
export async function reopenInMemory(persister: AgentPersister): Promise<ReopenableInMemoryPersister> {
  if (!(persister instanceof ReopenableInMemoryPersister)) {
    throw new TypeError('reopenInMemory() needs a ReopenableInMemoryPersister.')
  }
  await persister.close()
  return new ReopenableInMemoryPersister(persister.storage)
}
