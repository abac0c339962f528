import type {
  AgentPersister,
  AnyMessage,
  DeleteSessionsQuery,
  GetMessagesQuery,
  ListSessionsQuery,
  SessionData,
  SessionScope,
} from '@agentx/core'

/**
 * A persister that forwards every call to `inner`, the optional ones (leases, retention)
 * included. The broken reference variants extend it and override the one method that carries
 * their defect.
 */
export class DelegatingPersister implements AgentPersister {
  readonly inner: AgentPersister

  constructor(inner: AgentPersister) {
    this.inner = inner
  }

  saveSession(session: SessionData): Promise<void> {
    return this.inner.saveSession(session)
  }
  getSession(id: string): Promise<SessionData | null> {
    return this.inner.getSession(id)
  }
  getAllSessions(): Promise<SessionData[]> {
    return this.inner.getAllSessions()
  }
  listSessions(query: ListSessionsQuery): Promise<SessionData[]> {
    return this.inner.listSessions(query)
  }
  deleteSession(id: string): Promise<void> {
    return this.inner.deleteSession(id)
  }
  saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
    return this.inner.saveMessage(sessionId, message)
  }
  getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]> {
    return this.inner.getMessages(sessionId, query)
  }
  deleteMessages(sessionId: string): Promise<void> {
    return this.inner.deleteMessages(sessionId)
  }
  claimSession(id: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.inner.claimSession!(id, owner, ttlMs)
  }
  releaseSession(id: string, owner: string): Promise<void> {
    return this.inner.releaseSession!(id, owner)
  }
  markInterrupted(scope?: SessionScope): Promise<number> {
    return this.inner.markInterrupted!(scope)
  }
  deleteSessions(query: DeleteSessionsQuery): Promise<number> {
    return this.inner.deleteSessions!(query)
  }
  async close(): Promise<void> {
    await this.inner.close?.()
  }
}
