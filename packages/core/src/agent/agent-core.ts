import type { AgentAdapter } from '../contracts/agent-adapter.js'
import type { AgentPersister, SessionScope } from '../contracts/agent-persister.js'
import type { ContentBlock } from '../contracts/messages.js'
import { AgentError } from '../errors/agent-error.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import { ValidationError } from '../errors/validation-error.js'
import { DEFAULT_RETRY } from '../retry/retry-options.js'
import { DefaultSessionFactory } from '../session/default-session-factory.js'
import type { Session, SendOptions } from '../session/session.js'
import type { SessionEvent } from '../session/session-events.js'
import type { SessionRuntimeOptions } from '../session/session-runtime-options.js'
import type { AgentConfig, AgentDeps, CreateSessionOptions, GetSessionsOptions } from './agent-config.js'
import { createDefaultAdapter, createDefaultPersister } from './resolve-default-plugins.js'
import { SessionManager } from './session-manager.js'
import { resolveProfiles } from './agent-profile.js'
import {
  type PruneSessionsOptions,
  pruneSessions,
  type RetentionTimer,
  startRetention,
} from './prune-sessions.js'
import { uuidv7 } from '../util/uuid-v7.js'
import { loadKnowledge, renderKnowledge } from './load-knowledge.js'
import { validateContent, validateSendOptions } from '../session/validate-input.js'
import { isInScope, narrowScope, scopeFields } from './agent-scope.js'
import { guardPersister } from '../persistence/guard-persister.js'
import type { PeriodicTask } from '../util/periodic-task.js'
import { startLeaseSweep } from './lease-sweep.js'
import { thrownText } from '../util/thrown-text.js'

/** The public face of an agent, as `createAgent` returns it. */
export interface Agent {
  /** Resolves default plugins and repairs sessions a crash left `active`. Concurrent calls share one promise. */
  initialize(): Promise<void>
  /** Creates a session, persisted before it is returned (state `created`). */
  createSession(options?: CreateSessionOptions): Promise<Session>
  /** `createSession` + `send`; resolves to the session. */
  chat(content: string | ContentBlock[], options?: CreateSessionOptions & SendOptions): Promise<Session>
  /**
   * A stored session of this agent's scope, or `undefined`; its messages load on first use. While
   * the application holds a `Session` object, this returns that same object.
   */
  getSession(id: string): Promise<Session | undefined>
  /**
   * A page of the sessions of this agent's scope, newest activity first: `{ limit /* 50 *\/, offset,
   * state, metadata: { key, value }, includeChildren }`. Child sessions are left out unless
   * `includeChildren`.
   */
  getSessions(options?: GetSessionsOptions): Promise<Session[]>
  /** Deletes a session and its messages. An unknown id is a no-op. */
  deleteSession(id: string): Promise<void>
  /**
   * Aborts sends still running (keeping their partial replies), flushes every pending write, then
   * closes the plugins the agent created itself. On a view made by {@link Agent.withScope} it
   * rejects with code `SCOPED_VIEW` and closes nothing: a view shares its agent's plugins and
   * sessions, so only the agent `createAgent` returned can close them.
   */
  close(): Promise<void>
  /**
   * A view of this agent limited to one user and/or app: the same plugins, the same session cache
   * and the same lifecycle, but it only sees, lists, deletes, prunes and creates sessions of that
   * scope, and its `subscribe` listeners only receive their events. A view can only narrow: on an
   * agent that already has a `userId` (or `appName`), giving another value throws a
   * `ValidationError`. Synchronous and free of I/O, so a view per request costs nothing.
   */
  withScope(scope: SessionScope): Agent
  /**
   * Listens to the events of every session of this agent (telemetry, logs, a UI); returns the
   * function that stops listening. May be called before `initialize()`.
   */
  subscribe(listener: AgentListener): () => void
  /**
   * Deletes (with their messages and children) the sessions of this agent's scope whose
   * `lastActivity` is older than `inactiveForMs` ago or than `before`; resolves to how many went.
   * Needs a persister with `retention`.
   */
  pruneSessions(options: PruneSessionsOptions): Promise<number>
}

/** A listener of every session's events: the event and the session it belongs to. */
export type AgentListener = (event: SessionEvent, session: { id: string }) => void

