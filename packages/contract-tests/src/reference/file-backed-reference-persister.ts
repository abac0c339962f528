import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import {
  type AnyMessage,
  type DeleteSessionsQuery,
  InMemoryPersister,
  type SessionData,
  type SessionScope,
} from '@agentx/core'
import { DelegatingPersister } from './delegating-persister.js'

interface StoredFile {
  sessions: SessionData[]
  messages: AnyMessage[]
}

/**
 * The kit's durable reference persister: {@link InMemoryPersister} (the reference behaviour, every
 * capability) whose content is written to a JSON file after every write and read back on open, so
 * a restarted process — or a fresh one (P-LIF-008) — sees it. Leases live in memory only. Small
 * stores only: every write rewrites the file.
 */
export class FileBackedReferencePersister extends DelegatingPersister {
  readonly filename: string
  readonly #memory: InMemoryPersister

  private constructor(filename: string, memory: InMemoryPersister) {
    super(memory)
    this.filename = filename
    this.#memory = memory
  }

  /** A persister over a new, empty store in `filename` (replacing any file there). */
  static async create(filename: string): Promise<FileBackedReferencePersister> {
    const persister = new FileBackedReferencePersister(filename, new InMemoryPersister())
    await persister.#persist()
    return persister
  }

  /** A persister over the store in `filename` (empty when there is no file). */
  static async open(filename: string): Promise<FileBackedReferencePersister> {
    const memory = new InMemoryPersister()
    if (existsSync(filename)) {
      const stored = JSON.parse(readFileSync(filename, 'utf8')) as StoredFile
      for (const session of stored.sessions) await memory.saveSession(session)
      for (const message of stored.messages) await memory.saveMessage(message.sessionId, message)
    }
    return new FileBackedReferencePersister(filename, memory)
  }

  override async saveSession(session: SessionData): Promise<void> {
    await super.saveSession(session)
    await this.#persist()
  }
  override async deleteSession(id: string): Promise<void> {
    await super.deleteSession(id)
    await this.#persist()
  }
  override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
    await super.saveMessage(sessionId, message)
    await this.#persist()
  }
  override async deleteMessages(sessionId: string): Promise<void> {
    await super.deleteMessages(sessionId)
    await this.#persist()
  }
  override async markInterrupted(scope?: SessionScope): Promise<number> {
    const changed = await super.markInterrupted(scope)
    await this.#persist()
    return changed
  }
  override async deleteSessions(query: DeleteSessionsQuery): Promise<number> {
    const deleted = await super.deleteSessions(query)
    await this.#persist()
    return deleted
  }

  async #persist(): Promise<void> {
    const sessions = await this.#memory.getAllSessions()
    const messages: AnyMessage[] = []
    for (const session of sessions) messages.push(...(await this.#memory.getMessages(session.id)))
    mkdirSync(dirname(this.filename), { recursive: true })
    const temporary = `${this.filename}.tmp`
    writeFileSync(temporary, JSON.stringify({ sessions, messages } satisfies StoredFile))
    renameSync(temporary, this.filename)
  }
}
