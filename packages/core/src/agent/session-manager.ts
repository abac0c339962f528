import type { AgentAdapter } from '../contracts/agent-adapter.js'
import type { AgentPersister, SessionData, SessionScope } from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import type { SessionFactory } from '../contracts/session-factory.js'
import { AgentError } from '../errors/agent-error.js'
import { cloneJson } from '../persistence/json-copy.js'
import type { Session } from '../session/session.js'
import type { ChildInit, ChildOf } from '../session/subagents.js'
import type { SessionEvent } from '../session/session-events.js'
import type { SessionRuntimeOptions } from '../session/session-runtime-options.js'
import { emptyUsage } from '../util/token-usage.js'
import { uuidv7 } from '../util/uuid-v7.js'
import { withRetry } from '../util/with-retry.js'
import type { CreateSessionOptions, GetSessionsOptions } from './agent-config.js'
import { isInScope, scopeFields } from './agent-scope.js'
import { SessionCache, type SessionCacheOptions } from './session-cache.js'
import { validateCreateSessionOptions, validateGetSessionsOptions } from './validate-config.js'
import { thrownText } from '../util/thrown-text.js'

const REPAIR_PAGE = 100

/** What a {@link SessionManager} works with. */
export interface SessionManagerOptions {
  adapter: AgentAdapter
  persister: AgentPersister
  factory: SessionFactory
  runtime: SessionRuntimeOptions
  /** Bounds of the sessions kept in memory. Default is `{ max: 1000, idleMs: 600000 }`. */
  cache?: SessionCacheOptions
  /** Whether the agent is closed (its sessions then reject every call with `AGENT_CLOSED`). */
  isClosed?: () => boolean
  /**
   * Receives every event of every session the manager made, with the session's scope
   * (`agent.subscribe`), while {@link SessionManager.forwardEvents} is on.
   */
  onEvent?: (event: SessionEvent, session: { id: string }, scope: SessionScope) => void
}

type StateEvent = Extract<SessionEvent, { type: 'state' }>

/** What the manager may call on a session beyond the public {@link Session} (a {@link BaseSession} has all of it). */
interface ManagedSession extends Session {
  toSessionData?(): SessionData
  forget?(): Promise<void>
  takeIn?(stored: SessionData): void
  reloadRecord?(): Promise<void>
  whenSettled?(): Promise<void>
  release?(): Promise<void>
  releaseIfIdle?(): boolean
  watchState?(watcher: (event: StateEvent) => void): () => void
}

/**
 * Owns the session objects of one agent and of every scoped view of it: creates them (persisted
 * before the object exists), loads stored ones lazily (metadata first, messages on first use),
 * keeps them in a bounded {@link SessionCache} so one id is one object, and deletes them with their
 * messages. Every method takes the scope of the caller (the agent's or a view's): a session outside
 * it is neither seen nor created.
 */
export class SessionManager {
  readonly #options: SessionManagerOptions
  readonly #cache: SessionCache<ManagedSession>
  readonly #loading = new Map<string, Promise<SessionData | null>>()
  /** Caller-chosen ids being created right now (a second create of the same id must not race the first). */
  readonly #creating = new Set<string>()
  /** Sessions whose writes a failed {@link SessionManager.releaseAll} could not make durable. */
  #unreleased: ManagedSession[] = []
  /** Whether root sessions' events go to `onEvent` (the agent has listeners). */
  #forwarding = false
  /** How each root session's events reach `onEvent`: its id and scope, and the subscription while forwarding. */
  readonly #routes = new WeakMap<
    ManagedSession,
    { source: { id: string }; scope: SessionScope; stop?: (() => void) | undefined }
  >()

  constructor(options: SessionManagerOptions) {
    this.#options = options
    this.#cache = new SessionCache(options.cache)
  }

