import {
  type Agent,
  type AgentConfig,
  type AgentDeps,
  type AgentPersister,
  type AnyMessage,
  ConfigurationError,
  type ContentBlock,
  type ForkOptions,
  createAgent,
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
  /** The providers of the picker; one agent is made for each one that has an adapter. */
  providers: readonly PlaygroundProvider[]
  /** The one store every agent shares. The hub does not close it. */
  persister: AgentPersister
  /** Overrides every provider's retry policy (tests use short delays). Default is each provider's own. */
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

/**
 * Routes the playground's sessions to their providers: one {@link Agent} per available provider,
 * all over one shared persister. A session remembers its provider in `metadata.provider`, so the
 * list shows the sessions of every provider together while each send goes to the agent (and
 * adapter) that owns it. Sessions of a provider that is not configured any more stay readable and
 * deletable.
 *
 * Sends run on the server, not in the request that started them: each is a {@link SessionRun}
 * that keeps its events, so a client that disconnects (a reload, a closed tab) only stops
 * watching, and a reopened page or another tab reattaches to it.
 */
export class PlaygroundHub {
  readonly #providers: Map<string, PlaygroundProvider>
  readonly #agents = new Map<string, Agent>()
  readonly #persister: AgentPersister
  readonly #options: PlaygroundHubOptions
  /** Sessions this process has touched, by id: their live state wins over storage. */
  readonly #live = new Map<string, Session>()
  /** The send running for each session, if any. */
  readonly #runs = new Map<string, SessionRun>()
  #initializing: Promise<void> | undefined
  #closing: Promise<void> | undefined
  /** Resolves when every agent has closed (aborted its sends and flushed its writes); set by `close()`. */
  #agentsClosed: Promise<void> | undefined

  constructor(options: PlaygroundHubOptions) {
    this.#options = options
    this.#persister = options.persister
    this.#providers = new Map(options.providers.map((provider) => [provider.id, provider]))
  }

  /** Creates and initializes one agent per available provider (sequentially: each repairs crashed sessions). */
  initialize(): Promise<void> {
    this.#initializing ??= (async () => {
      for (const provider of this.#providers.values()) {
        if (provider.adapter === undefined) continue
        const retry = this.#options.retry ?? provider.retry
        const config: AgentConfig = {
          appName: PLAYGROUND_APP_NAME,
          ...(provider.models[0] === undefined ? {} : { model: provider.models[0] }),
          ...(provider.tools === undefined ? {} : { tools: provider.tools }),
          ...(provider.agents === undefined ? {} : { agents: provider.agents }),
          ...(retry === undefined ? {} : { retry }),
          durability: 'sync',
        }
        const agent = createProviderAgent(config, provider.compaction, {
          adapter: provider.adapter,
          persister: this.#persister,
          ...(this.#options.logger === undefined ? {} : { logger: this.#options.logger }),
        })
        await agent.initialize()
        this.#agents.set(provider.id, agent)
      }
    })()
    return this.#initializing
  }

  /** The playground's top-level sessions (children of agent tools are left out), newest activity first. */
  async listSessions(query: ListPlaygroundSessionsQuery): Promise<SessionView[]> {
    await this.initialize()
    const base = {
      appName: PLAYGROUND_APP_NAME,
      ...(query.states === undefined ? {} : { state: query.states }),
    }
    let rows: SessionData[]
    const needle = query.q?.trim().toLowerCase() ?? ''
    if (needle === '') {
      rows = await this.#persister.listSessions({ ...base, limit: query.limit, offset: query.offset })
    } else {
      // No store query searches summaries: scan pages (fine for a local playground's few thousand sessions).
      const matches: SessionData[] = []
      for (let offset = 0; matches.length < query.offset + query.limit; offset += SCAN_PAGE) {
        const page = await this.#persister.listSessions({ ...base, limit: SCAN_PAGE, offset })
        for (const data of page) {
          if (data.summary.toLowerCase().includes(needle) || data.id === query.q?.trim()) matches.push(data)
        }
        if (page.length < SCAN_PAGE) break
      }
      rows = matches.slice(query.offset, query.offset + query.limit)
    }
    const views = rows.map((data) => this.#view(data))
    // A live session may be a few milliseconds ahead of its stored row.
    return views.sort((a, b) =>
      a.lastActivity < b.lastActivity ? 1 : a.lastActivity > b.lastActivity ? -1 : 0,
    )
  }

  /** Creates a session for a provider (persisted before it is returned). */
  async createSession(options: CreatePlaygroundSessionOptions): Promise<SessionView> {
    await this.initialize()
    const provider = this.#providers.get(options.provider)
    if (provider === undefined) throw new ValidationError(`Unknown provider "${String(options.provider)}".`)
    const agent = this.#agents.get(provider.id)
    if (agent === undefined) {
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
    this.#live.set(session.id, session)
    const data = await this.#persister.getSession(session.id)
    if (data === null) throw new NotFoundError(`Session ${session.id} vanished right after it was created.`)
    return this.#view(data)
  }

  /** A session with its messages, pending calls, last error and running send, or `undefined`. */
  async getSession(id: string): Promise<SessionDetail | undefined> {
    await this.initialize()
    const data = await this.#stored(id)
    if (data === undefined) return undefined
    const session = await this.#session(data)
    // Taken before the messages are read, so a replay from it overlaps them rather than leaving a gap.
    const run = this.#runs.get(id)
    const running =
      run === undefined || run.isEnded
        ? undefined
        : { resumeAfter: run.resumeAfter, startedAt: run.startedAt }
    const messages = session === undefined ? await this.#readMessages(id) : await session.getMessages()
    const view = this.#view(data)
    const pending =
      session !== undefined && view.state === 'waiting_input' && running === undefined
        ? await session.getPending()
        : []
    const detail: SessionDetail = { session: view, messages, pending }
    if (view.lastError !== undefined) detail.lastError = view.lastError
    if (running !== undefined) detail.running = running
    return detail
  }

  /** The session and every message, for a JSON download. */
  async exportSession(id: string): Promise<{ session: SessionData; messages: AnyMessage[] } | undefined> {
    await this.initialize()
    const data = await this.#stored(id)
    if (data === undefined) return undefined
    return { session: data, messages: await this.#readMessages(id) }
  }

  /**
   * Deletes a session and its messages (aborting a running reply first, and waiting for it to end).
   * Returns whether it existed.
   */
  async deleteSession(id: string): Promise<boolean> {
    await this.initialize()
    const data = await this.#stored(id)
    if (data === undefined) return false
    const run = this.#runs.get(id)
    if (run !== undefined) {
      this.#live.get(id)?.abort()
      await run.ended
    }
    const agent = this.#agents.get(providerOf(data))
    if (agent === undefined) await this.#persister.deleteSession(id)
    else await agent.deleteSession(id)
    this.#live.delete(id)
    return true
  }

  /**
   * Starts a send (or, with `input` `undefined`, a `retry()`) that runs on the server whatever
   * happens to the request, and resolves once it produced its first event. Rejects, having written
   * nothing, with `NOT_FOUND`, `CONFIGURATION` (provider not configured), `SESSION_BUSY`,
   * `SESSION_STATE` or `VALIDATION` when the send is refused.
   */
  async send(
    id: string,
    input: PlaygroundSendInput | undefined,
    options: PlaygroundSendOptions = {},
  ): Promise<SessionRun> {
    await this.initialize()
    if (this.#closing !== undefined) throw new ConfigurationError('The playground is shutting down.')
    const data = await this.#stored(id)
    if (data === undefined) throw new NotFoundError(`There is no session ${id}.`)
    if (data.parentSessionId !== undefined) {
      throw new ValidationError('This is a sub-agent’s child session: send to its parent session instead.')
    }
    const session = await this.#session(data)
    if (session === undefined) {
      throw new ConfigurationError(
        `The provider "${providerOf(data)}" of this session is not configured; set its API key and restart the playground.`,
      )
    }
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
    const sendOptions = { ...options } as SendOptions
    const retryOptions = this.#providers.get(providerOf(data))?.retryProviderOptions
    if (input === undefined && retryOptions !== undefined) sendOptions.providerOptions = retryOptions
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
   * Forks a session with `session.fork()` (DESIGN §10.2): a new session with copies of the
   * messages through `throughSeq` (default: all of them). The fork keeps the source's provider; a
   * stored `lastError` goes with it only when the whole conversation is copied (a fork that ends
   * earlier did not fail). Returns the new session's view, or `undefined` when there is no such
   * session.
   */
  async fork(id: string, throughSeq: number | undefined): Promise<SessionView | undefined> {
    const operable = await this.#operable(id)
    if (operable === undefined) return undefined
    const { data: source, session } = operable
    if (source.parentSessionId !== undefined) {
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
    const forked = await session.fork(options)
    this.#live.set(forked.id, forked)
    const data = await this.#persister.getSession(forked.id)
    if (data === null) throw new NotFoundError(`The fork ${forked.id} vanished right after it was made.`)
    return this.#view(data)
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
    const session = (await this.#operable(id))?.session
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
    const data = await this.#persister.getSession(id)
    return data === null ? undefined : this.#view(data)
  }

  /** A session (stored and live) for an operation other than a send, or `undefined` when there is none with this id. */
  async #operable(id: string): Promise<{ data: SessionData; session: Session } | undefined> {
    await this.initialize()
    const data = await this.#stored(id)
    if (data === undefined) return undefined
    const session = await this.#session(data)
    if (session === undefined) {
      throw new ConfigurationError(`The provider "${providerOf(data)}" of this session is not configured.`)
    }
    if (this.#runs.has(id)) throw new SessionBusyError(id)
    return { data, session }
  }

  /** The running send of a session, if any. */
  runOf(id: string): SessionRun | undefined {
    const run = this.#runs.get(id)
    return run?.isEnded ? undefined : run
  }

  /** Whether a session exists (in the playground's scope). */
  async exists(id: string): Promise<boolean> {
    await this.initialize()
    return (await this.#stored(id)) !== undefined
  }

  /**
   * Aborts the running reply of a session: `aborted` when one was running, `idle` when the session
   * exists but had nothing to abort, `missing` when there is no such session.
   */
  async abort(id: string): Promise<'aborted' | 'idle' | 'missing'> {
    await this.initialize()
    const live = this.#live.get(id)
    if (live !== undefined && live.state !== 'deleted') {
      const running = this.#runs.has(id) || live.state === 'active'
      live.abort()
      return running ? 'aborted' : 'idle'
    }
    return (await this.#stored(id)) === undefined ? 'missing' : 'idle'
  }

  /**
   * Aborts running replies (keeping their partial text; they are recorded as cut by a server
   * stop), flushes every write and waits for the runs to end. Does not close the persister.
   */
  close(): Promise<void> {
    if (this.#closing !== undefined) return this.#closing
    // Set before anything is awaited: a run that ends from now on waits for the agents' flush.
    let agentsClosed!: () => void
    this.#agentsClosed = new Promise<void>((resolve) => {
      agentsClosed = resolve
    })
    this.#closing = (async () => {
      if (this.#initializing === undefined) return agentsClosed()
      await this.#initializing.catch(() => undefined)
      const results = await Promise.allSettled([...this.#agents.values()].map((agent) => agent.close()))
      agentsClosed()
      await Promise.all([...this.#runs.values()].map((run) => run.ended))
      const failed = results.find((result) => result.status === 'rejected')
      if (failed !== undefined) throw (failed as PromiseRejectedResult).reason
    })()
    return this.#closing
  }

  /**
   * Records how a send ended, in the session's metadata (`metadata.lastError`): the error of a
   * failed send, a stop caused by the server shutting down, or nothing (a previous error is
   * cleared). The kernel has no field for it. Written with `session.update()` once the send's
   * writes are flushed, so the live session and the store agree (a later rename or fork keeps it);
   * during a shutdown the agents are closed, so it goes straight to the store.
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
    const withLastError = (stored: Record<string, unknown> | undefined) => {
      const metadata = { ...stored }
      if (lastError === undefined) {
        if (!(LAST_ERROR_KEY in metadata)) return undefined
        delete metadata[LAST_ERROR_KEY]
      } else {
        metadata[LAST_ERROR_KEY] = { ...lastError, at: new Date().toISOString() }
      }
      return metadata
    }
    if (this.#closing === undefined) {
      await session.flush().catch(() => undefined)
      if (session.state === 'deleted') return
      const metadata = withLastError(session.metadata)
      if (metadata !== undefined) await session.update({ metadata })
      return
    }
    await this.#agentsClosed
    const data = await this.#persister.getSession(session.id)
    if (data === null) return
    const metadata = withLastError(data.metadata)
    if (metadata !== undefined) await this.#persister.saveSession({ ...data, metadata })
  }

  async #stored(id: string): Promise<SessionData | undefined> {
    if (typeof id !== 'string' || id === '') return undefined
    const data = await this.#persister.getSession(id)
    return data === null || data.appName !== PLAYGROUND_APP_NAME ? undefined : data
  }

  /** The provider of a stored session; a child session belongs to its parent's. */
  async #providerOf(data: SessionData): Promise<string> {
    if (data.parentSessionId === undefined) return providerOf(data)
    const parent = await this.#stored(data.parentSessionId)
    return parent === undefined ? providerOf(data) : this.#providerOf(parent)
  }

  /** The live session object of a stored session, made by its provider's agent (undefined when not configured). */
  async #session(data: SessionData): Promise<Session | undefined> {
    const live = this.#live.get(data.id)
    if (live !== undefined && live.state !== 'deleted') return live
    const agent = this.#agents.get(await this.#providerOf(data))
    if (agent === undefined) return undefined
    const session = await agent.getSession(data.id)
    if (session !== undefined) this.#live.set(data.id, session)
    return session
  }

  async #readMessages(id: string): Promise<AnyMessage[]> {
    const messages: AnyMessage[] = []
    for (let afterSeq: number | undefined; ; ) {
      const page = await this.#persister.getMessages(id, {
        limit: SCAN_PAGE,
        ...(afterSeq === undefined ? {} : { afterSeq }),
      })
      messages.push(...page)
      const last = page[page.length - 1]
      if (last === undefined || page.length < SCAN_PAGE) return messages
      afterSeq = last.seq
    }
  }

  #view(data: SessionData): SessionView {
    const live = this.#live.get(data.id)
    const view = toSessionView(
      data,
      live?.state === 'deleted' ? undefined : live,
      data.parentSessionId === undefined && this.#agents.has(providerOf(data)),
    )
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
 * Creates a provider's agent with `compaction` when the kernel knows that option (DESIGN §10.4),
 * and without it on a kernel that refuses it as an unknown config key.
 */
function createProviderAgent(
  config: AgentConfig,
  compaction: Record<string, unknown> | undefined,
  deps: AgentDeps,
): Agent {
  if (compaction === undefined) return createAgent(config, deps)
  try {
    return createAgent({ ...config, compaction } as unknown as AgentConfig, deps)
  } catch (error) {
    if (error instanceof ConfigurationError && error.message.startsWith("Unknown config key 'compaction'"))
      return createAgent(config, deps)
    throw error
  }
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
