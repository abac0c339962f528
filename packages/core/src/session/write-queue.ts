import type { AgentPersister, SessionData } from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import { type AgentError, isAgentError } from '../errors/agent-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { standIn } from './stand-in.js'
import { thrownText } from '../util/thrown-text.js'

/** One record of the queue: a message (by id) or the session's metadata. */
type Record =
  /** `standIn`: written in place of a refused message ({@link standIn}); dropped if refused too. */
  { kind: 'message'; message: AnyMessage; standIn?: boolean } | { kind: 'session'; session: SessionData }

/**
 * The slot of one record. It holds the newest value only; `version` counts the values it was
 * given, so a write that was already running when a newer value came in resolves only the
 * waiters of the value it wrote.
 */
interface Slot {
  key: string
  record: Record
  version: number
  waiters: Waiter[]
  /** Left in the queue array after the slot moved or was removed; skipped when reached. */
  dead: boolean
  /** An attempt failed with a retryable error: the store may hold the record all the same. */
  tried?: boolean
}

interface Waiter {
  /** The slot version this waiter needs durable. */
  version: number
  /** The total failure count at which the waiter is told that its record is not durable. */
  deadline: number
  resolve(): void
  reject(error: AgentError): void
}

/** Options of {@link WriteQueue}. */
export interface WriteQueueOptions {
  /** Failed attempts after which a caller waiting for a write is told it failed. Default is `4`. */
  maxAttempts?: number
  /** First delay between attempts in ms, doubled each time. Default is `25`. */
  initialDelayMs?: number
  /** Longest delay between background attempts in ms. Default is `5000`. */
  maxDelayMs?: number
  /** Called once per outage (when a write has failed `maxAttempts` times in a row) and per dropped write. */
  onError?: (error: AgentError) => void
  /**
   * Called instead of `onError` when a message write finds its session gone from the store
   * (`NOT_FOUND`: deleted by another process, or directly in the store). Default is none.
   */
  onGone?: (error: AgentError) => void
}

/**
 * What {@link WriteQueue.retract} found: `removed` (never written), `durable`, or `uncertain`:
 * removed, but an attempt of it failed, and a store may commit a write whose answer is then lost.
 */
export type RetractOutcome = 'removed' | 'durable' | 'uncertain'

/**
 * The ordered, idempotent write path of one session: a small state machine.
 *
 * - One slot per record (message id, or the session): enqueueing a record that is still queued
 *   replaces its value in place, so the newest value always wins and a stale checkpoint can never
 *   overwrite the final message. A session slot moves to the end instead (its metadata describes
 *   the messages queued before it).
 * - Strictly in order, one write at a time: a record never becomes durable before a record queued
 *   earlier, so the store never shows a seq gap, also while writes fail.
 * - A failed write is retried in the background with exponential backoff (capped at `maxDelayMs`)
 *   until it succeeds; a later record waits behind it. A write whose error is not retryable can
 *   never succeed: it is dropped and reported (its waiters, `onError`, and the next `flush()`).
 * - Callers that wait (`durability: 'sync'`, {@link WriteQueue.flush}) are told a record is not
 *   durable after `maxAttempts` failed attempts; the record stays queued. A later success of the
 *   record clears the failure: no stale error is ever reported.
 * - No promise it returns is left rejected unhandled.
 */
export class WriteQueue {
  readonly #persister: AgentPersister
  readonly #sessionId: string
  readonly #maxAttempts: number
  readonly #initialDelayMs: number
  readonly #maxDelayMs: number
  readonly #onError: ((error: AgentError) => void) | undefined
  readonly #onGone: ((error: AgentError) => void) | undefined
  /** Slots in write order; `#head` indexes the next one, so dequeueing is O(1). */
  #queue: Slot[] = []
  #head = 0
  readonly #slots = new Map<string, Slot>()
  #running: Slot | undefined
  #settled: Promise<void> = Promise.resolve()
  #failures = 0
  #consecutiveFailures = 0
  #reported = false
  #retryTimer: ReturnType<typeof setTimeout> | undefined
  #discarded = false
  /** Callers awaiting an outcome ({@link WriteQueue.hold}): while any do, a retry keeps the process alive. */
  #holders = 0
  /** A record the store refused for good, not yet reported by a {@link WriteQueue.flush}. */
  #lost: AgentError | undefined
  /** Session records kept in place ahead of later messages so far (their slots' keys). */
  #kept = 0
  /** {@link WriteQueue.whenIdle} callers: resolved when nothing is queued or running. */
  #idleWaiters: Array<() => void> = []

