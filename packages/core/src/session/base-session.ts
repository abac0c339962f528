import type { AdapterMessage, AdapterStreamOptions, AgentAdapter } from '../contracts/agent-adapter.js'
import type { AgentPersister, SessionData } from '../contracts/agent-persister.js'
import type {
  AnyMessage,
  ContentBlock,
  MessageType,
  StopReason,
  TokenUsage,
  ToolResultBlock,
  ToolUseBlock,
} from '../contracts/messages.js'
import { AdapterError, isAdapterError } from '../errors/adapter-error.js'
import { type AgentError, isAgentError } from '../errors/agent-error.js'
import { SessionBusyError } from '../errors/session-busy-error.js'
import { SessionStateError } from '../errors/session-state-error.js'
import { ValidationError } from '../errors/validation-error.js'
import { backoffDelay } from '../retry/retry-options.js'
import { runTools } from '../tools/run-tools.js'
import type { Tool } from '../tools/tool.js'
import { sleep } from '../util/abort.js'
import { AsyncQueue } from '../util/async-queue.js'
import { addUsage, emptyUsage } from '../util/token-usage.js'
import { uuidv7 } from '../util/uuid-v7.js'
import type { Session, SendOptions } from './session.js'
import type { SendResult, SessionEvent, SessionListener } from './session-events.js'
import type { SessionRuntimeOptions } from './session-runtime-options.js'
import { assertTransition, canSend, type SessionState } from './session-state.js'
import { WriteQueue } from './write-queue.js'

const SUMMARY_LENGTH = 100
const PAGE_SIZE = 1000

/** What one model response produced. */
interface ResponseOutcome {
  message: AnyMessage
  usage: TokenUsage | undefined
}

/** The accumulated state of a response while it streams; kept when it fails. */
interface PartialResponse {
  id: string
  seq: number | undefined
  text: string
  thinking: string
  toolCalls: ToolUseBlock[]
  checkpointed: boolean
  yielded: boolean
}

