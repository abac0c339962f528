import type { AgentAdapter } from '../contracts/agent-adapter.js'
import type { AgentPersister, SessionScope } from '../contracts/agent-persister.js'
import type { ContentBlock } from '../contracts/messages.js'
import { AgentError } from '../errors/agent-error.js'
import { DEFAULT_RETRY } from '../retry/retry-options.js'
import { DefaultSessionFactory } from '../session/default-session-factory.js'
import type { Session, SendOptions } from '../session/session.js'
import type { SessionEvent } from '../session/session-events.js'
import type { SessionRuntimeOptions } from '../session/session-runtime-options.js'
import type { AgentConfig, AgentDeps, CreateSessionOptions, GetSessionsOptions } from './agent-config.js'
import { createDefaultAdapter, createDefaultPersister } from './resolve-default-plugins.js'
import { SessionManager } from './session-manager.js'
import {
  type PruneSessionsOptions,
  pruneSessions,
  type RetentionTimer,
  startRetention,
} from './prune-sessions.js'
import { uuidv7 } from '../util/uuid-v7.js'
import { loadKnowledge, renderKnowledge } from './load-knowledge.js'
import { validateContent, validateSendOptions } from '../session/validate-input.js'

/** The public face of an agent, as `createAgent` returns it. */
export interface Agent {
  /** Resolves default plugins and repairs sessions a crash left `active`. Concurrent calls share one promise. */
  initialize(): Promise<void>
  /** Creates a session, persisted before it is returned (state `created`). */
  createSession(options?: CreateSessionOptions): Promise<Session>
  /** `createSession` + `send`; resolves to the session. */
  chat(content: string | ContentBlock[], options?: CreateSessionOptions & SendOptions): Promise<Session>
  /** A stored session of this agent's scope, or `undefined`; its messages load on first use. */
  getSession(id: string): Promise<Session | undefined>
  /** Sessions of this agent's scope, newest activity first. */
  getSessions(options?: GetSessionsOptions): Promise<Session[]>
  /** Deletes a session and its messages. An unknown id is a no-op. */
  deleteSession(id: string): Promise<void>
  /** Aborts sends still running (keeping their partial replies), flushes every pending write, then closes the plugins the agent created itself. */
  close(): Promise<void>
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

interface Resolved {
  manager: SessionManager
  adapter: AgentAdapter
  persister: AgentPersister
  ownsPersister: boolean
  retention: RetentionTimer | undefined
}

/**
 * The kernel's agent: holds the config and plugins, and delegates sessions to a
 * {@link SessionManager}. Made by {@link createAgent}; nothing happens until `initialize()` (which
 * every other method calls implicitly).
 */
export class AgentCore implements Agent {
  readonly config: Readonly<AgentConfig>
  readonly #deps: AgentDeps
  #initializing: Promise<Resolved> | undefined
  #closing: Promise<void> | undefined
  #closed = false
  readonly #listeners = new Set<AgentListener>()
  /** This instance's lease owner id: unique per process and agent. */
  readonly #owner = uuidv7()

  constructor(config: AgentConfig, deps: AgentDeps = {}) {
    this.config = config
    this.#deps = deps
  }

  /** The adapter in use (after `initialize()`). */
  async getAdapter(): Promise<AgentAdapter> {
    return (await this.#ready()).adapter
  }

  /** The persister in use (after `initialize()`). */
  async getPersister(): Promise<AgentPersister> {
    return (await this.#ready()).persister
  }

  async initialize(): Promise<void> {
    await this.#ready()
  }

  async createSession(options: CreateSessionOptions = {}): Promise<Session> {
    return (await this.#ready()).manager.createSession(options)
  }

  async chat(
    content: string | ContentBlock[],
    options: CreateSessionOptions & SendOptions = {},
  ): Promise<Session> {
    const { summary, metadata, cwd, tools, compaction, ...sendOptions } = options
    const create: CreateSessionOptions = {}
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
    return (await this.#ready()).manager.getSession(id)
  }

  async getSessions(options: GetSessionsOptions = {}): Promise<Session[]> {
    return (await this.#ready()).manager.getSessions(options)
  }

  async deleteSession(id: string): Promise<void> {
    return (await this.#ready()).manager.deleteSession(id)
  }

  async pruneSessions(options: PruneSessionsOptions): Promise<number> {
    const { persister } = await this.#ready()
    return pruneSessions(persister, this.#scope(), options)
  }

  #scope(): SessionScope {
    const { userId, appName } = this.config
    return { ...(userId === undefined ? {} : { userId }), ...(appName === undefined ? {} : { appName }) }
  }

  subscribe(listener: AgentListener): () => void {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  close(): Promise<void> {
    this.#closed = true
    this.#closing ??= (async () => {
      if (!this.#initializing) return
      const resolved = await this.#initializing.catch(() => undefined)
      if (!resolved) return
      try {
        await resolved.retention?.stop()
        await resolved.manager.abortAll()
        await resolved.manager.releaseAll()
      } finally {
        if (resolved.ownsPersister) await resolved.persister.close?.()
      }
    })()
    return this.#closing
  }

  #ready(): Promise<Resolved> {
    if (this.#closing) return Promise.reject(new AgentError('This agent is closed.', 'AGENT_CLOSED'))
    this.#initializing ??= this.#resolve()
    return this.#initializing
  }

  async #resolve(): Promise<Resolved> {
    const config = this.config
    const deps = this.#deps
    const persister = deps.persister ?? (await createDefaultPersister(config.workspace ?? process.cwd()))
    const ownsPersister = deps.persister === undefined
    try {
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
      runtime.owner = this.#owner
      if (config.leaseTtlMs !== undefined) runtime.leaseTtlMs = config.leaseTtlMs
      if (deps.logger !== undefined) runtime.logger = deps.logger
      if (config.compaction !== undefined) runtime.compaction = config.compaction
      if (config.knowledge !== undefined) {
        const knowledge = renderKnowledge(
          await loadKnowledge(config.knowledge, config.workspace ?? process.cwd()),
        )
        if (knowledge !== undefined) runtime.knowledge = knowledge
      }
      const manager = new SessionManager({
        adapter,
        persister,
        factory: deps.sessionFactory ?? new DefaultSessionFactory(),
        runtime,
        ...(config.userId === undefined ? {} : { userId: config.userId }),
        ...(config.appName === undefined ? {} : { appName: config.appName }),
        isClosed: () => this.#closed,
        onEvent: (event, session) => {
          for (const listener of this.#listeners) {
            try {
              listener(event, session)
            } catch (error) {
              deps.logger?.warn('agentx: an agent listener threw', {
                error: error instanceof Error ? error.message : String(error),
              })
            }
          }
        },
      })
      const repaired = await manager.repairInterrupted()
      if (repaired > 0)
        deps.logger?.info('agentx: marked sessions of a crashed process as interrupted', { repaired })
      const retentionConfig = config.retention
      const retention =
        retentionConfig === undefined
          ? undefined
          : startRetention(
              () =>
                pruneSessions(persister, this.#scope(), {
                  inactiveForMs: retentionConfig.inactiveForMs,
                  ...(retentionConfig.states === undefined ? {} : { states: retentionConfig.states }),
                }),
              {
                ...(retentionConfig.intervalMs === undefined
                  ? {}
                  : { intervalMs: retentionConfig.intervalMs }),
                ...(deps.logger === undefined ? {} : { logger: deps.logger }),
              },
            )
      return { manager, adapter, persister, ownsPersister, retention }
    } catch (error) {
      if (ownsPersister) await persister.close?.().catch(() => undefined)
      this.#initializing = undefined
      throw error
    }
  }
}
