import {
  type Agent,
  type AgentPersister,
  type AnyMessage,
  ConfigurationError,
  createAgent,
  type Logger,
  NotFoundError,
  type RetryOptions,
  type Session,
  type SessionData,
  type SessionEvent,
  ValidationError,
} from '@agentx/core'
import type { PlaygroundProvider } from './playground-provider.js'
import { providerOf, type SessionView, toSessionView } from './session-view.js'

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

/** A session with its messages, as `GET /api/sessions/:id` answers it. */
export interface SessionDetail {
  session: SessionView
  messages: AnyMessage[]
}

const MESSAGE_PAGE = 500
const MAX_MODEL_LENGTH = 200
const MAX_SYSTEM_PROMPT_LENGTH = 20_000

/**
 * Routes the playground's sessions to their providers: one {@link Agent} per available provider,
 * all over one shared persister. A session remembers its provider in `metadata.provider`, so the
 * list shows the sessions of every provider together while each send goes to the agent (and
 * adapter) that owns it. Sessions of a provider that is not configured any more stay readable and
 * deletable.
 */
export class PlaygroundHub {
  readonly #providers: Map<string, PlaygroundProvider>
  readonly #agents = new Map<string, Agent>()
  readonly #persister: AgentPersister
  readonly #options: PlaygroundHubOptions
  /** Sessions this process has touched, by id: their live state wins over storage. */
  readonly #live = new Map<string, Session>()
  #initializing: Promise<void> | undefined

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
        const agent = createAgent(
          {
            appName: PLAYGROUND_APP_NAME,
            ...(provider.models[0] === undefined ? {} : { model: provider.models[0] }),
            ...(provider.tools === undefined ? {} : { tools: provider.tools }),
            ...(retry === undefined ? {} : { retry }),
            durability: 'sync',
          },
          {
            adapter: provider.adapter,
            persister: this.#persister,
            ...(this.#options.logger === undefined ? {} : { logger: this.#options.logger }),
          },
        )
        await agent.initialize()
        this.#agents.set(provider.id, agent)
      }
    })()
    return this.#initializing
  }

  /** The sessions of every provider, newest activity first. */
  async listSessions(limit = 100, offset = 0): Promise<SessionView[]> {
    await this.initialize()
    const rows = await this.#persister.listSessions({ appName: PLAYGROUND_APP_NAME, limit, offset })
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

  /** A session with its messages, or `undefined` when there is none with this id. */
  async getSession(id: string): Promise<SessionDetail | undefined> {
    await this.initialize()
    const data = await this.#stored(id)
    if (data === undefined) return undefined
    const session = await this.#session(data)
    const messages = session === undefined ? await this.#readMessages(id) : await session.getMessages()
    return { session: this.#view(data), messages }
  }

  /** Deletes a session and its messages (aborting a running reply first). Returns whether it existed. */
  async deleteSession(id: string): Promise<boolean> {
    await this.initialize()
    const data = await this.#stored(id)
    if (data === undefined) return false
    const agent = this.#agents.get(providerOf(data))
    if (agent === undefined) await this.#persister.deleteSession(id)
    else await agent.deleteSession(id)
    this.#live.delete(id)
    return true
  }

  /**
   * Sends a message to a session and returns its live events (see `Session.stream`). Rejects with
   * `NOT_FOUND` for an unknown session and `CONFIGURATION` when its provider is not configured.
   */
  async stream(id: string, content: string): Promise<AsyncIterable<SessionEvent>> {
    await this.initialize()
    const data = await this.#stored(id)
    if (data === undefined) throw new NotFoundError(`There is no session ${id}.`)
    const session = await this.#session(data)
    if (session === undefined) {
      throw new ConfigurationError(
        `The provider "${providerOf(data)}" of this session is not configured; set its API key and restart the playground.`,
      )
    }
    return session.stream(content)
  }

  /**
   * Aborts the running reply of a session: `aborted` when one was running, `idle` when the session
   * exists but had nothing to abort, `missing` when there is no such session.
   */
  async abort(id: string): Promise<'aborted' | 'idle' | 'missing'> {
    await this.initialize()
    const live = this.#live.get(id)
    if (live !== undefined && live.state !== 'deleted') {
      const running = live.state === 'active'
      live.abort()
      return running ? 'aborted' : 'idle'
    }
    return (await this.#stored(id)) === undefined ? 'missing' : 'idle'
  }

  /** Aborts running replies (keeping their partial text) and flushes every write. Does not close the persister. */
  async close(): Promise<void> {
    if (this.#initializing === undefined) return
    await this.#initializing.catch(() => undefined)
    const results = await Promise.allSettled([...this.#agents.values()].map((agent) => agent.close()))
    const failed = results.find((result) => result.status === 'rejected')
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason
  }

  async #stored(id: string): Promise<SessionData | undefined> {
    if (typeof id !== 'string' || id === '') return undefined
    const data = await this.#persister.getSession(id)
    return data === null || data.appName !== PLAYGROUND_APP_NAME ? undefined : data
  }

  /** The live session object of a stored session, made by its provider's agent (undefined when not configured). */
  async #session(data: SessionData): Promise<Session | undefined> {
    const live = this.#live.get(data.id)
    if (live !== undefined && live.state !== 'deleted') return live
    const agent = this.#agents.get(providerOf(data))
    if (agent === undefined) return undefined
    const session = await agent.getSession(data.id)
    if (session !== undefined) this.#live.set(data.id, session)
    return session
  }

  async #readMessages(id: string): Promise<AnyMessage[]> {
    const messages: AnyMessage[] = []
    for (let afterSeq: number | undefined; ; ) {
      const page = await this.#persister.getMessages(id, {
        limit: MESSAGE_PAGE,
        ...(afterSeq === undefined ? {} : { afterSeq }),
      })
      messages.push(...page)
      const last = page[page.length - 1]
      if (last === undefined || page.length < MESSAGE_PAGE) return messages
      afterSeq = last.seq
    }
  }

  #view(data: SessionData): SessionView {
    const live = this.#live.get(data.id)
    return toSessionView(
      data,
      live?.state === 'deleted' ? undefined : live,
      this.#agents.has(providerOf(data)),
    )
  }
}
