import type { AdapterMessage, AgentAdapter } from '../contracts/agent-adapter.js'
import type { AgentPersister, SessionData } from '../contracts/agent-persister.js'
import type { SessionInit } from '../contracts/session-factory.js'
import type { AnyMessage, ContentBlock, TokenUsage } from '../contracts/messages.js'
import type { SessionState } from '../contracts/session-state.js'
import { SessionBusyError } from '../errors/session-busy-error.js'
import { SessionStateError } from '../errors/session-state-error.js'
import type { PendingToolCall, ToolAnswer, ToolApproval } from '../tools/tool.js'
import { EventStream } from '../util/event-stream.js'
import { isAgentTool } from '../tools/agent-tool.js'
import { repliedInstead } from './approvals.js'
import { profileFor, toolsFor } from './send-profile.js'
import { closeWaitingChildren } from './subagents.js'
import { runSend, type SendHooks, waitingBatch } from './send-loop.js'
import type { SendOptions, Session } from './session.js'
import { isAbort, type SendRun, SessionCore } from './session-core.js'
import type { SendResult, SessionEvent, SessionListener } from './session-events.js'
import type { MessagesQuery } from './session-history.js'
import type { SessionRuntimeOptions } from './session-runtime-options.js'
import { canSend } from './session-state.js'
import { validateSendInput, validateSendOptions } from './validate-input.js'
import {
  type ForkOptions,
  planFork,
  readStoredSession,
  validateForkOptions,
  writeFork,
} from './session-fork.js'
import {
  applySessionUpdate,
  changesSendSettings,
  type SessionUpdate,
  validateSessionUpdate,
} from './session-update.js'
import { mergeTools } from './tool-step.js'
import { type CompactOptions, compactNow, validateCompactOptions } from './compaction.js'
import type { SessionProfile } from './session-profile.js'
import { ValidationError } from '../errors/validation-error.js'

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
  get model(): string {
    return this.#core.model
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
      run = this.#begin(content, options, undefined)
    } catch (error) {
      return Promise.reject(error)
    }
    return this.#start(run) as Promise<SendResult<Output>>
  }

  stream(
    content: string | Array<ContentBlock | ToolApproval | ToolAnswer>,
    options?: SendOptions,
  ): AsyncIterable<SessionEvent> {
    const sink = new EventStream<SessionEvent>(() => this.abort())
    let run: SendRun
    try {
      run = this.#begin(content, options, sink)
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
      if (core.run) throw new SessionBusyError(this.id)
      const state = core.data.state
      if (state !== 'error' && state !== 'aborted' && state !== 'interrupted') {
        throw new SessionStateError(
          `retry() continues a send that failed, was aborted or interrupted; session ${this.id} is '${state}'.`,
          { state },
        )
      }
      run = this.#newRun({ kind: 'retry' }, validateSendOptions(options), undefined)
    } catch (error) {
      return Promise.reject(error)
    }
    return this.#start(run)
  }

  async complete(): Promise<void> {
    const core = this.#core
    core.assertUsable()
    if (core.run) throw new SessionBusyError(this.id)
    core.setState('completed')
    core.data.lastActivity = new Date().toISOString()
    await core.write(core.saveSession())
  }

  async update(update: SessionUpdate): Promise<void> {
    const core = this.#core
    core.assertUsable()
    const checked = validateSessionUpdate(update)
    if (core.run && changesSendSettings(checked)) throw new SessionBusyError(this.id)
    // Several processes: start from what the store holds, not from this object's older copy — unless
    // a send runs (or starts meanwhile): it reads the store itself and owns the record.
    if (core.lease && this.persister && this.#isIdle()) {
      const stored = await this.persister.getSession(this.id)
      if (stored === null) throw deletedElsewhere(this.id)
      if (this.#isIdle()) {
        core.data = { ...stored }
        core.usage = { ...stored.tokenUsage }
      } else if (changesSendSettings(checked)) throw new SessionBusyError(this.id)
    }
    if (!applySessionUpdate(core.data, checked)) return
    await core.saveSession()
  }

  async fork(options?: ForkOptions): Promise<Session> {
    const core = this.#core
    core.assertUsable()
    const checked = validateForkOptions(options)
    if (core.run) throw new SessionBusyError(this.id)
    let source: { data: SessionData; history: readonly AnyMessage[] }
    if (core.lease && this.persister) {
      // Several processes: copy what the store holds (this object's own writes first), read into a
      // snapshot of the fork's own, so a send starting meanwhile is not disturbed.
      await core.queue?.flush()
      const stored = await readStoredSession(this.persister, this.id)
      if (stored === null) throw deletedElsewhere(this.id)
      source = stored
    } else {
      // The whole conversation: a compacted session holds only what follows its latest summary.
      source = { data: this.toSessionData(), history: await core.history.page() }
    }
    const plan = await planFork(source.data, source.history, checked, mergeTools(this.options.tools))
    if (this.persister) await writeFork(this.persister, plan)
    if (core.openSession) return core.openSession(plan.data, plan.messages)
    const Session = this.constructor as new (init: SessionInit) => Session
    return new Session({
      data: plan.data,
      adapter: this.adapter,
      options: this.options,
      messages: plan.messages,
      isClosed: core.isClosed,
      ...(this.persister === undefined ? {} : { persister: this.persister }),
    })
  }

  async getPending(): Promise<PendingToolCall[]> {
    const core = this.#core
    core.assertUsable()
    if (core.run !== undefined) return []
    // Several processes on one store: another one may have answered (or asked) since this object looked.
    if (core.lease !== undefined) await core.refresh()
    // Derived from the stored messages, not the state: a process that died after storing the
    // calls but before saving `waiting_input` left an `interrupted` session that still waits.
    if (core.data.state === 'active') return []
    await core.history.load()
    const tools = toolsFor(core, profileFor(core, core.data.activeAgent), {})
    const batch = await waitingBatch(core, tools, new AbortController().signal)
    return batch?.pending ?? []
  }

  compact(options?: CompactOptions): Promise<AnyMessage> {
    const core = this.#core
    let run: SendRun
    let keep: number | undefined
    let profile: SessionProfile
    try {
      core.assertUsable()
      if (core.run) throw new SessionBusyError(this.id)
      const checked = validateCompactOptions(options, (message) => new ValidationError(message))
      keep = checked.keepRecentMessages
      // The profile the next send continues with: its adapter, model and compaction settings.
      profile = profileFor(core, core.data.activeAgent)
      run = this.#newRun({ kind: 'compact' }, checked.signal ? { signal: checked.signal } : {}, undefined)
    } catch (error) {
      return Promise.reject(error)
    }
    return this.#start(run, () => compactNow(core, run, profile, keep))
  }

  async getMessages(query?: MessagesQuery): Promise<AnyMessage[]> {
    this.#core.assertUsable()
    return this.#core.history.page(query)
  }

  getTokenUsage(): TokenUsage {
    return { ...this.#core.usage }
  }

  subscribe(listener: SessionListener): () => void {
    const listeners = this.#core.listeners
    listeners.add(listener)
    return () => {
      listeners.delete(listener)
    }
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
  async closePending(): Promise<void> {
    const core = this.#core
    if (core.run !== undefined || core.data.state !== 'waiting_input') return
    await core.history.load()
    const tools = toolsFor(core, profileFor(core, core.data.activeAgent), {})
    const batch = await waitingBatch(core, tools, new AbortController().signal)
    if (batch !== undefined) {
      await closeWaitingChildren(core.options.children, core.id, batch.calls, (call) =>
        isAgentTool(tools.get(call.name)),
      )
      const message = core.history.append(core.newMessage('tool', repliedInstead(batch)))
      void core.queue?.saveMessage(message)
      core.emit({ type: 'message', message })
    }
    core.setState('completed')
    core.data.lastActivity = new Date().toISOString()
    await core.write(core.saveSession())
  }

  /**
   * Called by the agent when it closes: makes every accepted write durable (rejects if one is
   * not), then drops the messages held in memory. Not for application code.
   */
  async release(): Promise<void> {
    try {
      await this.#core.queue?.flush()
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
    if (this.persister === undefined || !this.#isIdle()) return false
    this.#core.history.release()
    return true
  }

  /** No send runs and no write is in flight. */
  #isIdle(): boolean {
    const core = this.#core
    return core.run === undefined && (core.queue === undefined || core.queue.idle)
  }

  async delete(): Promise<void> {
    const core = this.#core
    core.assertUsable()
    if (core.running) {
      this.abort()
      await this.whenSettled()
    }
    await core.queue?.discard()
    await this.persister?.deleteSession(this.id)
    core.setState('deleted')
    core.history.clear()
    core.listeners.clear()
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

  /**
   * The synchronous part of send/stream: closed, deleted and busy checks, then validation, so a
   * same-tick second call or a bad input writes nothing.
   */
  #begin(content: unknown, options: unknown, sink: EventStream<SessionEvent> | undefined): SendRun {
    const core = this.#core
    core.assertUsable()
    if (core.run) throw new SessionBusyError(this.id)
    const input = validateSendInput(content)
    const checkedOptions = validateSendOptions(options)
    if (checkedOptions.agent !== undefined) profileFor(core, checkedOptions.agent)
    if (!canSend(core.data.state) && core.data.state !== 'active') {
      throw new SessionStateError(`Session ${this.id} cannot send in state '${core.data.state}'.`, {
        state: core.data.state,
      })
    }
    return this.#newRun(input, checkedOptions, sink)
  }

  #newRun(
    input: SendRun['input'],
    options: SendOptions,
    sink: EventStream<SessionEvent> | undefined,
  ): SendRun {
    const core = this.#core
    const run: SendRun = {
      input,
      options,
      controller: new AbortController(),
      sink,
      emit:
        sink === undefined
          ? (event) => core.emit(event)
          : (event) => {
              core.emit(event)
              sink.push(event)
            },
      produced: [],
    }
    core.run = run
    return run
  }

  #start(run: SendRun): Promise<SendResult>
  #start<T>(run: SendRun, body: () => Promise<T>): Promise<T>
  #start(run: SendRun, body?: () => Promise<unknown>): Promise<unknown> {
    const core = this.#core
    const external = run.options.signal
    const onExternalAbort = (): void => this.abort()
    if (external?.aborted) this.abort()
    else external?.addEventListener('abort', onExternalAbort, { once: true })
    const running = (body ?? (() => runSend(core, run, this.#hooks)))().finally(async () => {
      external?.removeEventListener('abort', onExternalAbort)
      await core.endLease()
      core.run = undefined
      core.running = undefined
    })
    core.running = running
    return running
  }
}

function deletedElsewhere(id: string): SessionStateError {
  return new SessionStateError(`Session ${id} was deleted by another process.`, { state: 'deleted' })
}
