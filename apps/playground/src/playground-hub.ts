import {
  type Agent,
  type AgentConfig,
  type AgentPersister,
  type AgentProfile,
  type AnyMessage,
  BaseSession,
  ConfigurationError,
  type ContentBlock,
  createAgent,
  type ForkOptions,
  isAdapterError,
  type Logger,
  NotFoundError,
  type PendingToolCall,
  type RetryOptions,
  type SendOptions,
  type Session,
  SessionBusyError,
  type SessionData,
  type SessionEvent,
  type SessionState,
  type SessionUpdate,
  type ToolAnswer,
  type ToolApproval,
  ValidationError,
} from '@agentx/core'
import type { PlaygroundProvider } from './playground-provider.js'
import { type ErrorView, serializeError } from './serialize-error.js'
import { SessionRun } from './session-run.js'
import { type LastError, lastErrorOf, providerOf, type SessionView, toSessionView } from './session-view.js'

/** The `appName` of every playground session: the playground lists and deletes only its own sessions. */
export const PLAYGROUND_APP_NAME = 'agentx-playground'

/** Options of {@link PlaygroundHub}. */
export interface PlaygroundHubOptions {
  /**
   * The providers of the picker. The first one with an adapter (the offline demo) is the agent's
   * top-level profile, with its own profiles (`agents`); every other one with an adapter becomes a
   * profile named after its id.
   */
  providers: readonly PlaygroundProvider[]
  /** The agent's store. The hub does not close it. */
  persister: AgentPersister
  /** The agent's retry policy (tests use short delays). Default is core's. */
  retry?: RetryOptions
  /** Values scrubbed from errors the hub stores or sends (API keys). Default is none. */
  secrets?: readonly string[]
  logger?: Logger
}

/** What `createSession` of the hub takes. */
export interface CreatePlaygroundSessionOptions {
  /** A provider id of the picker. */
  provider: string
  /** Default is the provider's first model. */
  model?: string
  systemPrompt?: string
}

/** A query of the session list. */
export interface ListPlaygroundSessionsQuery {
  /** Only sessions whose summary contains this text (case-insensitive), or whose id is exactly it. */
  q?: string
  /** Only sessions in one of these states. */
  states?: SessionState[]
  /** Only sessions of this provider (`metadata.provider`). */
  provider?: string
  limit: number
  offset: number
}

/** A session with its messages, as `GET /api/sessions/:id` answers it. */
export interface SessionDetail {
  session: SessionView
  messages: AnyMessage[]
  /** The tool calls the session waits on (state `waiting_input`), else `[]`. */
  pending: PendingToolCall[]
  /** The error of the last failed send, when the session is in `error` (or a reply was cut by a server stop). */
  lastError?: LastError
  /**
   * Present while a send of this session runs on the server: reattach with
   * `GET /api/sessions/:id/events?after=<resumeAfter>` to see the reply being streamed from its start.
   */
  running?: { resumeAfter: number; startedAt: string }
}

/** What a send takes besides its content: the per-send options of DESIGN §9. */
export type PlaygroundSendOptions = Pick<
  SendOptions,
  'agent' | 'model' | 'temperature' | 'maxOutputTokens'
> & { output?: unknown }

/** The input of a send: text, or the answers to pending tool calls (DESIGN §10.1). */
export type PlaygroundSendInput = string | Array<ToolApproval | ToolAnswer | ContentBlock>

const MAX_MODEL_LENGTH = 200
const MAX_SYSTEM_PROMPT_LENGTH = 20_000
const SCAN_PAGE = 200
/** The metadata key the last failed send's error is stored under. */
const LAST_ERROR_KEY = 'lastError'
/** The name of the agent's top-level profile (DESIGN §10.3). */
const DEFAULT_PROFILE = 'default'
/**
 * Compaction settings of a provider profile without its own: never. The top-level compaction is
 * the demo's (its `/compact` fills a pretend context); a real model's context window is not the
 * demo's, and the playground does not guess it.
 */
const NO_COMPACTION = { thresholdTokens: Number.MAX_SAFE_INTEGER }