/** What an agent and all its scoped views share: plugins, sessions, listeners and lifecycle. */
interface Shared {
  config: Readonly<AgentConfig>
  deps: AgentDeps
  initializing: Promise<Resolved> | undefined
  /** The latest `close()`; when it failed (`closeFailed`), the next call tries again. */
  closing: Promise<void> | undefined
  closeFailed?: boolean
  closed: boolean
  /** Each subscription with the scope of the agent or view it was made on. */
  listeners: Set<{ listener: AgentListener; scope: SessionScope }>
  /** This agent's lease owner id: unique per process and agent (views share it). */
  owner: string
  /** The plugins and session manager once `initialize()` has resolved them. */
  resolved?: Resolved
}

interface Resolved {
  manager: SessionManager
  adapter: AgentAdapter
  /** The persister as the kernel calls it ({@link guardPersister}). */
  persister: AgentPersister
  /** The persister given in `deps` (or the default one): what `getPersister()` returns. */
  given: AgentPersister
  ownsPersister: boolean
  retention: RetentionTimer | undefined
  leaseSweep: PeriodicTask | undefined
}

/**
 * The kernel's agent: holds the config and plugins, and delegates sessions to a
 * {@link SessionManager}. Made by {@link createAgent}; nothing happens until `initialize()` (which
 * every other method calls implicitly).
 */
export class AgentCore implements Agent {
  readonly config: Readonly<AgentConfig>
  readonly #shared: Shared
  /** The sessions this agent (or view) sees and creates. */
  readonly #scope: SessionScope
  /** Whether this is a view made by `withScope`. */
  readonly #isView: boolean

  /** `view` is internal: `withScope` passes the agent it narrows. */
  constructor(config: AgentConfig, deps: AgentDeps = {}, view?: { of: AgentCore; scope: SessionScope }) {
    this.config = view === undefined ? config : { ...config, ...view.scope }
    this.#shared = view === undefined ? newShared(config, deps) : view.of.#shared
    this.#scope = view?.scope ?? scopeFields(config)
    this.#isView = view !== undefined
  }

