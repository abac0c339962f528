import type { AgentPersister, SessionData } from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import { type AgentError, isAgentError } from '../errors/agent-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { sleep } from '../util/abort.js'

/** One pending write. Writes with the same key coalesce: only the newest value is written. */
type Write =
  | { kind: 'message'; key: string; message: AnyMessage; waiters: Waiter[] }
  | { kind: 'session'; key: string; session: SessionData; waiters: Waiter[] }

interface Waiter {
  resolve(): void
  reject(error: AgentError): void
}

/** Options of {@link WriteQueue}. */
export interface WriteQueueOptions {
  /** Attempts per write before it is reported as failed. Default is `4`. */
  maxAttempts?: number
  /** First delay between attempts, doubled each time. Default is `25`. */
  retryDelayMs?: number
  /** Called once per write that failed for good. */
  onError?: (error: AgentError) => void
}

/**
 * The ordered, idempotent write path of one session.
 *
 * Writes are drained in batches: every message write of a batch is issued at once (so a persister
 * can group them into one transaction), then the newest session metadata; the next batch starts
 * only when the previous one settled, which keeps writes ordered. Repeated writes of the same
 * message id (streaming checkpoints) coalesce. A transient failure is retried with backoff; a write
 * that still fails stays queued (retryable) or is dropped (not retryable), is reported through
 * `onError`, and makes the next {@link WriteQueue.flush} reject — never an unhandled rejection.
 */
export class WriteQueue {
  readonly #persister: AgentPersister
  readonly #sessionId: string
  readonly #maxAttempts: number
  readonly #retryDelayMs: number
  readonly #onError: ((error: AgentError) => void) | undefined
  #pending: Write[] = []
  #failed: Write[] = []
  #errors: AgentError[] = []
  #draining: Promise<void> | undefined
  #discarded = false

  constructor(persister: AgentPersister, sessionId: string, options: WriteQueueOptions = {}) {
    this.#persister = persister
    this.#sessionId = sessionId
    this.#maxAttempts = options.maxAttempts ?? 4
    this.#retryDelayMs = options.retryDelayMs ?? 25
    this.#onError = options.onError
  }

  /** Queues a message upsert; the promise settles when it is durable (callers may ignore it). */
  saveMessage(message: AnyMessage): Promise<void> {
    return this.#enqueue({ kind: 'message', key: `m:${message.id}`, message, waiters: [] })
  }

  /** Queues a session metadata upsert. */
  saveSession(session: SessionData): Promise<void> {
    return this.#enqueue({ kind: 'session', key: 's', session, waiters: [] })
  }

  /** Whether writes are queued or running. */
  get idle(): boolean {
    return this.#draining === undefined && this.#pending.length === 0
  }

  /**
   * Resolves when everything accepted so far is durable. Writes that failed earlier are tried once
   * more first; rejects with the first error that is still unresolved.
   */
  async flush(): Promise<void> {
    if (this.#failed.length > 0) {
      this.#pending.unshift(...this.#failed)
      this.#failed = []
    }
    this.#kick()
    while (this.#draining) await this.#draining
    const error = this.#errors.shift()
    if (error) {
      this.#errors = []
      throw error
    }
  }

  /** Drops everything queued (the session was deleted) and waits for the running batch. */
  async discard(): Promise<void> {
    this.#discarded = true
    const dropped = [...this.#pending, ...this.#failed]
    this.#pending = []
    this.#failed = []
    this.#errors = []
    for (const write of dropped) for (const waiter of write.waiters) waiter.resolve()
    while (this.#draining) await this.#draining.catch(() => undefined)
  }

  #enqueue(write: Write): Promise<void> {
    if (this.#discarded) return Promise.resolve()
    // A newer value supersedes one that failed earlier: never write the stale one again.
    this.#failed = this.#failed.filter((failed) => failed.key !== write.key)
    const promise = new Promise<void>((resolve, reject) => write.waiters.push({ resolve, reject }))
    // A caller that ignores this promise must not see an unhandled rejection: failures surface via flush().
    promise.catch(() => undefined)
    const same = this.#pending.findIndex((p) => p.key === write.key)
    if (same !== -1) {
      const previous = this.#pending[same]!
      write.waiters.unshift(...previous.waiters)
      this.#pending.splice(same, 1)
    }
    this.#pending.push(write)
    this.#kick()
    return promise
  }

  #kick(): void {
    if (this.#draining || this.#pending.length === 0) return
    this.#draining = this.#drain().finally(() => {
      this.#draining = undefined
      this.#kick()
    })
  }

  async #drain(): Promise<void> {
    // Let writes issued in the same tick join the batch.
    await Promise.resolve()
    while (this.#pending.length > 0 && !this.#discarded) {
      const batch = this.#pending
      this.#pending = []
      const messages = batch.filter((w) => w.kind === 'message')
      const sessions = batch.filter((w) => w.kind === 'session')
      await Promise.all(messages.map((write) => this.#run(write)))
      for (const write of sessions) await this.#run(write)
    }
  }

  async #run(write: Write): Promise<void> {
    let attempt = 0
    for (;;) {
      attempt += 1
      try {
        if (write.kind === 'message') await this.#persister.saveMessage(this.#sessionId, write.message)
        else await this.#persister.saveSession(write.session)
        for (const waiter of write.waiters) waiter.resolve()
        return
      } catch (cause) {
        const error = toPersistenceError(cause, write)
        if (this.#discarded) {
          for (const waiter of write.waiters) waiter.resolve()
          return
        }
        if (error.retryable && attempt < this.#maxAttempts) {
          await sleep(this.#retryDelayMs * 2 ** (attempt - 1))
          continue
        }
        if (error.retryable) this.#failed.push({ ...write, waiters: [] })
        this.#errors.push(error)
        this.#onError?.(error)
        for (const waiter of write.waiters) waiter.reject(error)
        return
      }
    }
  }
}

function toPersistenceError(cause: unknown, write: Write): AgentError {
  if (isAgentError(cause)) return cause
  const what = write.kind === 'message' ? `message ${write.message.id}` : `session ${write.session.id}`
  return new PersistenceError(
    `Saving ${what} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
    {
      cause,
      retryable: true,
    },
  )
}