/** How a provider is served by the one agent: the profile its sends run with, and the profiles they may pick. */
interface ProviderRoute {
  provider: PlaygroundProvider
  /** The profile a send runs with when it picks none: `default` for the top-level provider, else the provider's id. */
  profile: string
  /** The profiles a send may pick (the top-level provider's own profiles), or none. */
  choices: ReadonlySet<string>
}

/**
 * Serves every provider of the playground with ONE {@link Agent} (DESIGN §10.3): the offline demo
 * is its top-level profile (with the demo's own profiles: `billing`, `researcher`), and every other
 * configured provider is a profile with its own adapter and tools. A session remembers its
 * provider in `metadata.provider`; each send runs with that provider's profile. So listing,
 * reading, exporting and deleting go through the agent (`getSessions` with its state, metadata
 * and child filters, `getSession`, `session.getMessages()`), never past it to the store. Sessions
 * of a provider that is not configured any more stay readable and deletable.
 *
 * Sends run on the server, not in the request that started them: each is a {@link SessionRun}
 * that keeps its events, so a client that disconnects (a reload, a closed tab) only stops
 * watching, and a reopened page or another tab reattaches to it.
 */
export class PlaygroundHub {
  readonly #options: PlaygroundHubOptions
  readonly #providers: Map<string, PlaygroundProvider>
  /** The configured providers (those with an adapter), by id. */
  readonly #routes = new Map<string, ProviderRoute>()
  /** The send running for each session, if any. */
  readonly #runs = new Map<string, SessionRun>()
  #agent: Agent | undefined
  #initializing: Promise<void> | undefined
  #closing: Promise<void> | undefined

  constructor(options: PlaygroundHubOptions) {
    this.#options = options
    this.#providers = new Map(options.providers.map((provider) => [provider.id, provider]))
  }

