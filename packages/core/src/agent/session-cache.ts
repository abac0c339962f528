/**
 * How many stored sessions an agent keeps in memory, and for how long (`AgentConfig.sessionCache`,
 * DESIGN §10.7). A session past these bounds is dropped from memory with the messages it holds and
 * reloaded from the store by the next `agent.getSession(id)`; a session that is running a send, or
 * has writes still in flight, is never dropped.
 */
export interface SessionCacheOptions {
  /** Sessions kept in memory at most (running ones may exceed it until they finish). Default is `1000`. */
  max?: number
  /** A session not used for this long (ms) is dropped. Default is `600000` (10 minutes). */
  idleMs?: number
}

/** Default of {@link SessionCacheOptions.max}. */
export const DEFAULT_SESSION_CACHE_MAX = 1000
/** Default of {@link SessionCacheOptions.idleMs}. */
export const DEFAULT_SESSION_CACHE_IDLE_MS = 600_000
/** The idle sweep runs at least this often, so a quiet process still lets sessions go. */
const MAX_SWEEP_INTERVAL_MS = 60_000

/** What the cache needs of a session object. */
export interface CacheableSession {
  readonly id: string
  readonly state: string
  /**
   * Drops what the session holds in memory unless a send runs or a write is in flight, and says
   * whether it did ({@link BaseSession.releaseIfIdle}). A session without it is dropped whenever it
   * is not `active`.
   */
  releaseIfIdle?(): boolean
}

interface Entry<S> {
  session: S
  /** When the session was last used, on the cache's clock. */
  touched: number
}

/**
 * The session objects of one agent, so that one id is one object.
 *
 * Two tiers: a bounded LRU of sessions kept in memory (strong references, oldest first in `Map`
 * order), and a registry of weak references to every object handed out. A session dropped from
 * the LRU stays reachable through the registry for as long as the application still holds it, so
 * `get(id)` returns that same object instead of making a second one whose state would diverge. The
 * registry forgets an object once the garbage collector took it (a `FinalizationRegistry`).
 */
export class SessionCache<S extends CacheableSession> {
  readonly #max: number
  readonly #idleMs: number
  readonly #now: () => number
  readonly #kept = new Map<string, Entry<S>>()
  readonly #known = new Map<string, WeakRef<S>>()
  readonly #finalizer = new FinalizationRegistry<string>((id) => {
    if (this.#known.get(id)?.deref() === undefined) this.#known.delete(id)
  })
  #timer: ReturnType<typeof setInterval> | undefined

  constructor(options: SessionCacheOptions & { now?: () => number } = {}) {
    this.#max = options.max ?? DEFAULT_SESSION_CACHE_MAX
    this.#idleMs = options.idleMs ?? DEFAULT_SESSION_CACHE_IDLE_MS
    // Read the clock at call time (fake timers in tests replace Date.now after construction).
    this.#now = options.now ?? (() => Date.now())
  }

  /** Sessions kept in memory (the LRU tier). */
  get size(): number {
    return this.#kept.size
  }

  /** Objects the registry still knows (kept ones, and dropped ones not yet garbage-collected). */
  get tracked(): number {
    return this.#known.size
  }

  /** Whether the session with this id is kept in memory (the LRU tier). */
  isKept(id: string): boolean {
    return this.#kept.has(id)
  }

  /** The live object of this id — kept, or dropped but still held by the application — marked as used. */
  get(id: string): S | undefined {
    const entry = this.#kept.get(id)
    const session = entry?.session ?? this.#known.get(id)?.deref()
    if (session === undefined) return undefined
    this.touch(session)
    return session
  }

  /** The live object of this id without marking it as used. */
  peek(id: string): S | undefined {
    return this.#kept.get(id)?.session ?? this.#known.get(id)?.deref()
  }

  /**
   * Adds a new object (the only one of its id from now on) as the most recently used. The first one
   * starts the idle sweep.
   */
  add(session: S): void {
    this.start()
    this.#known.set(session.id, new WeakRef(session))
    this.#finalizer.register(session, session.id, session)
    this.touch(session)
  }

  /** Marks a session as used (it is kept again if it had been dropped), then applies the bounds. */
  touch(session: S): void {
    if (this.#known.get(session.id)?.deref() !== session) return
    this.#kept.delete(session.id)
    this.#kept.set(session.id, { session, touched: this.#now() })
    this.trim()
  }

  /** Forgets a session (it was deleted). */
  delete(session: S): void {
    if (this.#kept.get(session.id)?.session === session) this.#kept.delete(session.id)
    if (this.#known.get(session.id)?.deref() === session) this.#known.delete(session.id)
    this.#finalizer.unregister(session)
  }

  /** Every live object: the kept ones and those the application still holds. */
  live(): S[] {
    const sessions: S[] = []
    for (const ref of this.#known.values()) {
      const session = ref.deref()
      if (session !== undefined) sessions.push(session)
    }
    return sessions
  }

  /** Forgets everything and stops the sweep (the agent closed). */
  clear(): void {
    this.stop()
    for (const session of this.live()) this.#finalizer.unregister(session)
    this.#kept.clear()
    this.#known.clear()
  }

  /**
   * Applies the bounds: drops the sessions unused for longer than `idleMs`, then the least recently
   * used ones beyond `max`. Sessions that refuse (running, writes in flight) are skipped and stay.
   * The LRU is in use order, so this stops at the first session still fresh enough and within
   * bounds: its cost is the sessions dropped plus the running ones it steps over.
   */
  trim(): void {
    const oldest = this.#now() - this.#idleMs
    let excess = this.#kept.size - this.#max
    for (const [id, entry] of this.#kept) {
      const stale = entry.touched <= oldest
      if (!stale && excess <= 0) break
      if (this.#drop(id, entry)) excess--
    }
  }

  /** Sweeps idle sessions on an unref'd timer, so a process that goes quiet still lets them go. */
  start(): void {
    if (this.#timer !== undefined) return
    const interval = Math.max(1, Math.min(this.#idleMs, MAX_SWEEP_INTERVAL_MS))
    this.#timer = setInterval(() => this.trim(), interval)
    this.#timer.unref?.()
  }

  /** Stops the sweep. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
  }

  #drop(id: string, entry: Entry<S>): boolean {
    const session = entry.session
    const released = session.releaseIfIdle ? session.releaseIfIdle() : session.state !== 'active'
    if (released) this.#kept.delete(id)
    return released
  }
}
