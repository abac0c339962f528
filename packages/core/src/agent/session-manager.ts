import type { AgentAdapter } from '../contracts/agent-adapter.js'
import type { AgentPersister, SessionData } from '../contracts/agent-persister.js'
import type { SessionFactory } from '../contracts/session-factory.js'
import { isAgentError } from '../errors/agent-error.js'
import { cloneJson } from '../persistence/json-copy.js'
import type { Session } from '../session/session.js'
import type { SessionEvent } from '../session/session-events.js'
import type { SessionRuntimeOptions } from '../session/session-runtime-options.js'
import { sleep } from '../util/abort.js'
import { emptyUsage } from '../util/token-usage.js'
import { uuidv7 } from '../util/uuid-v7.js'
import type { CreateSessionOptions, GetSessionsOptions } from './agent-config.js'
import { validateCreateSessionOptions } from './validate-config.js'

const REPAIR_PAGE = 100

/** What a {@link SessionManager} works with. */
export interface SessionManagerOptions {
  adapter: AgentAdapter
  persister: AgentPersister
  factory: SessionFactory
  runtime: SessionRuntimeOptions
  userId?: string
  appName?: string
  /** Whether the agent is closed (its sessions then reject every call with `AGENT_CLOSED`). */
  isClosed?: () => boolean
  /** Receives every event of every session the manager holds (`agent.subscribe`). */
  onEvent?: (event: SessionEvent, session: { id: string }) => void
}

/** What the manager may call on a session beyond the public {@link Session} (a {@link BaseSession} has both). */
interface ManagedSession extends Session {
  whenSettled?(): Promise<void>
  release?(): Promise<void>
}

/**
 * Owns the session objects of one agent: creates them (persisted before the object exists),
 * loads stored ones lazily (metadata first, messages on first use), caches them so one id is one
 * object, and deletes them with their messages.
 */
export class SessionManager {
  readonly #options: SessionManagerOptions
  readonly #sessions = new Map<string, Session>()
  readonly #loading = new Map<string, Promise<Session | undefined>>()

  constructor(options: SessionManagerOptions) {
    this.#options = options
  }