  /** Creates and initializes the agent (it repairs sessions a crash left `active`). */
  initialize(): Promise<void> {
    this.#initializing ??= (async () => {
      const available = this.#options.providers.filter((provider) => provider.adapter !== undefined)
      const [top, ...others] = available
      if (top === undefined) throw new ConfigurationError('The playground has no provider with an adapter.')
      const agents: Record<string, AgentProfile> = { ...top.agents }
      this.#routes.set(top.id, {
        provider: top,
        profile: DEFAULT_PROFILE,
        choices: new Set(top.agents === undefined ? [] : [DEFAULT_PROFILE, ...Object.keys(top.agents)]),
      })
      for (const provider of others) {
        if (provider.id in agents || provider.id === DEFAULT_PROFILE) {
          throw new ConfigurationError(
            `The provider id "${provider.id}" is also the name of an agent profile.`,
          )
        }
        agents[provider.id] = {
          description: provider.label,
          adapter: provider.adapter!,
          tools: provider.tools ?? [],
          compaction: provider.compaction ?? NO_COMPACTION,
        }
        this.#routes.set(provider.id, { provider, profile: provider.id, choices: new Set() })
      }
      const config: AgentConfig = {
        appName: PLAYGROUND_APP_NAME,
        durability: 'sync',
        ...(top.models[0] === undefined ? {} : { model: top.models[0] }),
        ...(top.tools === undefined ? {} : { tools: top.tools }),
        ...(Object.keys(agents).length === 0 ? {} : { agents }),
        ...(top.compaction === undefined ? {} : { compaction: top.compaction }),
        ...(this.#options.retry === undefined ? {} : { retry: this.#options.retry }),
      }
      const agent = createAgent(config, {
        adapter: top.adapter!,
        persister: this.#options.persister,
        ...(this.#options.logger === undefined ? {} : { logger: this.#options.logger }),
      })
      await agent.initialize()
      this.#agent = agent
    })()
    return this.#initializing
  }

  /** The playground's top-level sessions (children of agent tools are left out), newest activity first. */
  async listSessions(query: ListPlaygroundSessionsQuery): Promise<SessionView[]> {
    const agent = await this.#ready()
    const filters = {
      ...(query.states === undefined ? {} : { state: query.states }),
      ...(query.provider === undefined ? {} : { metadata: { key: 'provider', value: query.provider } }),
    }
    let sessions: Session[]
    const needle = query.q?.trim().toLowerCase() ?? ''
    if (needle === '') {
      sessions = await agent.getSessions({ ...filters, limit: query.limit, offset: query.offset })
    } else {
      // No store query searches summaries: scan pages (fine for a local playground's few thousand sessions).
      const matches: Session[] = []
      for (let offset = 0; matches.length < query.offset + query.limit; offset += SCAN_PAGE) {
        const page = await agent.getSessions({ ...filters, limit: SCAN_PAGE, offset })
        for (const session of page) {
          if (session.summary.toLowerCase().includes(needle) || session.id === query.q?.trim())
            matches.push(session)
        }
        if (page.length < SCAN_PAGE) break
      }
      sessions = matches.slice(query.offset, query.offset + query.limit)
    }
    const views = sessions.map((session) => this.#view(session))
    // A session being written to may have moved since the page was read.
    return views.sort((a, b) =>
      a.lastActivity < b.lastActivity ? 1 : a.lastActivity > b.lastActivity ? -1 : 0,
    )
  }

  /** Creates a session for a provider (persisted before it is returned). */
  async createSession(options: CreatePlaygroundSessionOptions): Promise<SessionView> {
    const agent = await this.#ready()
    const provider = this.#providers.get(options.provider)
    if (provider === undefined) throw new ValidationError(`Unknown provider "${String(options.provider)}".`)
    if (!this.#routes.has(provider.id)) {
      throw new ConfigurationError(
        `The provider "${provider.id}" is not available: ${provider.unavailableReason ?? 'it has no adapter'}.`,
      )
    }
    const model = options.model ?? provider.models[0]
    if (typeof model !== 'string' || model.trim() === '' || model.length > MAX_MODEL_LENGTH) {
      throw new ValidationError(`model must be a non-empty string of at most ${MAX_MODEL_LENGTH} characters.`)
    }
    if (options.systemPrompt !== undefined) {
      if (
        typeof options.systemPrompt !== 'string' ||
        options.systemPrompt.length > MAX_SYSTEM_PROMPT_LENGTH
      ) {
        throw new ValidationError(
          `systemPrompt must be a string of at most ${MAX_SYSTEM_PROMPT_LENGTH} characters.`,
        )
      }
    }
    const session = await agent.createSession({
      model: model.trim(),
      metadata: { provider: provider.id },
      ...(options.systemPrompt === undefined || options.systemPrompt === ''
        ? {}
        : { systemPrompt: options.systemPrompt }),
    })
    return this.#view(session)
  }

  /** A session with its messages, pending calls, last error and running send, or `undefined`. */
  async getSession(id: string): Promise<SessionDetail | undefined> {
    const session = await this.#find(id)
    if (session === undefined) return undefined
    // Taken before the messages are read, so a replay from it overlaps them rather than leaving a gap.
    const run = this.#runs.get(id)
    const running =
      run === undefined || run.isEnded
        ? undefined
        : { resumeAfter: run.resumeAfter, startedAt: run.startedAt }
    const messages = await session.getMessages()
    const view = this.#view(session)
    const pending = view.state === 'waiting_input' && running === undefined ? await session.getPending() : []
    const detail: SessionDetail = { session: view, messages, pending }
    if (view.lastError !== undefined) detail.lastError = view.lastError
    if (running !== undefined) detail.running = running
    return detail
  }

  /** The session and every message, for a JSON download. */
  async exportSession(id: string): Promise<{ session: SessionData; messages: AnyMessage[] } | undefined> {
    const session = await this.#find(id)
    if (session === undefined) return undefined
    return { session: dataOf(session), messages: await session.getMessages() }
  }

  /**
   * Deletes a session and its messages (aborting a running reply first, and waiting for it to end).
   * Returns whether it existed.
   */
  async deleteSession(id: string): Promise<boolean> {
    const session = await this.#find(id)
    if (session === undefined) return false
    const run = this.#runs.get(id)
    if (run !== undefined) {
      session.abort()
      await run.ended
    }
    await (await this.#ready()).deleteSession(id)
    return true
  }

  /**
   * Starts a send (or, with `input` `undefined`, a `retry()`) that runs on the server whatever
   * happens to the request, and resolves once it produced its first event. It runs with the
   * profile of the session's provider (for the demo: the profile the send picks, or the one that
   * answered last). Rejects, having written nothing, with `NOT_FOUND`, `CONFIGURATION` (provider
   * not configured), `SESSION_BUSY`, `SESSION_STATE` or `VALIDATION` when the send is refused.
   */
  async send(
    id: string,
    input: PlaygroundSendInput | undefined,
    options: PlaygroundSendOptions = {},
  ): Promise<SessionRun> {
    await this.#ready()
    if (this.#closing !== undefined) throw new ConfigurationError('The playground is shutting down.')
    const session = await this.#find(id)
    if (session === undefined) throw new NotFoundError(`There is no session ${id}.`)
    const data = dataOf(session)
    if (data.parentSessionId !== undefined) {
      throw new ValidationError('This is a sub-agent’s child session: send to its parent session instead.')
    }
    const route = this.#routes.get(providerOf(data))
    if (route === undefined) {
      throw new ConfigurationError(
        `The provider "${providerOf(data)}" of this session is not configured; set its API key and restart the playground.`,
      )
    }
    const sendOptions = this.#sendOptions(route, data, options, input === undefined)
    if (this.#runs.has(id)) throw new SessionBusyError(id)
    const run = new SessionRun(id)
    this.#runs.set(id, run)
    const secrets = this.#options.secrets ?? []
    const unsubscribe = session.subscribe((event) => run.push(event.type, toWireEvent(event, secrets)))
    let first!: () => void
    const started = new Promise<void>((resolve) => {
      first = resolve
    })
    const stopWaiting = session.subscribe(() => first())
    let sending: Promise<unknown>
    try {
      sending = input === undefined ? session.retry(sendOptions) : session.send(input as never, sendOptions)
    } catch (error) {
      sending = Promise.reject(error)
    }
    const settled = sending.then(
      () => undefined,
      (error: unknown) => ({ error }),
    )
    const outcome = await Promise.race([started.then(() => 'started' as const), settled])
    stopWaiting()
    if (outcome !== 'started' && run.size === 0) {
      // Refused before it began: nothing was written, the caller gets a JSON error.
      unsubscribe()
      this.#runs.delete(id)
      run.end()
      if (outcome !== undefined) throw outcome.error
      return run
    }
    void settled.then(async (result) => {
      try {
        await this.#afterSend(session, run, result?.error)
      } catch (error) {
        this.#options.logger?.warn('playground: could not record the outcome of a send', {
          sessionId: id,
          error: serializeError(error, secrets),
        })
      } finally {
        unsubscribe()
        this.#runs.delete(id)
        run.end()
      }
    })
    return run
  }

  /**
   * The kernel's options of a send: the per-send options, and the profile of the session's
   * provider. The top-level provider's sends may pick one of its own profiles (none picked: the
   * one that answered last); another provider's always run with its own profile, and get the
   * session's system prompt (the kernel gives it to the top-level profile only).
   */
  #sendOptions(
    route: ProviderRoute,
    data: SessionData,
    options: PlaygroundSendOptions,
    isRetry: boolean,
  ): SendOptions {
    const { agent, ...rest } = options
    const sendOptions = { ...rest } as SendOptions
    if (route.profile === DEFAULT_PROFILE) {
      if (agent !== undefined) {
        if (!route.choices.has(agent)) {
          const known = route.choices.size === 0 ? 'it has none' : `known: ${[...route.choices].join(', ')}`
          throw new ValidationError(`Unknown agent profile '${agent}' for this provider (${known}).`)
        }
        sendOptions.agent = agent
      }
    } else {
      if (agent !== undefined && agent !== route.profile) {
        throw new ValidationError(`The provider "${route.provider.id}" has no agent profiles to pick from.`)
      }
      sendOptions.agent = route.profile
      if (data.systemPrompt !== undefined && data.systemPrompt !== '')
        sendOptions.systemPrompt = data.systemPrompt
    }
    const retryOptions = route.provider.retryProviderOptions
    if (isRetry && retryOptions !== undefined) sendOptions.providerOptions = retryOptions
    return sendOptions
  }

  /**
   * Forks a session with `session.fork()` (DESIGN §10.2): a new session with copies of the
   * messages through `throughSeq` (default: all of them). The fork keeps the source's provider; a
   * stored `lastError` goes with it only when the whole conversation is copied (a fork that ends
   * earlier did not fail). Returns the new session's view, or `undefined` when there is no such
   * session.
   */
  async fork(id: string, throughSeq: number | undefined): Promise<SessionView | undefined> {
    const session = await this.#operable(id)
    if (session === undefined) return undefined
    if (dataOf(session).parentSessionId !== undefined) {
      throw new ValidationError('This is a sub-agent’s child session: fork its parent session instead.')
    }
    const options: ForkOptions = {}
    if (throughSeq !== undefined) options.throughSeq = throughSeq
    const metadata = session.metadata ?? {}
    if (LAST_ERROR_KEY in metadata && throughSeq !== undefined) {
      const [last] = await session.getMessages({ limit: 1 })
      if (last !== undefined && throughSeq < last.seq) {
        const { [LAST_ERROR_KEY]: _dropped, ...rest } = metadata
        options.metadata = rest
      }
    }
    return this.#view(await session.fork(options))
  }

  /**
   * Renames a session or changes its metadata with `session.update()`; the updated view, or
   * `undefined` when there is no such session. The playground's own metadata keys stay: the
   * provider routes sends, `lastError` explains a failure.
   */
  async updateSession(
    id: string,
    changes: { summary?: string; metadata?: Record<string, unknown> },
  ): Promise<SessionView | undefined> {
    const session = await this.#operable(id)
    if (session === undefined) return undefined
    const update: SessionUpdate = {}
    if (changes.summary !== undefined) update.summary = changes.summary
    if (changes.metadata !== undefined) {
      const own = session.metadata ?? {}
      update.metadata = {
        ...changes.metadata,
        provider: own.provider,
        ...(own[LAST_ERROR_KEY] === undefined ? {} : { [LAST_ERROR_KEY]: own[LAST_ERROR_KEY] }),
      }
    }
    await session.update(update)
    return this.#view(session)
  }

  /** A session for an operation other than a send, or `undefined` when there is none with this id. */
  async #operable(id: string): Promise<Session | undefined> {
    const session = await this.#find(id)
    if (session === undefined) return undefined
    if (!this.#routes.has(providerOf(dataOf(session)))) {
      throw new ConfigurationError(
        `The provider "${providerOf(dataOf(session))}" of this session is not configured.`,
      )
    }
    if (this.#runs.has(id)) throw new SessionBusyError(id)
    return session
  }

  /** The running send of a session, if any. */
  runOf(id: string): SessionRun | undefined {
    const run = this.#runs.get(id)
    return run?.isEnded ? undefined : run
  }

  /** Whether a session exists (in the playground's scope). */
  async exists(id: string): Promise<boolean> {
    return (await this.#find(id)) !== undefined
  }

  /**
   * Aborts the running reply of a session: `aborted` when one was running, `idle` when the session
   * exists but had nothing to abort, `missing` when there is no such session.
   */
  async abort(id: string): Promise<'aborted' | 'idle' | 'missing'> {
    const session = await this.#find(id)
    if (session === undefined) return 'missing'
    const running = this.#runs.has(id) || session.state === 'active'
    session.abort()
    return running ? 'aborted' : 'idle'
  }

  /**
   * Aborts running replies (keeping their partial text; each is recorded as cut by a server
   * stop), waits for them to end, then closes the agent, which flushes every write. Does not
   * close the persister.
   */
  close(): Promise<void> {
    // Set before anything is awaited: a run that ends from now on records a server stop.
    this.#closing ??= (async () => {
      if (this.#initializing === undefined) return
      await this.#initializing.catch(() => undefined)
      const agent = this.#agent
      if (agent === undefined) return
      await Promise.all(
        [...this.#runs.entries()].map(async ([id, run]) => {
          ;(await agent.getSession(id).catch(() => undefined))?.abort()
          await run.ended
        }),
      )
      await agent.close()
    })()
    return this.#closing
  }

  /**
   * Records how a send ended, in the session's metadata (`metadata.lastError`): the error of a
   * failed send, a stop caused by the server shutting down, or nothing (a previous error is
   * cleared). The kernel has no field for it. Written with `session.update()` once the send's
   * writes are flushed, so the live session and the store agree (a later rename or fork keeps it).
   */
  async #afterSend(session: Session, run: SendRunLike, error: unknown): Promise<void> {
    const aborted = isAdapterError(error) && error.kind === 'aborted'
    let lastError: LastError | undefined
    if (error !== undefined && !aborted) {
      const view = serializeError(error, this.#options.secrets ?? [])
      lastError = toLastError(view)
      if (!run.has('error')) run.push('error', { type: 'error', error: view })
    } else if (aborted && this.#closing !== undefined) {
      lastError = {
        code: 'SERVER_STOPPED',
        message: 'The playground server stopped while this reply was streaming; the partial reply was kept.',
        retryable: true,
      }
    }
    await session.flush().catch(() => undefined)
    if (session.state === 'deleted') return
    const metadata = { ...session.metadata }
    if (lastError === undefined) {
      if (!(LAST_ERROR_KEY in metadata)) return
      delete metadata[LAST_ERROR_KEY]
    } else {
      metadata[LAST_ERROR_KEY] = { ...lastError, at: new Date().toISOString() }
    }
    await session.update({ metadata })
  }

  async #ready(): Promise<Agent> {
    await this.initialize()
    return this.#agent!
  }

  /** The session with this id (in the playground's scope), or `undefined`. */
  async #find(id: string): Promise<Session | undefined> {
    if (typeof id !== 'string' || id === '') return undefined
    const session = await (await this.#ready()).getSession(id)
    return session === undefined || session.state === 'deleted' ? undefined : session
  }

  #view(session: Session): SessionView {
    const data = dataOf(session)
    const route = this.#routes.get(providerOf(data))
    const view = toSessionView(data, data.parentSessionId === undefined && route !== undefined)
    // Another provider's sessions all run with its one profile: naming it says nothing.
    if (route !== undefined && route.profile !== DEFAULT_PROFILE) delete view.activeAgent
    const lastError = lastErrorOf(data)
    // Shown while it explains the state: a failed send (error) or a reply cut by a server stop.
    if (
      lastError !== undefined &&
      (view.state === 'error' || view.state === 'aborted' || view.state === 'interrupted')
    ) {
      view.lastError = lastError
    }
    return view
  }
}

/**
 * The stored fields of a session (its id, state, usage, system prompt, links to a parent or a
 * fork source): sessions of `@agentx/core` are {@link BaseSession}s, whose `toSessionData()` gives
 * them as they are right now.
 */
function dataOf(session: Session): SessionData {
  if (session instanceof BaseSession) return session.toSessionData()
  throw new ConfigurationError('The playground needs the sessions of @agentx/core (BaseSession).')
}

/** The part of a {@link SessionRun} the bookkeeping needs. */
type SendRunLike = Pick<SessionRun, 'has' | 'push'>

function toLastError(view: ErrorView): LastError {
  const lastError: LastError = { code: view.code, message: view.message, retryable: view.retryable }
  if (view.kind !== undefined) lastError.kind = view.kind
  return lastError
}

/** A session event as the wire carries it: errors become {@link serializeError} views (also inside sub-agent events). */
export function toWireEvent(event: SessionEvent, secrets: readonly string[]): unknown {
  switch (event.type) {
    case 'retry':
    case 'retries-exhausted':
    case 'persist-error':
    case 'error':
      return { ...event, error: serializeError(event.error, secrets) }
    case 'subagent':
      return { ...event, event: toWireEvent(event.event, secrets) }
    default:
      return event
  }
}
