import type { AdapterMessage, AgentAdapter } from '../contracts/agent-adapter.js'
import type { AgentPersister, SessionData } from '../contracts/agent-persister.js'
import type { AnyMessage, ContentBlock, TokenUsage } from '../contracts/messages.js'
import type { SessionInit } from '../contracts/session-factory.js'
import type { SessionState } from '../contracts/session-state.js'
import { SessionBusyError } from '../errors/session-busy-error.js'
import { ValidationError } from '../errors/validation-error.js'
import type { PendingToolCall, ToolAnswer, ToolApproval } from '../tools/tool.js'
import { EventStream } from '../util/event-stream.js'
import { compactNow } from './compaction.js'
import { type CompactOptions, validateCompactOptions } from './compaction-options.js'
import { runSend, type SendHooks } from './send-loop.js'
import { beginRun, newRun, startRun } from './send-run.js'
import { assertRetryable, retryOptions } from './send-opening.js'
import { defaultModelOf, profileFor } from './send-profile.js'
import type { SendOptions, Session } from './session.js'
import { isAbort, type SendRun, SessionCore } from './session-core.js'
import type { SendResult, SessionEvent, SessionListener } from './session-events.js'
import type { ForkOptions } from './session-fork.js'
import type { MessagesQuery } from './session-history.js'
import {
  closePending,
  completeSession,
  deleteSession,
  forgetSession,
  forkSession,
  isIdle,
  pendingOf,
  updateSession,
} from './session-operations.js'
import type { SessionProfile } from './session-profile.js'
import type { SessionRuntimeOptions } from './session-runtime-options.js'
import { catchUpMessages, reloadRecord, takeIn } from './session-sync.js'
import type { SessionUpdate } from './session-update.js'
import { assertNotWaitingChild } from './subagents.js'
import { validateSendOptions } from './validate-input.js'

/**
 * The kernel's session: the public methods of {@link Session}. The send flow itself is a loop of
 * steps in `send-loop.ts` (model request, approvals, tool step, handoffs) over the session's state
 * and write path in `session-core.ts`; see `docs/architecture.md`.
 *
 * Made by a {@link SessionFactory}. A provider package may subclass it and override the protected
 * hooks {@link BaseSession.transformMessage} (adjust each agent message before it is persisted) and
 * {@link BaseSession.extractSessionId} (find the provider session id in an adapter message).
 */
export class BaseSession implements Session {
  readonly id: string
  protected readonly adapter: AgentAdapter
  protected readonly persister: AgentPersister | undefined
  protected readonly options: SessionRuntimeOptions
  readonly #core: SessionCore
  readonly #hooks: SendHooks