  /** Creates a session: saves its metadata, then makes the object (state `created`). */
  async createSession(options: CreateSessionOptions = {}): Promise<Session> {
    validateCreateSessionOptions(options)
    const { runtime, userId, appName } = this.#options
    const now = new Date().toISOString()
    const data: SessionData = {
      id: uuidv7(),
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
    if (userId !== undefined) data.userId = userId
    if (appName !== undefined) data.appName = appName
    if (options.metadata !== undefined) data.metadata = cloneJson(options.metadata, 'metadata')
    await withRetry(() => this.#options.persister.saveSession(data))
    return this.#adopt(data, [], options)
  }

  /** The session with this id in this agent's scope, or `undefined`. Reads metadata only. */
  async getSession(id: string): Promise<Session | undefined> {
    const cached = this.#sessions.get(id)
    if (cached) return cached
    let loading = this.#loading.get(id)
    if (!loading) {
      loading = (async () => {
        const data = await this.#options.persister.getSession(id)
        if (!data || !this.#inScope(data)) return undefined
        return this.#sessions.get(id) ?? this.#adopt(data, undefined)
      })().finally(() => this.#loading.delete(id))
      this.#loading.set(id, loading)
    }
    return loading
  }

  /** Sessions of this scope, newest activity first. */
  async getSessions(options: GetSessionsOptions = {}): Promise<Session[]> {
    const { userId, appName } = this.#options
    const page = await this.#options.persister.listSessions({
      ...(userId === undefined ? {} : { userId }),
      ...(appName === undefined ? {} : { appName }),
      limit: options.limit ?? 50,
      offset: options.offset ?? 0,
    })
    return page
      .filter((data) => this.#inScope(data))
      .map((data) => this.#sessions.get(data.id) ?? this.#adopt(data, undefined))
  }

  /** Deletes a session and its messages. An unknown id is a no-op. */
  async deleteSession(id: string): Promise<void> {
    const session = await this.getSession(id)
    if (!session || session.state === 'deleted') return
    await session.delete()
    this.#sessions.delete(id)
  }

  /**
   * Rewrites every stored session of this scope found `active` (its process died mid-send) to
   * `interrupted`. Asks the persister for `state: 'active'` only, a page at a time.
   */
  async repairInterrupted(): Promise<number> {
    const { persister, userId, appName } = this.#options
    // With leases, the store knows which `active` sessions still run in another process.
    if (typeof persister.markInterrupted === 'function') {
      return persister.markInterrupted({
        ...(userId === undefined ? {} : { userId }),
        ...(appName === undefined ? {} : { appName }),
      })
    }
    let repaired = 0
    for (;;) {
      const page = await persister.listSessions({
        state: 'active',
        ...(userId === undefined ? {} : { userId }),
        ...(appName === undefined ? {} : { appName }),
        limit: REPAIR_PAGE,
      })
      const active = page.filter((data) => data.state === 'active' && !this.#sessions.has(data.id))
      for (const data of active) await persister.saveSession({ ...data, state: 'interrupted' })
      repaired += active.length
      if (active.length === 0 || page.length < REPAIR_PAGE) return repaired
    }
  }

  /**
   * The end of the agent: makes every session's accepted writes durable and lets go of every
   * session (and the messages it holds). Rejects with the first failure after trying them all.
   */
  async releaseAll(): Promise<void> {
    const sessions = [...this.#sessions.values()].filter((s) => s.state !== 'deleted')
    this.#sessions.clear()
    const results = await Promise.allSettled(
      sessions.map((session: ManagedSession) => (session.release ? session.release() : session.flush())),
    )
    const failed = results.find((result) => result.status === 'rejected')
    if (failed) throw (failed as PromiseRejectedResult).reason
  }

  /** Sessions held in memory. */
  get size(): number {
    return this.#sessions.size
  }

  /** Aborts every running send (keeping partial replies) and waits until they have settled. */
  async abortAll(): Promise<void> {
    const running = [...this.#sessions.values()].filter((session) => session.state === 'active')
    for (const session of running) session.abort()
    await Promise.all(running.map((session: ManagedSession) => session.whenSettled?.()))
  }

  #adopt(
    data: SessionData,
    messages: [] | undefined,
    created?: Pick<CreateSessionOptions, 'tools' | 'compaction'>,
  ): Session {
    const { factory, adapter, runtime, persister, isClosed } = this.#options
    const tools = created?.tools
    let options: SessionRuntimeOptions = tools?.length
      ? { ...runtime, tools: [...runtime.tools, ...tools] }
      : runtime
    if (created?.compaction !== undefined) options = { ...options, compaction: created.compaction }
    const session = factory.createSession({
      data,
      adapter,
      options,
      persister,
      ...(messages === undefined ? {} : { messages }),
      ...(isClosed === undefined ? {} : { isClosed }),
    })
    this.#sessions.set(data.id, session)
    const { onEvent } = this.#options
    const source = { id: data.id }
    const unsubscribe = session.subscribe((event) => {
      onEvent?.(event, source)
      if (event.type === 'state' && event.state === 'deleted') {
        unsubscribe()
        if (this.#sessions.get(data.id) === session) this.#sessions.delete(data.id)
      }
    })
    return session
  }

  #inScope(data: SessionData): boolean {
    const { userId, appName } = this.#options
    return (
      (userId === undefined || data.userId === userId) && (appName === undefined || data.appName === appName)
    )
  }
}

/** Retries a transient storage failure a few times (creating a session must not fail on a hiccup). */
async function withRetry(operation: () => Promise<void>, attempts = 4): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation()
    } catch (error) {
      const retryable = !isAgentError(error) || error.retryable
      if (!retryable || attempt >= attempts) throw error
      await sleep(25 * 2 ** (attempt - 1))
    }
  }
}