  /**
   * Creates a session in `scope`: saves its metadata, then makes the object (state `created`). A
   * caller-chosen id that is already stored (in any scope) rejects with `SESSION_EXISTS`.
   */
  async createSession(options: CreateSessionOptions = {}, scope: SessionScope = {}): Promise<Session> {
    validateCreateSessionOptions(options)
    const { runtime, persister } = this.#options
    const chosen = options.id
    if (chosen !== undefined) {
      // The store decides whether the id is taken; this only stops a second create racing the first.
      if (this.#creating.has(chosen)) throw sessionExists(chosen)
      this.#creating.add(chosen)
    }
    try {
      if (chosen !== undefined && (await persister.getSession(chosen)) !== null) throw sessionExists(chosen)
      const now = new Date().toISOString()
      const data: SessionData = {
        id: chosen ?? uuidv7(),
        summary: options.summary ?? '',
        createdAt: now,
        lastActivity: now,
        state: 'created',
        tokenUsage: emptyUsage(),
      }
      const model = options.model ?? (runtime.model === '' ? undefined : runtime.model)
      if (model !== undefined) data.model = model
      const systemPrompt = options.systemPrompt ?? runtime.systemPrompt
      if (systemPrompt !== undefined) data.systemPrompt = systemPrompt
      if (options.cwd !== undefined) data.cwd = options.cwd
      Object.assign(data, scopeFields(scope))
      if (options.metadata !== undefined) data.metadata = cloneJson(options.metadata, 'metadata')
      await withRetry(() => persister.saveSession(data))
      return this.#adopt(data, [], options)
    } finally {
      if (chosen !== undefined) this.#creating.delete(chosen)
    }
  }

  /**
   * The child session of an agent tool's call (DESIGN §10.3): loaded when it exists, otherwise
   * created and persisted with its parent's scope, `parentSessionId`, `parentToolUseId` and the
   * profile it runs as `activeAgent`.
   */
  async openChild(init: ChildInit): Promise<Session> {
    const existing = await this.findChild(init.id, init)
    if (existing === 'other') {
      throw new AgentError(
        `A session with id '${init.id}' exists and is not this call's child session.`,
        'SESSION_EXISTS',
      )
    }
    if (existing) return existing
    const parent = this.#cache.get(init.parentSessionId)
    const now = new Date().toISOString()
    const data: SessionData = {
      id: init.id,
      summary: '',
      createdAt: now,
      lastActivity: now,
      state: 'created',
      tokenUsage: emptyUsage(),
      parentSessionId: init.parentSessionId,
      parentToolUseId: init.parentToolUseId,
      activeAgent: init.agent,
    }
    if (parent?.userId !== undefined) data.userId = parent.userId
    if (parent?.appName !== undefined) data.appName = parent.appName
    await withRetry(() => this.#options.persister.saveSession(data))
    return this.#cache.get(init.id) ?? this.#adopt(data, [])
  }

  /**
   * The session with this id when it is the child session of `of`'s call, `'other'` when the id
   * is taken by any other session (of any scope: its content never reaches this parent).
   */
  async findChild(id: string, of: ChildOf): Promise<Session | 'other' | undefined> {
    const session = await this.getSession(id)
    if (session === undefined) return undefined
    // A third-party factory's object may not say what it is: the stored record does.
    const data =
      (session as ManagedSession).toSessionData?.() ??
      (await this.#options.persister.getSession(id)) ??
      undefined
    return data?.parentSessionId === of.parentSessionId && data.parentToolUseId === of.parentToolUseId
      ? session
      : 'other'
  }

  /**
   * The session with this id in `scope`, or `undefined`. The object in memory when there is one
   * (also one the cache dropped that the application still holds); otherwise reads its metadata.
   */
  async getSession(id: string, scope: SessionScope = {}): Promise<Session | undefined> {
    const live = this.#cache.get(id)
    if (live !== undefined) {
      if (!isInScope(scope, live)) return undefined
      // The object as the store has it now (another process may have sent, been swept or
      // updated); a session deleted elsewhere is found out at its next call.
      await (live as ManagedSession).reloadRecord?.()
      return live
    }
    let loading = this.#loading.get(id)
    if (loading === undefined) {
      loading = this.#options.persister.getSession(id).finally(() => this.#loading.delete(id))
      this.#loading.set(id, loading)
    }
    const data = await loading
    if (data === null || !isInScope(scope, data)) return undefined
    return this.#cache.get(id) ?? this.#adopt(data, undefined)
  }

  /**
   * Takes in the stored record of every held session of `scope` still `active` here although no
   * send of this process runs it: after the lease sweep marked sessions of a dead process
   * `interrupted`, their objects show it (and emit the `state` event).
   */
  async takeInStaleActive(scope: SessionScope = {}): Promise<void> {
    const stale = this.#cache
      .live()
      .filter((session) => session.state === 'active' && isInScope(scope, session)) as ManagedSession[]
    for (const session of stale) await session.reloadRecord?.()
  }

  /** A page of the sessions of `scope`, newest activity first, filtered as asked. */
  async getSessions(options: GetSessionsOptions = {}, scope: SessionScope = {}): Promise<Session[]> {
    validateGetSessionsOptions(options)
    const page = await this.#options.persister.listSessions({
      ...scopeFields(scope),
      limit: options.limit ?? 50,
      offset: options.offset ?? 0,
      ...(options.state === undefined ? {} : { state: options.state }),
      ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
      ...(options.includeChildren === undefined ? {} : { includeChildren: options.includeChildren }),
    })
    return page
      .filter((data) => isInScope(scope, data))
      .map((data) => {
        const held = this.#cache.get(data.id)
        if (held === undefined)
          return this.#adopt(data, undefined)
          // Listed as the store has it now: another process may have sent, been swept or updated.
        ;(held as ManagedSession).takeIn?.(data)
        return held
      })
  }

  /** Deletes a session of `scope` and its messages. An unknown id, or one outside the scope, is a no-op. */
  async deleteSession(id: string, scope: SessionScope = {}): Promise<void> {
    const session = await this.getSession(id, scope)
    if (!session || session.state === 'deleted') return
    await session.delete()
  }

  /**
   * A session was deleted, and with it (in the store) its children: the child session objects in
   * memory become `deleted` too (each one's own `deleted` event reaches its children in turn).
   */
  #forgetChildren(parentId: string): void {
    for (const child of this.#cache.live()) {
      if (child.state === 'deleted' || parentOf(child) !== parentId) continue
      this.#cache.delete(child)
      forget(child).catch((error: unknown) => {
        this.#options.runtime.logger?.warn("agentx: a deleted session's child could not be let go", {
          sessionId: child.id,
          error: thrownText(error),
        })
      })
    }
  }

  /**
   * After sessions were deleted in the store by a query (`pruneSessions`, retention): the session
   * objects in memory whose record is gone become `deleted` (calls on them reject with
   * `SessionStateError`, `getSession` answers `undefined`) and leave the cache. One read per
   * session in memory, bounded by the cache.
   */
  async forgetDeleted(scope: SessionScope = {}): Promise<void> {
    const sessions = this.#cache
      .live()
      .filter((session) => session.state !== 'deleted' && isInScope(scope, session))
    await Promise.all(
      sessions.map(async (session) => {
        if ((await this.#options.persister.getSession(session.id)) !== null) return
        if (session.state !== 'deleted') await forget(session)
      }),
    )
  }

  /**
   * Rewrites every stored session of `scope` found `active` (its process died mid-send) to
   * `interrupted`. Asks the persister for `state: 'active'` only, a page at a time.
   */
  async repairInterrupted(scope: SessionScope = {}): Promise<number> {
    const { persister } = this.#options
    // With leases, the store knows which `active` sessions still run in another process.
    if (typeof persister.markInterrupted === 'function') return persister.markInterrupted(scopeFields(scope))
    let repaired = 0
    for (;;) {
      const page = await persister.listSessions({
        state: 'active',
        ...scopeFields(scope),
        limit: REPAIR_PAGE,
      })
      const active = page.filter((data) => data.state === 'active' && this.#cache.peek(data.id) === undefined)
      for (const data of active) await persister.saveSession({ ...data, state: 'interrupted' })
      repaired += active.length
      if (active.length === 0 || page.length < REPAIR_PAGE) return repaired
    }
  }

  /**
   * The end of the agent: makes every session's accepted writes durable — also those of sessions
   * the cache dropped that the application still holds — and lets go of every session (and the
   * messages it holds). Rejects with the first failure after trying them all.
   */
  async releaseAll(): Promise<void> {
    const sessions = [...new Set([...this.#unreleased, ...this.#cache.live()])].filter(
      (session) => session.state !== 'deleted',
    )
    this.#cache.clear()
    const results = await Promise.allSettled(
      sessions.map((session) => (session.release ? session.release() : session.flush())),
    )
    // A session whose writes are still not durable (the store is down) is kept: its queue goes on
    // retrying, and the next `close()` flushes it again.
    this.#unreleased = sessions.filter((_, index) => results[index]!.status === 'rejected')
    const failed = results.find((result) => result.status === 'rejected')
    if (failed) throw (failed as PromiseRejectedResult).reason
  }

  /**
   * Starts or stops handing the events of root sessions to `onEvent` (the agent gained its first
   * listener or lost its last): while the agent has none, a streamed reply costs no call per event
   * for it.
   */
  forwardEvents(on: boolean): void {
    if (on === this.#forwarding) return
    this.#forwarding = on
    for (const session of this.#cache.live()) this.#forward(session, on)
  }

  #forward(session: ManagedSession, on: boolean): void {
    const route = this.#routes.get(session)
    const onEvent = this.#options.onEvent
    if (route === undefined || onEvent === undefined) return
    if (!on) {
      route.stop?.()
      route.stop = undefined
    } else if (route.stop === undefined) {
      const { source, scope } = route
      route.stop = session.subscribe((event) => onEvent(event, source, scope))
    }
  }

  /** Sessions kept in memory (the cache's bounded tier). */
  get size(): number {
    return this.#cache.size
  }

  /** Session objects still reachable: the kept ones, and dropped ones not yet garbage-collected. */
  get tracked(): number {
    return this.#cache.tracked
  }

  /** Whether the session with this id is kept in memory. */
  isKept(id: string): boolean {
    return this.#cache.isKept(id)
  }

  /**
   * Aborts every running send (keeping partial replies), including one still claiming its session,
   * and waits until they have settled.
   */
  async abortAll(): Promise<void> {
    const sessions = this.#cache.live()
    for (const session of sessions) session.abort()
    await Promise.all(sessions.map((session) => session.whenSettled?.()))
  }

  #adopt(
    data: SessionData,
    messages: AnyMessage[] | undefined,
    created?: Pick<CreateSessionOptions, 'tools' | 'compaction'>,
  ): ManagedSession {
    const { factory, adapter, runtime, persister, isClosed } = this.#options
    const tools = created?.tools
    let options: SessionRuntimeOptions = tools?.length
      ? { ...runtime, tools: [...runtime.tools, ...tools] }
      : runtime
    if (created?.compaction !== undefined) options = { ...options, compaction: created.compaction }
    const session: ManagedSession = factory.createSession({
      data,
      adapter,
      options,
      persister,
      ...(messages === undefined ? {} : { messages }),
      ...(isClosed === undefined ? {} : { isClosed }),
      // A fork goes through the cache too, and keeps this session's own tools and compaction.
      openSession: (forkData, forkMessages) => this.#adopt(forkData, forkMessages, created),
    })
    this.#cache.add(session)
    // A child session's events reach agent listeners once, wrapped in its parent's `subagent` events.
    if (data.parentSessionId === undefined) {
      this.#routes.set(session, { source: { id: data.id }, scope: scopeFields(data) })
      if (this.#forwarding) this.#forward(session, true)
    }
    const onState = (event: StateEvent): void => {
      if (event.state === 'deleted') {
        // Its listeners (the forwarding one too, after this last event) are dropped with it.
        stopWatching()
        this.#routes.delete(session)
        this.#cache.delete(session)
        this.#forgetChildren(data.id)
      } else {
        // A send starting or ending is a use: a held object the cache had dropped is kept again.
        this.#cache.touch(session)
      }
    }
    // A third-party session without `watchState` is watched through a listener of every event.
    const stopWatching =
      session.watchState?.(onState) ??
      session.subscribe((event) => {
        if (event.type === 'state') onState(event)
      })
    return session
  }
}

/** The parent of a session object (a third-party factory's objects may not say: none then). */
function parentOf(session: ManagedSession): string | undefined {
  return session.toSessionData?.().parentSessionId
}

/**
 * A session whose record the store no longer holds becomes `deleted` in memory, writing nothing
 * more. A third-party factory's object without `forget()` is deleted instead (a no-op in the store).
 */
function forget(session: ManagedSession): Promise<void> {
  return session.forget?.() ?? session.delete()
}

function sessionExists(id: string): AgentError {
  return new AgentError(
    `A session with id '${id}' already exists; choose another id, or open it with agent.getSession(id).`,
    'SESSION_EXISTS',
  )
}