  constructor(init: SessionInit) {
    this.id = init.data.id
    this.adapter = init.adapter
    this.options = init.options
    this.persister = init.persister
    this.#core = new SessionCore(init)
    this.#hooks = {
      transformMessage: (message) => this.transformMessage(message),
      extractSessionId: (event) => this.extractSessionId(event),
    }
  }

  get state(): SessionState {
    return this.#core.data.state
  }
  /** The session's model, else the agent's, else the adapter's default model (`''` when none is known). */
  get model(): string {
    const core = this.#core
    return core.model || defaultModelOf(core.adapter)
  }
  get summary(): string {
    return this.#core.data.summary
  }
  get createdAt(): string {
    return this.#core.data.createdAt
  }
  get lastActivity(): string {
    return this.#core.data.lastActivity
  }
  get providerSessionId(): string | undefined {
    return this.#core.data.providerSessionId
  }
  get userId(): string | undefined {
    return this.#core.data.userId
  }
  get appName(): string | undefined {
    return this.#core.data.appName
  }
  get metadata(): Record<string, unknown> | undefined {
    return this.#core.data.metadata
  }
  /** The system prompt of this session. */
  get systemPrompt(): string | undefined {
    return this.#core.systemPrompt
  }

  /** A copy of the session's metadata as it is (or will be) stored. */
  toSessionData(): SessionData {
    return this.#core.toSessionData()
  }

  send<Output = unknown>(
    content: string | Array<ContentBlock | ToolApproval | ToolAnswer>,
    options?: SendOptions,
  ): Promise<SendResult<Output>> {
    let run: SendRun
    try {
      run = beginRun(this.#core, content, options, undefined)
    } catch (error) {
      return Promise.reject(error)
    }
    return this.#start(run) as Promise<SendResult<Output>>
  }

  stream(
    content: string | Array<ContentBlock | ToolApproval | ToolAnswer>,
    options?: SendOptions,
  ): AsyncIterable<SessionEvent> {
    let run: SendRun | undefined
    // Leaving the loop early aborts the send, unless it already failed (its last events are out).
    const sink = new EventStream<SessionEvent>(() => {
      if (run?.failing !== true) this.abort()
    })
    try {
      run = beginRun(this.#core, content, options, sink)
    } catch (error) {
      sink.end({ error })
      return sink
    }
    // A failure is thrown from the iterator after its `error` event; an abort ends it quietly.
    this.#start(run).then(
      () => sink.end(),
      (error: unknown) => sink.end(isAbort(error) ? undefined : { error }),
    )
    return sink
  }

  abort(): void {
    this.#core.abort()
  }

  retry(options?: SendOptions): Promise<SendResult> {
    const core = this.#core
    let run: SendRun
    try {
      core.assertUsable()
      // While a send runs the session is `active`: a state error, as for any other state (DESIGN §10.2).
      // `active` with no send here and leases in the store may be a send of a process that died
      // (its lease not yet expired when this agent started): the claim decides (see runSend).
      if (!(core.data.state === 'active' && core.lease !== undefined && !core.busy)) assertRetryable(core)
      if (core.busy) throw new SessionBusyError(this.id)
      run = newRun(
        core,
        { kind: 'retry' },
        retryOptions(core.failedOptions, validateSendOptions(options)),
        undefined,
      )
    } catch (error) {
      return Promise.reject(error)
    }
    return this.#start(run)
  }

  async complete(): Promise<void> {
    const core = this.#core
    core.assertUsable()
    if (core.busy) throw new SessionBusyError(this.id)
    assertNotWaitingChild(core.data, 'complete')
    return completeSession(core)
  }

  update(update: SessionUpdate): Promise<void> {
    return updateSession(this.#core, update)
  }

  fork(options?: ForkOptions): Promise<Session> {
    return forkSession(this.#core, options, (data, messages) => {
      const Session = this.constructor as new (init: SessionInit) => Session
      return new Session({
        data,
        adapter: this.adapter,
        options: this.options,
        messages,
        isClosed: this.#core.isClosed,
        ...(this.persister === undefined ? {} : { persister: this.persister }),
      })
    })
  }

  getPending(): Promise<PendingToolCall[]> {
    return pendingOf(this.#core)
  }

  compact(options?: CompactOptions): Promise<AnyMessage> {
    const core = this.#core
    let run: SendRun
    let keep: number | undefined
    let profile: SessionProfile
    try {
      core.assertUsable()
      if (core.busy) throw new SessionBusyError(this.id)
      const checked = validateCompactOptions(options, (message) => new ValidationError(message))
      keep = checked.keepRecentMessages
      // The profile the next send continues with: its adapter, model and compaction settings.
      profile = profileFor(core, core.data.activeAgent, true)
      run = newRun(core, { kind: 'compact' }, checked.signal ? { signal: checked.signal } : {}, undefined)
    } catch (error) {
      return Promise.reject(error)
    }
    return this.#start(run, () => compactNow(core, run, profile, keep))
  }

  async getMessages(query?: MessagesQuery): Promise<AnyMessage[]> {
    this.#core.assertUsable()
    await catchUpMessages(this.#core)
    return this.#core.history.page(query)
  }

  getTokenUsage(): TokenUsage {
    return { ...this.#core.usage }
  }

  subscribe(listener: SessionListener): () => void {
    return this.#core.listeners.subscribe(listener)
  }

  /**
   * Adds a watcher that hears only this session's `state` events, before its listeners; returns
   * its removal. Internal: the agent keeps its session cache with it, so a streamed reply costs
   * no extra call per event.
   */
  watchState(watcher: (event: Extract<SessionEvent, { type: 'state' }>) => void): () => void {
    return this.#core.listeners.watchState(watcher)
  }

  /** Resolves when no send is running (used by `agent.close()` after aborting). Never rejects. */
  async whenSettled(): Promise<void> {
    while (this.#core.running) await this.#core.running.catch(() => undefined)
  }

  async flush(): Promise<void> {
    this.#core.assertUsable()
    await this.#core.queue?.flush()
  }

  /**
   * Gives up the calls this session waits on (its parent's user wrote instead of answering): they
   * are closed as not run, waiting children give up theirs, and the session is `completed`. Called
   * by the kernel, not by applications.
   */
  closePending(): Promise<void> {
    return closePending(this.#core)
  }

  /**
   * Called by the agent when it closes: makes every accepted write durable (rejects if one is
   * not), then drops the messages held in memory. Not for application code.
   */
  async release(): Promise<void> {
    try {
      await this.#core.queue?.flush()
      await this.#core.releaseLeaseIfIdle()
    } finally {
      this.#core.history.release()
    }
  }

  /**
   * Called by the agent's session cache: drops the messages held in memory (they reload from the
   * store on next use) unless a send is running or a write is still in flight, and says whether it
   * did. Not for application code.
   */
  releaseIfIdle(): boolean {
    if (this.persister === undefined || !isIdle(this.#core)) return false
    this.#core.history.release()
    return true
  }

  async delete(): Promise<void> {
    const core = this.#core
    core.assertUsable()
    if (core.running) {
      this.abort()
      await this.whenSettled()
    }
    await deleteSession(core)
  }

  /**
   * Takes in the session's record as just read from the store (another process may have changed
   * it). Internal: called by the agent when it lists or loads sessions.
   */
  takeIn(stored: SessionData): void {
    takeIn(this.#core, stored)
  }

  /** Reads the session's record from the store and takes it in. Internal: called by the agent. */
  reloadRecord(): Promise<void> {
    return reloadRecord(this.#core)
  }

  /**
   * The store no longer holds this session (its parent's delete cascaded to it): it becomes
   * `deleted` at once — a send running is aborted first — and nothing it still had queued is
   * written, so it can never come back as an orphan row. Internal: called by the agent.
   */
  async forget(): Promise<void> {
    await forgetSession(this.#core, async () => {
      this.abort()
      await this.whenSettled()
    })
  }

  /**
   * Adjusts an agent message before it is persisted and shown. Default: returns it unchanged.
   * Override in a provider-specific subclass (e.g. to add `metadata`).
   */
  protected transformMessage(message: AnyMessage): AnyMessage {
    return message
  }

  /**
   * Finds the provider session id in an adapter message. Default: the id of a `session` message.
   */
  protected extractSessionId(message: AdapterMessage): string | undefined {
    return message.type === 'session' ? message.sessionId : undefined
  }

  #start(run: SendRun): Promise<SendResult>
  #start<T>(run: SendRun, body: () => Promise<T>): Promise<T>
  #start(run: SendRun, body?: () => Promise<unknown>): Promise<unknown> {
    const core = this.#core
    return startRun(core, run, body ?? (() => runSend(core, run, this.#hooks)), () => this.abort())
  }
}