  constructor(persister: AgentPersister, sessionId: string, options: WriteQueueOptions = {}) {
    this.#persister = persister
    this.#sessionId = sessionId
    this.#maxAttempts = Math.max(1, options.maxAttempts ?? 4)
    this.#initialDelayMs = options.initialDelayMs ?? 25
    this.#maxDelayMs = options.maxDelayMs ?? 5000
    this.#onError = options.onError
    this.#onGone = options.onGone
  }

  /** Queues a message upsert; the promise settles when it (or a newer value of it) is durable. */
  saveMessage(message: AnyMessage): Promise<void> {
    return this.#enqueue(`m:${message.id}`, { kind: 'message', message })
  }

  /** Queues a session metadata upsert. */
  saveSession(session: SessionData): Promise<void> {
    return this.#enqueue('s', { kind: 'session', session })
  }

  /** Whether nothing is queued or running. */
  get idle(): boolean {
    return this.#running === undefined && this.#slots.size === 0
  }

  /** Records not yet durable. */
  get size(): number {
    return this.#slots.size
  }

  /**
   * Resolves when everything accepted so far is durable. A write waiting for its next background
   * attempt is tried at once; rejects when a record accepted before the call is still not durable
   * after `maxAttempts` more attempts (it stays queued and is retried in the background).
   */
  flush(options: { report?: boolean } = {}): Promise<void> {
    // A record dropped since the last flush (the store refused it for good) was accepted and is not
    // durable: this flush reports it, once, after waiting for the rest — unless it is the kernel's
    // own (`report: false`), which leaves the report to the application's flush() or close().
    const lost = options.report === false ? undefined : this.#lost
    if (lost !== undefined) this.#lost = undefined
    const pending: Promise<void>[] = []
    for (const slot of this.#slots.values()) pending.push(this.#wait(slot))
    if (pending.length === 0) return lost === undefined ? Promise.resolve() : Promise.reject(lost)
    this.#retryNow()
    return this.#hold(
      Promise.all(pending).then(() => {
        if (lost !== undefined) throw lost
      }),
      options.report !== false,
    )
  }

  /**
   * Waits for an outcome of this queue (a `sync` write, a flush). Background retries run on an
   * unref'd timer, so an outage alone never keeps the process alive; while someone waits here, the
   * retry timer is ref'd, so the waiter gets its answer instead of the process exiting under it.
   */
  hold<T>(outcome: Promise<T>): Promise<T> {
    return this.#hold(outcome, true)
  }

