import type { AdapterMessage, AdapterStreamOptions, AgentAdapter } from '../contracts/agent-adapter.js'
import type { AgentPersister, SessionData } from '../contracts/agent-persister.js'
import type { SessionInit } from '../contracts/session-factory.js'
import type { AnyMessage, ContentBlock, MessageType, TokenUsage } from '../contracts/messages.js'
import type { SessionState } from '../contracts/session-state.js'
import { AdapterError, isAdapterError } from '../errors/adapter-error.js'
import { AgentError, isAgentError } from '../errors/agent-error.js'
import { SessionBusyError } from '../errors/session-busy-error.js'
import { SessionStateError } from '../errors/session-state-error.js'
import { ValidationError } from '../errors/validation-error.js'
import type { PendingToolCall, Tool, ToolApproval, ToolAnswer } from '../tools/tool.js'
import { EventStream } from '../util/event-stream.js'
import { addUsage, emptyUsage } from '../util/token-usage.js'
import { uuidv7 } from '../util/uuid-v7.js'
import { type ModelRequestContext, type ResponseOutcome, runModelRequest } from './model-request.js'
import type { SendOptions, Session } from './session.js'
import type { SendResult, SessionEvent, SessionListener } from './session-events.js'
import { type MessagesQuery, SessionHistory } from './session-history.js'
import type { SessionRuntimeOptions } from './session-runtime-options.js'
import { assertTransition, canSend } from './session-state.js'
import {
  checkAnswers,
  findWaitingBatch,
  type PendingAnswer,
  pendingCalls,
  repliedInstead,
  runAnsweredBatch,
  type WaitingBatch,
} from './approvals.js'
import { type Continuation, continuationForRetry } from './continuation.js'
import {
  type CompactOptions,
  compactionMessage,
  DEFAULT_KEEP_RECENT_MESSAGES,
  DEFAULT_COMPACTION_INSTRUCTIONS,
  estimateRequestTokens,
  historyWithCompaction,
  planCompaction,
  summarize as summarizeConversation,
  validateCompactOptions,
} from './compaction.js'
import { withKnowledge } from '../agent/load-knowledge.js'
import { mergeTools, runToolStep, toolCallsOf } from './tool-step.js'
import { type SendInput, validateSendInput, validateSendOptions } from './validate-input.js'
import { SessionLease } from './session-lease.js'
import { WriteQueue } from './write-queue.js'

const SUMMARY_LENGTH = 100

/** One running send: its input, its signal, where its events go and what it persisted. */
interface SendRun {
  input: SendInput | { kind: 'retry' } | { kind: 'compact' }
  options: SendOptions
  controller: AbortController
  sink: EventStream<SessionEvent> | undefined
  emit(event: SessionEvent): void
  produced: AnyMessage[]
  /** An automatic compaction failed in this send: no other is tried until the next send. */
  compactionFailed?: boolean
}