  withScope(scope: SessionScope): Agent {
    const narrowed = narrowScope(this.#scope, scope)
    return new AgentCore(this.#shared.config, this.#shared.deps, { of: this, scope: narrowed })
  }

  /**
   * Sessions kept in memory by the agent's session cache (shared by its views): how many are kept,
   * how many objects are still reachable, and whether one id is kept. All `0`/`false` before
   * `initialize()`. For diagnostics and tests.
   */
  sessionCacheStats(): { kept: number; tracked: number; isKept(id: string): boolean } {
    const manager = this.#shared.resolved?.manager
    return {
      kept: manager?.size ?? 0,
      tracked: manager?.tracked ?? 0,
      isKept: (id) => manager?.isKept(id) ?? false,
    }
  }

  /** The adapter in use (after `initialize()`). */
  async getAdapter(): Promise<AgentAdapter> {
    return (await this.#ready()).adapter
  }

  /** The persister in use (after `initialize()`). */
  async getPersister(): Promise<AgentPersister> {
    return (await this.#ready()).given
  }

  async initialize(): Promise<void> {
    await this.#ready()
  }

  async createSession(options: CreateSessionOptions = {}): Promise<Session> {
    return (await this.#ready()).manager.createSession(options, this.#scope)
  }

  async chat(
    content: string | ContentBlock[],
    options: CreateSessionOptions & SendOptions = {},
  ): Promise<Session> {
    const { id, summary, metadata, cwd, tools, compaction, ...sendOptions } = options
    const create: CreateSessionOptions = {}
    if (id !== undefined) create.id = id
    if (options.model !== undefined) create.model = options.model
    if (options.systemPrompt !== undefined) create.systemPrompt = options.systemPrompt
    if (summary !== undefined) create.summary = summary
    if (metadata !== undefined) create.metadata = metadata
    if (cwd !== undefined) create.cwd = cwd
    if (tools !== undefined) create.tools = tools
    if (compaction !== undefined) create.compaction = compaction
    // Check the send's content and options before a session is created for it.
    validateContent(content)
    validateSendOptions(sendOptions)
    const session = await this.createSession(create)
    await session.send(content, sendOptions)
    return session
  }

  async getSession(id: string): Promise<Session | undefined> {
    const { manager } = await this.#ready()
    return manager.getSession(checkSessionId(id), this.#scope)
  }

  async getSessions(options: GetSessionsOptions = {}): Promise<Session[]> {
    return (await this.#ready()).manager.getSessions(options, this.#scope)
  }

  async deleteSession(id: string): Promise<void> {
    const { manager } = await this.#ready()
    return manager.deleteSession(checkSessionId(id), this.#scope)
  }

  async pruneSessions(options: PruneSessionsOptions): Promise<number> {
    const { persister, manager } = await this.#ready()
    const removed = await pruneSessions(persister, this.#scope, options)
    if (removed > 0) await manager.forgetDeleted(this.#scope)
    return removed
  }

  subscribe(listener: AgentListener): () => void {
    if (typeof listener !== 'function') throw new ValidationError('subscribe() takes a listener function.')
    // A view's listener only hears the sessions of its scope.
    const listeners = this.#shared.listeners
    const subscription = { listener, scope: this.#scope }
    listeners.add(subscription)
    this.#shared.resolved?.manager.forwardEvents(true)
    return () => {
      listeners.delete(subscription)
      this.#shared.resolved?.manager.forwardEvents(listeners.size > 0)
    }
  }

  close(): Promise<void> {
    if (this.#isView) {
      return Promise.reject(
        new AgentError(
          'close() is not available on a view made by withScope(): it shares its agent, so close the agent that createAgent() returned.',
          'SCOPED_VIEW',
        ),
      )
    }
    const shared = this.#shared
    shared.closed = true
    // A close that could not make every accepted write durable (the store is down) is tried again
    // by the next call: nothing accepted is dropped, and the store stays open until then.
    if (shared.closing === undefined || shared.closeFailed) {
      shared.closeFailed = false
      const closing = closeResolved(shared)
      closing.catch(() => {
        shared.closeFailed = true
      })
      shared.closing = closing
    }
    return shared.closing
  }

  #ready(): Promise<Resolved> {
    const shared = this.#shared
    if (shared.closed) return Promise.reject(new AgentError('This agent is closed.', 'AGENT_CLOSED'))
    shared.initializing ??= this.#resolve()
    return shared.initializing
  }

  async #resolve(): Promise<Resolved> {
    const shared = this.#shared
    const { config, deps } = shared
    // Start-up and retention work on the agent's own scope, whichever view started them.
    const scope = scopeFields(config)
    const given = deps.persister ?? (await createDefaultPersister(config.workspace ?? process.cwd()))
    const ownsPersister = deps.persister === undefined
    // What the kernel calls: a third-party store's own errors arrive as `PersistenceError`s.
    const persister = guardPersister(given)
    try {
      // A retention that can never delete anything is refused, not retried forever in the background.
      if (config.retention !== undefined && typeof given.deleteSessions !== 'function') {
        throw new ConfigurationError(
          'retention needs a persister with the retention capability (deleteSessions): use @agentx/persister-sqlite, @agentx/persister-postgres or InMemoryPersister, add deleteSessions to your persister, or leave retention out.',
        )
      }
      const adapter = deps.adapter ?? (await createDefaultAdapter())
      const runtime: SessionRuntimeOptions = {
        model: config.model ?? '',
        tools: config.tools ?? [],
        maxSteps: config.maxSteps ?? 20,
        retry: { ...DEFAULT_RETRY, ...config.retry },
        durability: config.durability ?? 'async',
        checkpointIntervalMs: config.checkpointIntervalMs ?? 250,
      }
      if (config.systemPrompt !== undefined) runtime.systemPrompt = config.systemPrompt
      if (config.writeRetry !== undefined) runtime.writeRetry = config.writeRetry
      runtime.owner = shared.owner
      if (config.leaseTtlMs !== undefined) runtime.leaseTtlMs = config.leaseTtlMs
      if (deps.logger !== undefined) runtime.logger = deps.logger
      if (config.compaction !== undefined) runtime.compaction = config.compaction
      if (config.knowledge !== undefined) {
        const knowledge = renderKnowledge(
          await loadKnowledge(config.knowledge, config.workspace ?? process.cwd()),
        )
        if (knowledge !== undefined) runtime.knowledge = knowledge
      }
      if (config.agents !== undefined) {
        runtime.profiles = resolveProfiles(config.agents, runtime.tools)
        // Each profile's own knowledge (a profile does not inherit the top level's).
        for (const [name, profile] of runtime.profiles) {
          const entries = name === 'default' ? undefined : config.agents[name]?.knowledge
          if (entries === undefined) continue
          const knowledge = renderKnowledge(await loadKnowledge(entries, config.workspace ?? process.cwd()))
          if (knowledge !== undefined) profile.knowledge = knowledge
        }
        // The default profile's tools, with agent tools described from their profiles.
        runtime.tools = [...(runtime.profiles.get('default')?.tools ?? runtime.tools)]
      }
      runtime.children = {
        open: (init) => manager.openChild(init),
        find: (id, of) => manager.findChild(id, of),
      }
      const manager: SessionManager = new SessionManager({
        adapter,
        persister,
        factory: deps.sessionFactory ?? new DefaultSessionFactory(),
        runtime,
        ...(config.sessionCache === undefined ? {} : { cache: config.sessionCache }),
        isClosed: () => shared.closed,
        onEvent: (event, session, sessionScope) => {
          if (shared.listeners.size === 0) return
          for (const { listener, scope: listenerScope } of shared.listeners) {
            if (!isInScope(listenerScope, sessionScope)) continue
            try {
              listener(event, session)
            } catch (error) {
              deps.logger?.warn('agentx: an agent listener threw', {
                error: thrownText(error),
              })
            }
          }
        },
      })
      manager.forwardEvents(shared.listeners.size > 0)
      const repaired = await manager.repairInterrupted(scope)
      if (repaired > 0)
        deps.logger?.info('agentx: marked sessions of a crashed process as interrupted', { repaired })
      const leaseSweep = startLeaseSweep(manager, persister, scope, config.leaseTtlMs, deps.logger)
      const retentionConfig = config.retention
      const retention =
        retentionConfig === undefined
          ? undefined
          : startRetention(
              async () => {
                const removed = await pruneSessions(persister, scope, {
                  inactiveForMs: retentionConfig.inactiveForMs,
                  ...(retentionConfig.states === undefined ? {} : { states: retentionConfig.states }),
                })
                if (removed > 0) await manager.forgetDeleted(scope)
                return removed
              },
              {
                ...(retentionConfig.intervalMs === undefined
                  ? {}
                  : { intervalMs: retentionConfig.intervalMs }),
                ...(deps.logger === undefined ? {} : { logger: deps.logger }),
              },
            )
      const resolved: Resolved = {
        manager,
        adapter,
        persister,
        given,
        ownsPersister,
        retention,
        leaseSweep,
      }
      shared.resolved = resolved
      // A listener added while this was resolving.
      manager.forwardEvents(shared.listeners.size > 0)
      return resolved
    } catch (error) {
      if (ownsPersister) await persister.close?.().catch(() => undefined)
      shared.initializing = undefined
      throw error
    }
  }
}

/**
 * One attempt at closing: stops the timers, aborts running sends, makes every accepted write
 * durable and lets go of the sessions, then closes the persister the agent created itself. When
 * writes are still not durable, it rejects and leaves that persister open for the next attempt.
 */
async function closeResolved(shared: Shared): Promise<void> {
  if (!shared.initializing) return
  const resolved = await shared.initializing.catch(() => undefined)
  if (!resolved) return
  await resolved.retention?.stop()
  await resolved.leaseSweep?.stop()
  await resolved.manager.abortAll()
  await resolved.manager.releaseAll()
  if (resolved.ownsPersister) await resolved.persister.close?.()
}

function newShared(config: AgentConfig, deps: AgentDeps): Shared {
  return {
    config,
    deps,
    initializing: undefined,
    closing: undefined,
    closed: false,
    listeners: new Set(),
    owner: uuidv7(),
  }
}

/** Session ids are opaque, non-empty strings (DESIGN §4). */
function checkSessionId(id: unknown): string {
  if (typeof id !== 'string' || id === '') {
    throw new ValidationError('A session id is a non-empty string.')
  }
  return id
}