  /** {@link WriteQueue.hold}; `told`: a rejection reaches the application, which then knows of a refused record. */
  async #hold<T>(outcome: Promise<T>, told: boolean): Promise<T> {
    this.#holders += 1
    this.#retryTimer?.ref?.()
    try {
      return await outcome
    } catch (error) {
      // The caller that waits learns of a record refused for good: flush() need not report it again.
      if (told && error === this.#lost) this.#lost = undefined
      throw error
    } finally {
      this.#holders -= 1
      if (this.#holders === 0) this.#retryTimer?.unref?.()
    }
  }

  /**
   * Resolves when nothing is queued or running: every record written, dropped as refused for good,
   * or discarded. Never rejects and forces no retry: background retries go on at their own pace.
   */
  whenIdle(): Promise<void> {
    if (this.idle || this.#discarded) return Promise.resolve()
    return new Promise((resolve) => this.#idleWaiters.push(resolve))
  }

  /**
   * Takes a record back if it is not durable yet: a queued one is removed (its waiters resolve
   * with the outcome), a running one is awaited. Resolves to what became of it.
   */
  async retract(message: AnyMessage): Promise<RetractOutcome> {
    const key = `m:${message.id}`
    for (;;) {
      const slot = this.#slots.get(key)
      if (slot === undefined) return 'durable'
      if (slot !== this.#running) {
        this.#remove(slot)
        this.#pump()
        return slot.tried ? 'uncertain' : 'removed'
      }
      // Running: wait for this attempt to settle, then look again.
      await this.#settled
    }
  }

  /** Drops everything queued (the session was deleted) and waits for the running write. */
  async discard(): Promise<void> {
    this.#discarded = true
    if (this.#retryTimer !== undefined) clearTimeout(this.#retryTimer)
    this.#retryTimer = undefined
    for (const slot of [...this.#slots.values()]) this.#remove(slot)
    await this.#settled
    this.#pump()
  }

  #enqueue(key: string, record: Record): Promise<void> {
    if (this.#discarded) return Promise.resolve()
    let slot = this.#slots.get(key)
    const running = slot !== undefined && slot === this.#running
    if (slot !== undefined && record.kind === 'session' && (!running || this.#messagesAfter(slot))) {
      const queued = slot
      // Session metadata goes behind the messages queued since (it describes them), never ahead:
      // a record being written keeps its value, a queued one moves — except a record that says
      // `active` while the new one does not: the store must show a send `active` as long as it holds
      // the send's first messages and not yet its end (a crash then is found `interrupted`), so that
      // value is written where it was queued, and the new one after the messages.
      const keep = running || (isActive(queued.record) && !isActive(record) && this.#messagesAfter(queued))
      if (keep) {
        this.#kept += 1
        queued.key = `${key}#${this.#kept}`
        this.#slots.set(queued.key, queued)
      } else {
        queued.dead = true
      }
      slot = { key, record, version: queued.version + 1, waiters: keep ? [] : queued.waiters, dead: false }
      this.#slots.set(key, slot)
      this.#queue.push(slot)
    } else if (slot !== undefined) {
      slot.record = record
      slot.version += 1
    } else {
      slot = { key, record, version: 1, waiters: [], dead: false }
      this.#slots.set(key, slot)
      this.#queue.push(slot)
    }
    const promise = this.#wait(slot)
    // New activity: a write waiting for its next background attempt goes now.
    this.#retryNow()
    this.#pump()
    return promise
  }

  /** Whether a message record is queued behind `slot`. */
  #messagesAfter(slot: Slot): boolean {
    for (let i = this.#queue.length - 1; i >= this.#head && this.#queue[i] !== slot; i--) {
      const later = this.#queue[i]!
      if (!later.dead && later.record.kind === 'message') return true
    }
    return false
  }

  #wait(slot: Slot): Promise<void> {
    const promise = new Promise<void>((resolve, reject) => {
      slot.waiters.push({
        version: slot.version,
        deadline: this.#failures + this.#maxAttempts,
        resolve,
        reject,
      })
    })
    // A caller that ignores this promise must not see an unhandled rejection.
    promise.catch(() => undefined)
    return promise
  }

  #remove(slot: Slot): void {
    slot.dead = true
    if (this.#slots.get(slot.key) === slot) this.#slots.delete(slot.key)
    for (const waiter of slot.waiters) waiter.resolve()
    slot.waiters = []
  }

  /** The next live slot in order, or undefined. */
  #peek(): Slot | undefined {
    while (this.#head < this.#queue.length) {
      const slot = this.#queue[this.#head]!
      if (!slot.dead) return slot
      this.#head += 1
    }
    if (this.#head > 0) {
      this.#queue = []
      this.#head = 0
    }
    return undefined
  }

  #pump(): void {
    if (this.#running !== undefined || this.#retryTimer !== undefined) return
    const slot = this.#discarded ? undefined : this.#peek()
    if (slot === undefined) {
      if (this.#idleWaiters.length > 0 && (this.#slots.size === 0 || this.#discarded)) {
        const waiters = this.#idleWaiters
        this.#idleWaiters = []
        for (const resolve of waiters) resolve()
      }
      return
    }
    this.#running = slot
    this.#settled = this.#attempt(slot)
  }

  async #attempt(slot: Slot): Promise<void> {
    // Let writes issued in the same tick coalesce into this slot first.
    await undefined
    const version = slot.version
    const record = slot.record
    let error: AgentError | undefined
    try {
      if (record.kind === 'message') await this.#persister.saveMessage(this.#sessionId, record.message)
      else await this.#persister.saveSession(record.session)
    } catch (cause) {
      error = toPersistenceError(cause, record)
    }
    this.#running = undefined
    if (slot.dead) {
      this.#pump()
      return
    }
    if (error === undefined) this.#succeeded(slot, version)
    else this.#failed(slot, error)
  }

  /** Takes the head slot out of the queue for good. */
  #drop(slot: Slot): void {
    slot.dead = true
    this.#slots.delete(slot.key)
    this.#head += 1
  }

  #succeeded(slot: Slot, version: number): void {
    this.#consecutiveFailures = 0
    this.#reported = false
    const waiting: Waiter[] = []
    for (const waiter of slot.waiters) {
      if (waiter.version <= version) waiter.resolve()
      else waiting.push(waiter)
    }
    slot.waiters = waiting
    // A newer value came in while this one was written: the slot stays at the head and goes again.
    if (slot.version === version) {
      slot.dead = true
      if (this.#slots.get(slot.key) === slot) this.#slots.delete(slot.key)
      this.#head += 1
    }
    this.#pump()
  }

  #failed(slot: Slot, error: AgentError): void {
    this.#failures += 1
    this.#consecutiveFailures += 1
    if (!error.retryable) {
      // It can never succeed: report it and move on, so the session's later writes are not blocked.
      for (const waiter of slot.waiters) waiter.reject(error)
      slot.waiters = []
      const record = slot.record
      if (error.code === 'NOT_FOUND' && record.kind === 'message' && this.#onGone !== undefined) {
        // The session is gone: writing anything more (its record above all) would bring it back.
        this.#drop(slot)
        this.#onGone(error)
        return
      }
      // A refused stand-in is dropped quietly: the refusal of the message it stood in for was reported.
      const original = record.kind === 'session' || record.standIn !== true
      if (original) {
        this.#lost = error
        this.#onError?.(error)
      }
      if (record.kind === 'message' && original && error.code !== 'CONFLICT') {
        // A stand-in takes its seq (no gap on disk); it stays at the head and goes next. A
        // `CONFLICT` means the seq is taken already (by another process): nothing to stand in for.
        slot.record = { kind: 'message', message: standIn(record.message, error), standIn: true }
        slot.version += 1
      } else {
        this.#drop(slot)
      }
      this.#pump()
      return
    }
    slot.tried = true
    for (const pending of this.#slots.values()) this.#rejectDue(pending, error)
    if (this.#consecutiveFailures >= this.#maxAttempts && !this.#reported) {
      this.#reported = true
      this.#onError?.(error)
    }
    const delay = this.#nextDelay()
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined
      this.#pump()
    }, delay)
    if (this.#holders === 0) this.#retryTimer.unref?.()
  }

  /**
   * The backoff before the next attempt: doubling with the failures in a row, but counted from the
   * oldest caller still waiting, so a caller that waits is answered within its attempt budget and
   * is never held up by the long delays of an outage that began before it.
   */
  #nextDelay(): number {
    let exponent = this.#consecutiveFailures - 1
    for (const slot of this.#slots.values()) {
      for (const waiter of slot.waiters) {
        exponent = Math.min(exponent, this.#failures - (waiter.deadline - this.#maxAttempts) - 1)
      }
    }
    return Math.min(this.#maxDelayMs, this.#initialDelayMs * 2 ** Math.max(0, exponent))
  }

  /** Tells the waiters whose attempt budget is used up that their record is not durable. */
  #rejectDue(slot: Slot, error: AgentError): void {
    if (slot.waiters.length === 0) return
    const waiting: Waiter[] = []
    for (const waiter of slot.waiters) {
      if (waiter.deadline <= this.#failures) waiter.reject(error)
      else waiting.push(waiter)
    }
    slot.waiters = waiting
  }

  #retryNow(): void {
    if (this.#retryTimer === undefined) return
    clearTimeout(this.#retryTimer)
    this.#retryTimer = undefined
    this.#pump()
  }
}

function toPersistenceError(cause: unknown, record: Record): AgentError {
  if (isAgentError(cause)) return cause
  const what = record.kind === 'message' ? `message ${record.message.id}` : `session ${record.session.id}`
  return new PersistenceError(`Saving ${what} failed: ${thrownText(cause)}`, {
    cause,
    retryable: true,
  })
}

function isActive(record: Record): boolean {
  return record.kind === 'session' && record.session.state === 'active'
}