/**
 * The kernel's session: the send flow of DESIGN.md §7 as a template method.
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
  #data: SessionData
  #messages: AnyMessage[] | undefined
  #loading: Promise<AnyMessage[]> | undefined
  #usage: TokenUsage
  #listeners = new Set<SessionListener>()
  #queue: WriteQueue | undefined
  #controller: AbortController | undefined
  #running: Promise<unknown> | undefined

  constructor(
    id: string,
    metadata: SessionData,
    adapter: AgentAdapter,
    options: SessionRuntimeOptions,
    persister?: AgentPersister,
    messages?: AnyMessage[],
    tokenUsage?: TokenUsage,
  ) {
    this.id = id
    this.adapter = adapter
    this.options = options
    this.persister = persister
    this.#data = { ...metadata, id }
    this.#messages = messages ? [...messages].sort((a, b) => a.seq - b.seq) : undefined
    this.#usage = { ...(tokenUsage ?? metadata.tokenUsage ?? emptyUsage()) }
    if (persister) {
      this.#queue = new WriteQueue(persister, id, {
        onError: (error) => {
          this.options.logger?.error('agentx: a write failed for good', { sessionId: id, code: error.code })
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

  send(content: string | ContentBlock[], options: SendOptions = {}): Promise<SendResult> {
    try {
      this.#begin(content)
    } catch (error) {
      return Promise.reject(error)
    }
    return this.#run(content, options, undefined)
  }

  stream(content: string | ContentBlock[], options: SendOptions = {}): AsyncIterable<SessionEvent> {
    let startError: unknown
    try {
      this.#begin(content)
    } catch (error) {
      startError = error
    }
    const queue = new AsyncQueue<SessionEvent>(() => this.abort())
    if (startError !== undefined) {
      queue.end({ error: startError })
      return queue
    }
    this.#run(content, options, queue).then(
      () => queue.end(),
      () => queue.end(),
    )
    return queue
  }

  abort(): void {
    this.#controller?.abort(
      new AdapterError('The send was aborted.', { kind: 'aborted', provider: this.adapter.getName() }),
    )
  }

  async getMessages(): Promise<AnyMessage[]> {
    this.#assertNotDeleted()
    return structuredClone(await this.#hydrate())
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
    this.#assertNotDeleted()
    await this.#queue?.flush()
  }

  async delete(): Promise<void> {
    this.#assertNotDeleted()
    if (this.#running) {
      this.abort()
      await this.#running.catch(() => undefined)
    }
    await this.#queue?.discard()
    await this.persister?.deleteSession(this.id)
    this.#setState('deleted')
    this.#messages = []
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

  /** The synchronous part of send/stream: state and busy checks, so a same-tick second call writes nothing. */
  #begin(content: string | ContentBlock[]): void {
    this.#assertNotDeleted()
    if (this.#controller) throw new SessionBusyError(this.id)
    if (typeof content !== 'string' && !Array.isArray(content)) {
      throw new ValidationError('content must be a string or an array of content blocks.')
    }
    if (!canSend(this.#data.state) && this.#data.state !== 'active') {
      throw new SessionStateError(`Session ${this.id} cannot send in state '${this.#data.state}'.`, {
        state: this.#data.state,
      })
    }
    this.#controller = new AbortController()
  }

  #run(
    content: string | ContentBlock[],
    options: SendOptions,
    sink: AsyncQueue<SessionEvent> | undefined,
  ): Promise<SendResult> {
    const controller = this.#controller!
    const signal = controller.signal
    const onExternalAbort = (): void => this.abort()
    if (options.signal?.aborted) this.abort()
    else options.signal?.addEventListener('abort', onExternalAbort, { once: true })
    const emit = (event: SessionEvent): void => {
      this.#emit(event)
      sink?.push(event)
    }
    const run = this.#flow(content, options, signal, emit).finally(() => {
      options.signal?.removeEventListener('abort', onExternalAbort)
      this.#controller = undefined
      this.#running = undefined
    })
    this.#running = run
    // The caller of send() handles the rejection; stream() reports it as events.
    if (sink) run.catch(() => undefined)
    return run
  }

  async #flow(
    content: string | ContentBlock[],
    options: SendOptions,
    signal: AbortSignal,
    emit: (event: SessionEvent) => void,
  ): Promise<SendResult> {
    const produced: AnyMessage[] = []
    let sendUsage = emptyUsage()
    try {
      const messages = await this.#hydrate()
      this.#throwIfAborted(signal)
      const user = this.#newMessage('user', content)
      if (this.#data.summary === '') this.#data.summary = summarize(content)
      await this.#append(user, produced, emit)
      this.#setState('active', emit)
      this.#data.lastActivity = user.timestamp
      await this.#saveSession()

      const tools = mergeTools(this.options.tools, options.tools)
      const maxSteps = Math.max(1, options.maxSteps ?? this.options.maxSteps)
      let prompt: string | ContentBlock[] = content
      let historyEnd = messages.length - 1
      let last: AnyMessage | undefined
      for (let step = 1; ; step++) {
        const outcome = await this.#request(
          prompt,
          messages.slice(0, historyEnd),
          tools,
          options,
          signal,
          emit,
        )
        last = outcome.message
        if (outcome.usage) sendUsage = addUsage(sendUsage, outcome.usage)
        await this.#append(outcome.message, produced, emit)
        const toolUses = Array.isArray(last.content)
          ? last.content.filter((block): block is ToolUseBlock => block.type === 'tool_use')
          : []
        if (toolUses.length === 0) break
        const results = await runTools(toolUses, tools, {
          sessionId: this.id,
          signal,
          messages,
          onResult: (result) => emit(toolResultEvent(result)),
        })
        this.#throwIfAborted(signal)
        const toolMessage = this.#newMessage('tool', results)
        await this.#append(toolMessage, produced, emit)
        if (step >= maxSteps) break
        prompt = results
        historyEnd = messages.length - 1
      }

      this.#data.lastActivity = new Date().toISOString()
      this.#setState('idle', emit)
      await this.#saveSession()
      if (this.options.durability === 'sync') await this.#queue?.flush()
      const result: SendResult = {
        messages: structuredClone(produced),
        text: textOf(last?.content ?? ''),
        usage: sendUsage,
        stopReason: last?.stopReason,
      }
      emit({ type: 'done', result })
      return result
    } catch (caught) {
      const error = this.#toError(caught, signal)
      const aborted = isAdapterError(error) && error.kind === 'aborted'
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

  /** One model request with the kernel's retry policy (only before the first event). */
  async #request(
    prompt: string | ContentBlock[],
    history: AnyMessage[],
    tools: Map<string, Tool>,
    options: SendOptions,
    signal: AbortSignal,
    emit: (event: SessionEvent) => void,
  ): Promise<ResponseOutcome> {
    const retry = this.options.retry
    for (let attempt = 0; ; attempt++) {
      const partial: PartialResponse = {
        id: uuidv7(),
        seq: undefined,
        text: '',
        thinking: '',
        toolCalls: [],
        checkpointed: false,
        yielded: false,
      }
      try {
        return await this.#streamResponse(prompt, history, tools, options, signal, emit, partial)
      } catch (caught) {
        const error = this.#toError(caught, signal)
        const aborted = isAdapterError(error) && error.kind === 'aborted'
        if (partial.yielded || aborted || !error.retryable) {
          await this.#keepPartial(partial, aborted ? 'aborted' : 'error', emit)
          throw error
        }
        const retryAfter = isAdapterError(error) ? error.retryAfterMs : undefined
        if (attempt >= retry.maxRetries || (retryAfter !== undefined && retryAfter > retry.maxDelayMs)) {
          if (retry.maxRetries > 0) emit({ type: 'retries-exhausted', error })
          throw error
        }
        const delayMs = retryAfter ?? backoffDelay(attempt + 1, retry)
        emit({ type: 'retry', attempt: attempt + 1, delayMs, error })
        this.options.logger?.warn('agentx: retrying a failed model request', {
          sessionId: this.id,
          attempt: attempt + 1,
          delayMs,
        })
        await sleep(delayMs, signal).catch(() => undefined)
        this.#throwIfAborted(signal)
      }
    }
  }

  async #streamResponse(
    prompt: string | ContentBlock[],
    history: AnyMessage[],
    tools: Map<string, Tool>,
    options: SendOptions,
    signal: AbortSignal,
    emit: (event: SessionEvent) => void,
    partial: PartialResponse,
  ): Promise<ResponseOutcome> {
    const streamOptions: AdapterStreamOptions = {
      model: options.model ?? this.model,
      history: historyForAdapter(history),
      signal,
    }
    const systemPrompt = options.systemPrompt ?? this.systemPrompt
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

    this.#throwIfAborted(signal)
    const iterator = this.adapter.stream(prompt, streamOptions)[Symbol.asyncIterator]()
    let final: { content: ContentBlock[]; stopReason: StopReason | undefined } | undefined
    let usage: TokenUsage | undefined
    let lastCheckpoint = Date.now()
    let finished = false
    try {
      for (;;) {
        const next = await raceAbort(iterator.next(), signal)
        if (next.done) {
          finished = true
          break
        }
        const event = next.value
        partial.yielded = true
        const sessionId = this.extractSessionId(event)
        if (sessionId !== undefined && sessionId !== this.#data.providerSessionId) {
          this.#data.providerSessionId = sessionId
          void this.#queue?.saveSession(this.toSessionData())
        }
        switch (event.type) {
          case 'text-delta':
            partial.text += event.text
            emit({ type: 'text-delta', text: event.text })
            break
          case 'thinking-delta':
            partial.thinking += event.text
            emit({ type: 'thinking-delta', text: event.text })
            break
          case 'tool-call':
            partial.toolCalls.push({ type: 'tool_use', id: event.id, name: event.name, input: event.input })
            emit({ type: 'tool-call', id: event.id, name: event.name, input: event.input })
            break
          case 'usage':
            usage = usage ? addUsage(usage, event.usage) : { ...event.usage }
            this.#usage = addUsage(this.#usage, event.usage)
            emit({ type: 'usage', usage: event.usage })
            break
          case 'message':
            final = { content: event.content, stopReason: event.stopReason }
            break
          default:
            break
        }
        const interval = this.options.checkpointIntervalMs
        if (
          final === undefined &&
          interval >= 0 &&
          Date.now() - lastCheckpoint >= interval &&
          partial.text !== ''
        ) {
          lastCheckpoint = Date.now()
          await this.#checkpoint(partial)
        }
      }
    } finally {
      if (!finished) void Promise.resolve(iterator.return?.()).catch(() => undefined)
    }
    this.#throwIfAborted(signal)

    let content = final?.content ?? partialContent(partial)
    const known = new Set(content.filter((b) => b.type === 'tool_use').map((b) => (b as ToolUseBlock).id))
    const missing = partial.toolCalls.filter((call) => !known.has(call.id))
    if (missing.length > 0) content = [...content, ...missing]
    const stopReason = final?.stopReason ?? (partial.toolCalls.length > 0 ? 'tool_use' : 'end_turn')
    const message = this.#newMessage('agent', content, partial)
    message.stopReason = stopReason
    if (usage) message.usage = usage
    return { message: this.transformMessage(message), usage }
  }

  /** Saves the streaming reply so far, under the id the final message will have. */
  async #checkpoint(partial: PartialResponse): Promise<void> {
    const message = this.#newMessage('agent', partialContent(partial), partial)
    message.incomplete = true
    partial.checkpointed = true
    await this.#write(this.#queue?.saveMessage(message))
  }

  /** Keeps what a failed or aborted response streamed, marked `incomplete`. */
  async #keepPartial(
    partial: PartialResponse,
    stopReason: StopReason,
    emit: (event: SessionEvent) => void,
  ): Promise<void> {
    if (
      !partial.checkpointed &&
      partial.text === '' &&
      partial.thinking === '' &&
      partial.toolCalls.length === 0
    )
      return
    const message = this.#newMessage('agent', partialContent(partial), partial)
    message.stopReason = stopReason
    message.incomplete = true
    const messages = this.#messages!
    messages.push(message)
    void this.#queue?.saveMessage(message)
    emit({ type: 'message', message: structuredClone(message) })
  }

  async #append(
    message: AnyMessage,
    produced: AnyMessage[],
    emit: (event: SessionEvent) => void,
  ): Promise<void> {
    this.#messages!.push(message)
    produced.push(message)
    const saved = this.#queue?.saveMessage(message)
    emit({ type: 'message', message: structuredClone(message) })
    await this.#write(saved)
  }

  async #saveSession(): Promise<void> {
    await this.#write(this.#queue?.saveSession(this.toSessionData()))
  }

  /** In `sync` durability, waits for the write (and fails the send if it fails for good). */
  async #write(saved: Promise<void> | undefined): Promise<void> {
    if (this.options.durability === 'sync' && saved) await saved
  }

  #newMessage(type: MessageType, content: string | ContentBlock[], partial?: PartialResponse): AnyMessage {
    const messages = this.#messages!
    let seq: number
    if (partial) {
      partial.seq ??= nextSeq(messages)
      seq = partial.seq
    } else {
      seq = nextSeq(messages)
    }
    return {
      id: partial?.id ?? uuidv7(),
      sessionId: this.id,
      seq,
      type,
      content: structuredClone(content),
      timestamp: new Date().toISOString(),
    }
  }

  async #hydrate(): Promise<AnyMessage[]> {
    if (this.#messages) return this.#messages
    if (!this.persister) {
      this.#messages = []
      return this.#messages
    }
    this.#loading ??= (async () => {
      const loaded: AnyMessage[] = []
      let afterSeq: number | undefined
      for (;;) {
        const page = await this.persister!.getMessages(
          this.id,
          afterSeq === undefined ? { limit: PAGE_SIZE } : { afterSeq, limit: PAGE_SIZE },
        )
        loaded.push(...page)
        if (page.length < PAGE_SIZE) break
        afterSeq = page[page.length - 1]!.seq
      }
      return loaded
    })()
    try {
      const loaded = await this.#loading
      this.#messages ??= loaded
      return this.#messages
    } finally {
      this.#loading = undefined
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

  #assertNotDeleted(): void {
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

/**
 * The history as the model should see it: a partial reply kept after an abort or error stays (the
 * model said it), but without tool calls that never got results, which providers reject.
 */
function historyForAdapter(history: AnyMessage[]): AnyMessage[] {
  const result: AnyMessage[] = []
  for (const message of history) {
    if (!message.incomplete || !Array.isArray(message.content)) {
      result.push(message)
      continue
    }
    const content = message.content.filter((block) => block.type !== 'tool_use')
    if (content.length > 0) result.push({ ...message, content })
  }
  return result
}

function nextSeq(messages: AnyMessage[]): number {
  const last = messages[messages.length - 1]
  return last === undefined ? 0 : last.seq + 1
}

function partialContent(partial: PartialResponse): ContentBlock[] {
  const content: ContentBlock[] = []
  if (partial.thinking !== '') content.push({ type: 'thinking', text: partial.thinking })
  if (partial.text !== '') content.push({ type: 'text', text: partial.text })
  content.push(...partial.toolCalls)
  return content
}

function textOf(content: string | ContentBlock[]): string {
  if (typeof content === 'string') return content
  return content
    .filter((block) => block.type === 'text')
    .map((block) => (block as { text: string }).text)
    .join('')
}

function summarize(content: string | ContentBlock[]): string {
  const text = textOf(content).replace(/\s+/g, ' ').trim()
  const characters = Array.from(text)
  return characters.length > SUMMARY_LENGTH ? `${characters.slice(0, SUMMARY_LENGTH - 1).join('')}…` : text
}

function mergeTools(...lists: Array<Tool[] | undefined>): Map<string, Tool> {
  const tools = new Map<string, Tool>()
  for (const list of lists) for (const tool of list ?? []) tools.set(tool.name, tool)
  return tools
}

function toolResultEvent(result: ToolResultBlock): SessionEvent {
  return {
    type: 'tool-result',
    toolUseId: result.toolUseId,
    content: result.content,
    ...(result.isError ? { isError: true } : {}),
  }
}

/** Settles with `promise`, or rejects as soon as `signal` aborts (so a stuck adapter cannot block an abort). */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined)
    return Promise.reject(signal.reason)
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}