/**
 * The kernel's session: the send flow of DESIGN.md §7 as a loop of steps — a model request
 * (`model-request.ts`, with retries and checkpoints), the tool step (`tool-step.ts`), and the
 * decision to go on. History lives in `session-history.ts`, writes go through the session's
 * `WriteQueue`.
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
  readonly #history: SessionHistory
  readonly #isClosed: () => boolean
  #data: SessionData
  #usage: TokenUsage
  #listeners = new Set<SessionListener>()
  #queue: WriteQueue | undefined
  readonly #lease: SessionLease | undefined
  #run: SendRun | undefined
  #running: Promise<unknown> | undefined

  constructor(init: SessionInit) {
    const { data, adapter, options, persister } = init
    this.id = data.id
    this.adapter = adapter
    this.options = options
    this.persister = persister
    this.#isClosed = init.isClosed ?? (() => false)
    this.#data = { ...data }
    this.#usage = { ...(data.tokenUsage ?? emptyUsage()) }
    this.#history = new SessionHistory(persister, data.id, init.messages)
    if (persister && options.owner !== undefined && SessionLease.isSupportedBy(persister)) {
      this.#lease = new SessionLease({
        persister,
        sessionId: data.id,
        owner: options.owner,
        ...(options.leaseTtlMs === undefined ? {} : { ttlMs: options.leaseTtlMs }),
        ...(options.logger === undefined ? {} : { logger: options.logger }),
      })
    }
    if (persister) {
      this.#queue = new WriteQueue(persister, data.id, {
        ...options.writeRetry,
        onError: (error) => {
          options.logger?.error('agentx: a write failed', { sessionId: data.id, code: error.code })
          this.#emit({ type: 'persist-error', error })
        },
      })
    }
  }

  get state(): SessionState {
    return this.#data.state
  }
  get model(): string {
    return this.#data.model ?? this.options.model
  }
  get summary(): string {
    return this.#data.summary
  }
  get createdAt(): string {
    return this.#data.createdAt
  }
  get lastActivity(): string {
    return this.#data.lastActivity
  }
  get providerSessionId(): string | undefined {
    return this.#data.providerSessionId
  }
  get userId(): string | undefined {
    return this.#data.userId
  }
  get appName(): string | undefined {
    return this.#data.appName
  }
  get metadata(): Record<string, unknown> | undefined {
    return this.#data.metadata
  }
  /** The system prompt of this session. */
  get systemPrompt(): string | undefined {
    return this.#data.systemPrompt ?? this.options.systemPrompt
  }

  /** A copy of the session's metadata as it is (or will be) stored. */
  toSessionData(): SessionData {
    return structuredClone({ ...this.#data, tokenUsage: this.#usage })
  }

  send(
    content: string | Array<ContentBlock | ToolApproval | ToolAnswer>,
    options?: SendOptions,
  ): Promise<SendResult> {
    let run: SendRun
    try {
      run = this.#begin(content, options, undefined)
    } catch (error) {
      return Promise.reject(error)
    }
    return this.#start(run)
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
    this.#run?.controller.abort(
      new AdapterError('The send was aborted.', { kind: 'aborted', provider: this.adapter.getName() }),
    )
  }

  retry(options?: SendOptions): Promise<SendResult> {
    let run: SendRun
    try {
      this.#assertUsable()
      if (this.#run) throw new SessionBusyError(this.id)
      const state = this.#data.state
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
    this.#assertUsable()
    if (this.#run) throw new SessionBusyError(this.id)
    this.#setState('completed')
    this.#data.lastActivity = new Date().toISOString()
    await this.#write(this.#queue?.saveSession(this.toSessionData()))
  }

  async getPending(): Promise<PendingToolCall[]> {
    this.#assertUsable()
    if (this.#data.state !== 'waiting_input') return []
    const messages = await this.#history.load()
    const batch = await findWaitingBatch(messages, mergeTools(this.options.tools), {
      sessionId: this.id,
      signal: new AbortController().signal,
    })
    return batch?.pending ?? []
  }

  compact(options?: CompactOptions): Promise<AnyMessage> {
    let run: SendRun
    let keep: number
    try {
      this.#assertUsable()
      if (this.#run) throw new SessionBusyError(this.id)
      const checked = validateCompactOptions(options, (message) => new ValidationError(message))
      keep =
        checked.keepRecentMessages ??
        this.options.compaction?.keepRecentMessages ??
        DEFAULT_KEEP_RECENT_MESSAGES
      run = this.#newRun(
        { kind: 'compact' },
        checked.signal === undefined ? {} : { signal: checked.signal },
        undefined,
      )
    } catch (error) {
      return Promise.reject(error)
    }
    return this.#start(run, async () => {
      if (this.#lease) {
        await this.#lease.claim()
        await this.#refresh()
      }
      const messages = await this.#history.load()
      const signal = run.controller.signal
      const message = await this.#summarise(run, messages.length, keep, this.model, false)
      this.#throwIfAborted(signal)
      if (message === undefined) {
        throw new SessionStateError(
          `Session ${this.id} has nothing to compact: no message is older than the last ${keep} since the latest summary.`,
          { state: this.#data.state },
        )
      }
      return message
    })
  }

  async getMessages(query?: MessagesQuery): Promise<AnyMessage[]> {
    this.#assertUsable()
    return this.#history.page(query)
  }

  getTokenUsage(): TokenUsage {
    return { ...this.#usage }
  }

  subscribe(listener: SessionListener): () => void {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  /** Resolves when no send is running (used by `agent.close()` after aborting). Never rejects. */
  async whenSettled(): Promise<void> {
    while (this.#running) await this.#running.catch(() => undefined)
  }

  async flush(): Promise<void> {
    this.#assertUsable()
    await this.#queue?.flush()
  }

  /**
   * Called by the agent when it closes: makes every accepted write durable (rejects if one is
   * not), then drops the messages held in memory. Not for application code.
   */
  async release(): Promise<void> {
    try {
      await this.#queue?.flush()
    } finally {
      this.#history.release()
    }
  }

  async delete(): Promise<void> {
    this.#assertUsable()
    if (this.#running) {
      this.abort()
      await this.whenSettled()
    }
    await this.#queue?.discard()
    await this.persister?.deleteSession(this.id)
    this.#setState('deleted')
    this.#history.clear()
    this.#listeners.clear()
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

  // --- the send flow ---------------------------------------------------------------------------

  /**
   * The synchronous part of send/stream: closed, deleted and busy checks, then validation, so a
   * same-tick second call or a bad input writes nothing.
   */
  #begin(content: unknown, options: unknown, sink: EventStream<SessionEvent> | undefined): SendRun {
    this.#assertUsable()
    if (this.#run) throw new SessionBusyError(this.id)
    const input = validateSendInput(content)
    const checkedOptions = validateSendOptions(options)
    if (!canSend(this.#data.state) && this.#data.state !== 'active') {
      throw new SessionStateError(`Session ${this.id} cannot send in state '${this.#data.state}'.`, {
        state: this.#data.state,
      })
    }
    return this.#newRun(input, checkedOptions, sink)
  }

  #newRun(
    input: SendRun['input'],
    options: SendOptions,
    sink: EventStream<SessionEvent> | undefined,
  ): SendRun {
    const run: SendRun = {
      input,
      options,
      controller: new AbortController(),
      sink,
      emit:
        sink === undefined
          ? (event) => this.#emit(event)
          : (event) => {
              this.#emit(event)
              sink.push(event)
            },
      produced: [],
    }
    this.#run = run
    return run
  }

  #start(run: SendRun): Promise<SendResult>
  #start<T>(run: SendRun, body: () => Promise<T>): Promise<T>
  #start(run: SendRun, body: () => Promise<unknown> = () => this.#flow(run)): Promise<unknown> {
    const external = run.options.signal
    const onExternalAbort = (): void => this.abort()
    if (external?.aborted) this.abort()
    else external?.addEventListener('abort', onExternalAbort, { once: true })
    const running = body().finally(async () => {
      external?.removeEventListener('abort', onExternalAbort)
      await this.#endLease()
      this.#run = undefined
      this.#running = undefined
    })
    this.#running = running
    return running
  }

  /** The loop: opening (user message, answers or retry) → (model request → tool step)* → idle or waiting. */
  async #flow(run: SendRun): Promise<SendResult> {
    const { options, emit } = run
    const signal = run.controller.signal
    let sendUsage = emptyUsage()
    let started = false
    try {
      // Several processes on one store: claim the session (SessionBusyError when another process
      // runs a send of it) and take in what others appended since this object last looked.
      if (this.#lease) {
        await this.#lease.claim()
        await this.#refresh()
      }
      await this.#history.load()
      this.#throwIfAborted(signal)
      const tools = mergeTools(this.options.tools, options.tools)
      // Everything that can refuse the send happens before the first write or state change.
      const batch = run.input.kind === 'retry' ? undefined : await this.#waitingBatch(tools, signal)
      const answers = run.input.kind === 'answers' ? checkAnswers(run.input.answers, batch) : undefined
      const retryFrom = run.input.kind === 'retry' ? this.#retryContinuation() : undefined
      started = true
      let { prompt, historyEnd } = retryFrom ?? (await this.#open(run, tools, signal, batch, answers))

      const maxSteps = options.maxSteps ?? this.options.maxSteps
      const context = this.#requestContext(run, signal)
      let last: AnyMessage | undefined
      let pending: PendingToolCall[] = []
      for (let step = 1; ; step++) {
        let streamOptions = this.#streamOptions(historyEnd, tools, options, signal)
        const summary = await this.#compactBeforeRequest(run, prompt, historyEnd, streamOptions)
        if (summary !== undefined) {
          if (summary.usage) sendUsage = addUsage(sendUsage, summary.usage)
          streamOptions = this.#streamOptions(historyEnd, tools, options, signal)
        }
        emit({ type: 'step-start', step, agent: 'default', model: streamOptions.model })
        let outcome: ResponseOutcome
        try {
          outcome = await runModelRequest(context, prompt, streamOptions, this.#history.nextSeq())
        } catch (error) {
          emit({ type: 'step-finish', step, stopReason: signal.aborted ? 'aborted' : 'error' })
          throw error
        }
        emit(
          outcome.usage
            ? { type: 'step-finish', step, usage: outcome.usage, stopReason: outcome.message.stopReason }
            : { type: 'step-finish', step, stopReason: outcome.message.stopReason },
        )
        if (outcome.usage) sendUsage = addUsage(sendUsage, outcome.usage)
        last = this.transformMessage(outcome.message)
        await this.#write(this.#append(last, run))
        const calls = toolCallsOf(last)
        if (calls.length === 0) break
        const stepContext = { sessionId: this.id, signal, messages: this.#history.messages, emit }
        // A call that needs approval or is a client tool holds the whole batch (DESIGN §10.1).
        pending = await pendingCalls(calls, tools, stepContext)
        if (pending.length > 0) break
        const results = await runToolStep(calls, tools, stepContext)
        this.#throwIfAborted(signal)
        historyEnd = this.#history.messages.length
        await this.#write(this.#append(this.#newMessage('tool', results), run))
        if (step >= maxSteps) break
        prompt = results
      }

      this.#data.lastActivity = new Date().toISOString()
      this.#setState(pending.length > 0 ? 'waiting_input' : 'idle', emit)
      await this.#write(this.#queue?.saveSession(this.toSessionData()))
      if (pending.length > 0) emit({ type: 'input-required', pending })
      const result: SendResult = {
        messages: run.produced,
        text: textOf(last?.content ?? ''),
        usage: sendUsage,
        stopReason: last?.stopReason,
      }
      if (pending.length > 0) result.pending = pending
      emit({ type: 'done', result })
      return result
    } catch (caught) {
      const error = this.#toError(caught, signal)
      // Refused before anything was written (bad answers, nothing to retry, held by another
      // process): the session is unchanged.
      if (
        !started &&
        (error instanceof ValidationError ||
          error instanceof SessionStateError ||
          error instanceof SessionBusyError)
      ) {
        throw error
      }
      const aborted = isAbort(error)
      if (this.#data.state !== 'deleted') {
        // A failure before the model was called (loading history, a sync write) still ends the send in `error`.
        if (this.#data.state !== 'active') this.#setState('active', emit)
        this.#setState(aborted ? 'aborted' : 'error', emit)
      }
      if (!aborted) emit({ type: 'error', error })
      if (this.#data.state !== 'deleted') {
        this.#data.lastActivity = new Date().toISOString()
        void this.#queue?.saveSession(this.toSessionData())
      }
      throw error
    }
  }

  /**
   * Takes in what another process stored since this object last looked: the session's metadata
   * and the messages after the last one held. Only while this object has no write of its own
   * pending (its own writes are newer than the store).
   */
  async #refresh(): Promise<void> {
    const persister = this.persister
    if (persister === undefined || (this.#queue !== undefined && !this.#queue.idle)) return
    const stored = await persister.getSession(this.id)
    if (stored === null) {
      throw new SessionStateError(`Session ${this.id} was deleted by another process.`, { state: 'deleted' })
    }
    this.#data = { ...stored }
    this.#usage = { ...stored.tokenUsage }
    await this.#history.catchUp()
  }

  /** The end of a send with a lease: its writes become durable, then the lease is released. */
  async #endLease(): Promise<void> {
    if (!this.#lease?.isHeld) return
    try {
      await this.#queue?.flush()
    } catch {
      // Not durable yet: keep the lease (it expires by itself) so no other process writes over a gap.
      return
    }
    await this.#lease.release()
  }

  /** The unanswered tool batch the stored conversation ends with, if any. */
  async #waitingBatch(tools: Map<string, Tool>, signal: AbortSignal): Promise<WaitingBatch | undefined> {
    return findWaitingBatch(this.#history.messages, tools, { sessionId: this.id, signal })
  }

  #retryContinuation(): Continuation {
    const continuation = continuationForRetry(this.#history.messages)
    if (continuation === undefined) {
      throw new SessionStateError(`Session ${this.id} has no user message to retry.`, {
        state: this.#data.state,
      })
    }
    this.#setState('active', this.#run?.emit)
    return continuation
  }

  /**
   * The opening of a send: the results of the batch the session waits on (answered, or closed
   * because the user wrote instead), then — for content — the user message.
   */
  async #open(
    run: SendRun,
    tools: Map<string, Tool>,
    signal: AbortSignal,
    batch: WaitingBatch | undefined,
    answers: Map<string, PendingAnswer> | undefined,
  ): Promise<Continuation> {
    const { emit } = run
    if (run.input.kind === 'answers' && batch !== undefined && answers !== undefined) {
      this.#setState('active', emit)
      this.#data.lastActivity = new Date().toISOString()
      void this.#queue?.saveSession(this.toSessionData())
      const results = await runAnsweredBatch(batch, answers, tools, {
        sessionId: this.id,
        signal,
        messages: this.#history.messages,
        emit,
      })
      this.#throwIfAborted(signal)
      const historyEnd = this.#history.messages.length
      await this.#write(this.#append(this.#newMessage('tool', results), run))
      return { prompt: results, historyEnd }
    }
    const content = (run.input as { content: string | ContentBlock[] }).content
    if (batch !== undefined) this.#append(this.#newMessage('tool', repliedInstead(batch)), run)
    const user = this.#newMessage('user', content)
    if (this.#data.summary === '') this.#data.summary = summarize(content)
    const userSaved = this.#append(user, run)
    this.#setState('active', emit)
    this.#data.lastActivity = user.timestamp
    await this.#beforeModel(user, userSaved, run)
    return { prompt: content, historyEnd: this.#history.messages.length - 1 }
  }

  /**
   * Saves the session as `active`; in `sync` durability waits for the user message and the
   * session. A send that fails here never reached the model: its user message is taken back unless
   * it already became durable, so it is never written later behind the caller's back.
   */
  async #beforeModel(user: AnyMessage, userSaved: Promise<void> | undefined, run: SendRun): Promise<void> {
    const sessionSaved = this.#queue?.saveSession(this.toSessionData())
    if (this.options.durability !== 'sync' || this.#queue === undefined) return
    try {
      await userSaved
      await sessionSaved
    } catch (error) {
      if ((await this.#queue.retract(user)) === 'removed') {
        this.#history.removeLast(user.id)
        run.produced.pop()
      }
      throw error
    }
  }

  #requestContext(run: SendRun, signal: AbortSignal): ModelRequestContext {
    return {
      sessionId: this.id,
      adapter: this.adapter,
      signal,
      retry: this.options.retry,
      checkpointIntervalMs: this.options.checkpointIntervalMs,
      logger: this.options.logger,
      emit: run.emit,
      sink: run.sink,
      extractSessionId: (event) => this.extractSessionId(event),
      onProviderSessionId: (id) => {
        if (id === this.#data.providerSessionId) return
        this.#data.providerSessionId = id
        void this.#queue?.saveSession(this.toSessionData())
      },
      onUsage: (usage) => {
        this.#usage = addUsage(this.#usage, usage)
      },
      saveCheckpoint: (message) => this.#write(this.#queue?.saveMessage(message)),
      keepPartial: (message) => {
        const kept = this.#history.append({ ...message, incomplete: true })
        void this.#queue?.saveMessage(kept)
        run.emit({ type: 'message', message: kept })
      },
      toError: (caught) => this.#toError(caught, signal),
    }
  }

  #streamOptions(
    historyEnd: number,
    tools: Map<string, Tool>,
    options: SendOptions,
    signal: AbortSignal,
  ): AdapterStreamOptions {
    const streamOptions: AdapterStreamOptions = {
      model: options.model ?? this.model,
      history: historyWithCompaction(this.#history.messages, historyEnd),
      signal,
    }
    const systemPrompt = withKnowledge(options.systemPrompt ?? this.systemPrompt, this.options.knowledge)
    if (systemPrompt !== undefined) streamOptions.systemPrompt = systemPrompt
    if (tools.size > 0) {
      streamOptions.tools = [...tools.values()].map(({ name, description, inputSchema }) => ({
        name,
        description,
        inputSchema,
      }))
    }
    if (this.#data.providerSessionId !== undefined) streamOptions.resume = this.#data.providerSessionId
    if (options.maxOutputTokens !== undefined) streamOptions.maxOutputTokens = options.maxOutputTokens
    if (options.temperature !== undefined) streamOptions.temperature = options.temperature
    if (options.providerOptions !== undefined) streamOptions.providerOptions = options.providerOptions
    return streamOptions
  }

  /**
   * The compaction step before each model request (DESIGN §10.4): when the request's input would
   * pass `compaction.thresholdTokens`, the older part of the conversation is summarised and the
   * request is made from the summary. Resolves to the summary written, if any.
   */
  async #compactBeforeRequest(
    run: SendRun,
    prompt: string | ContentBlock[],
    historyEnd: number,
    request: AdapterStreamOptions,
  ): Promise<AnyMessage | undefined> {
    const settings = this.options.compaction
    if (settings === undefined || run.compactionFailed) return undefined
    if (estimateRequestTokens({ ...request, prompt }) <= settings.thresholdTokens) return undefined
    const keep = settings.keepRecentMessages ?? DEFAULT_KEEP_RECENT_MESSAGES
    // The prompt (at `historyEnd`) is part of what may be kept, never of what is summarised.
    return this.#summarise(run, historyEnd + 1, keep, request.model, true)
  }

  /**
   * Summarises what is older than the last `keep` of the first `end` messages, then persists the
   * summary, shows it (`message`, `compaction`), counts its usage, and drops the provider session
   * id (the provider's stored context is the uncompacted one). `undefined` when nothing is old
   * enough. A failing summariser writes nothing; with `tolerateFailure` (automatic compaction) it
   * does not fail the send either: it is logged, shown as `compaction-error`, and no other
   * compaction is tried in this send. A write that fails afterwards fails like any other write.
   */
  async #summarise(
    run: SendRun,
    end: number,
    keep: number,
    model: string,
    tolerateFailure: boolean,
  ): Promise<AnyMessage | undefined> {
    const plan = planCompaction(this.#history.messages, end, keep)
    if (plan === undefined) return undefined
    const settings = this.options.compaction
    const signal = run.controller.signal
    let summary: { text: string; usage: TokenUsage | undefined }
    try {
      summary = await summarizeConversation(plan, {
        adapter: settings?.adapter ?? this.adapter,
        model: settings?.model ?? (settings?.adapter === undefined ? model : ''),
        instructions: settings?.instructions ?? DEFAULT_COMPACTION_INSTRUCTIONS,
        signal,
        retry: this.options.retry,
        logger: this.options.logger,
        sessionId: this.id,
      })
    } catch (caught) {
      if (signal.aborted) throw this.#abortedError(signal)
      if (!tolerateFailure) throw caught
      const error = this.#toError(caught, signal)
      run.compactionFailed = true
      this.options.logger?.warn('agentx: compaction failed; the request goes on with the whole history', {
        sessionId: this.id,
        code: error.code,
        error: error.message,
      })
      run.emit({ type: 'compaction-error', error })
      return undefined
    }
    this.#throwIfAborted(signal)
    const { text, usage } = summary
    const message = compactionMessage(this.id, this.#history.nextSeq(), text, plan.throughSeq, usage)
    const saved = this.#append(message, run)
    if (usage !== undefined) this.#usage = addUsage(this.#usage, usage)
    delete this.#data.providerSessionId
    const sessionSaved = this.#queue?.saveSession(this.toSessionData())
    await this.#write(saved)
    await this.#write(sessionSaved)
    run.emit({ type: 'compaction', message })
    return message
  }

  /** Adds a message to the history (frozen), queues its write and shows it. */
  #append(message: AnyMessage, run: SendRun): Promise<void> | undefined {
    const frozen = this.#history.append(message)
    run.produced.push(frozen)
    const saved = this.#queue?.saveMessage(frozen)
    run.emit({ type: 'message', message: frozen })
    return saved
  }

  /** In `sync` durability, waits for the write (and fails the send if it is not durable). */
  async #write(saved: Promise<void> | undefined): Promise<void> {
    if (this.options.durability === 'sync' && saved) await saved
  }

  #newMessage(type: MessageType, content: string | ContentBlock[]): AnyMessage {
    return {
      id: uuidv7(),
      sessionId: this.id,
      seq: this.#history.nextSeq(),
      type,
      content,
      timestamp: new Date().toISOString(),
    }
  }

  #setState(next: SessionState, emit: (event: SessionEvent) => void = (event) => this.#emit(event)): void {
    const previous = this.#data.state
    if (previous === next) return
    assertTransition(previous, next)
    this.#data.state = next
    emit({ type: 'state', state: next, previous })
  }

  #emit(event: SessionEvent): void {
    if (this.#listeners.size === 0) return
    for (const listener of this.#listeners) {
      try {
        listener(event)
      } catch (error) {
        this.options.logger?.warn('agentx: a session listener threw', {
          sessionId: this.id,
          error: error instanceof Error ? error.message : String(error),
        })
      }
    }
  }

  #assertUsable(): void {
    if (this.#isClosed()) {
      throw new AgentError('The agent of this session is closed.', 'AGENT_CLOSED')
    }
    if (this.#data.state === 'deleted') {
      throw new SessionStateError(`Session ${this.id} is deleted.`, { state: 'deleted' })
    }
  }

  #throwIfAborted(signal: AbortSignal): void {
    if (signal.aborted) throw this.#abortedError(signal)
  }

  #abortedError(signal: AbortSignal): AdapterError {
    const reason = signal.reason
    if (isAdapterError(reason) && reason.kind === 'aborted') return reason
    return new AdapterError('The send was aborted.', {
      kind: 'aborted',
      provider: this.adapter.getName(),
      cause: reason,
    })
  }

  #toError(caught: unknown, signal: AbortSignal): AgentError {
    if (signal.aborted) return this.#abortedError(signal)
    if (isAgentError(caught)) return caught
    return new AdapterError(caught instanceof Error ? caught.message : String(caught), {
      kind: 'unknown',
      provider: this.adapter.getName(),
      cause: caught,
      retryable: false,
    })
  }
}

function isAbort(error: unknown): boolean {
  return isAdapterError(error) && error.kind === 'aborted'
}

function textOf(content: string | ContentBlock[]): string {
  if (typeof content === 'string') return content
  let text = ''
  for (const block of content) if (block.type === 'text') text += block.text
  return text
}

function summarize(content: string | ContentBlock[]): string {
  const text = textOf(content).replace(/\s+/g, ' ').trim()
  const characters = Array.from(text)
  return characters.length > SUMMARY_LENGTH ? `${characters.slice(0, SUMMARY_LENGTH - 1).join('')}…` : text
}
