import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
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
 * a restarted process — or a fresh one (P-LIF-008) — sees it. Leases live in a second file
 * (`<filename>.leases.json`), changed under a lock file, so every instance and process on the store
 * shares them (P-LSE-008); the instance keeps its own copy too, for `markInterrupted`. Small stores
 * only: every write rewrites the file.
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
    removeLeaseFiles(filename)
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
  override async claimSession(id: string, owner: string, ttlMs: number): Promise<boolean> {
    // The reference checks the arguments and that the session exists; the shared file decides.
    await super.claimSession(id, owner, ttlMs)
    const claimed = withLock(this.filename, () => {
      const leases = readLeases(this.filename)
      const now = Date.now()
      const lease = leases[id]
      if (lease && lease.owner !== owner && lease.expiresAt > now) return false
      leases[id] = { owner, expiresAt: now + ttlMs }
      writeLeases(this.filename, leases)
      return true
    })
    if (!claimed) await super.releaseSession(id, owner)
    return claimed
  }
  override async releaseSession(id: string, owner: string): Promise<void> {
    await super.releaseSession(id, owner)
    withLock(this.filename, () => {
      const leases = readLeases(this.filename)
      if (leases[id]?.owner !== owner) return
      delete leases[id]
      writeLeases(this.filename, leases)
    })
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

interface Lease {
  owner: string
  expiresAt: number
}

function leasesFile(filename: string): string {
  return `${filename}.leases.json`
}

function readLeases(filename: string): Record<string, Lease> {
  const file = leasesFile(filename)
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, Lease>) : {}
}

function writeLeases(filename: string, leases: Record<string, Lease>): void {
  const file = leasesFile(filename)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(`${file}.tmp`, JSON.stringify(leases))
  renameSync(`${file}.tmp`, file)
}

/** Runs `change` holding `<filename>.lock` (created exclusively; one left by a crash goes after 5 s). */
function withLock<T>(filename: string, change: () => T): T {
  const lock = `${filename}.lock`
  mkdirSync(dirname(lock), { recursive: true })
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx'))
      break
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error
      try {
        if (Date.now() - statSync(lock).mtimeMs > 5_000) rmSync(lock, { force: true })
      } catch {
        // Gone meanwhile: try again.
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1)
    }
  }
  try {
    return change()
  } finally {
    rmSync(lock, { force: true })
  }
}

/** Removes the lease files of a reference store (with its own file). */
export function removeLeaseFiles(filename: string): void {
  rmSync(leasesFile(filename), { force: true })
  rmSync(`${filename}.lock`, { force: true })
}
