import {
  type Attributes,
  type Context,
  context as contextApi,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api'
import { now, toHrTime } from './clock.js'
import {
  ABORTED,
  errorMessageOf,
  errorTypeOf,
  EVENT,
  GEN_AI,
  OPERATION,
  OTHER_ERROR,
  providerNameOf,
  TOOL_ERROR,
} from './gen-ai-attributes.js'
import { contentText, inputMessagesJson, outputMessagesJson, toolResultValue } from './gen-ai-content.js'
import type { ObservedBlock, ObservedEvent, ObservedMessage, ObservedUsage } from './observed-event.js'
import type { Telemetry } from './telemetry.js'

/** States that end a running send without a `done` or `error` event. */
const ENDING_STATES: ReadonlySet<string> = new Set([
  'aborted',
  'waiting_input',
  'completed',
  'deleted',
  'interrupted',
])

const UNKNOWN_PROVIDER = 'unknown'

/** One model request of a send: its span from `step-start`, ended after `step-finish`. */
interface ChatStep {
  span: Span
  start: number
  model: string
  provider: string
  /** When `step-finish` came; the span is ended at this time once the reply (or failure) is known. */
  end: number | undefined
  stopReason: string | undefined
  failed: boolean
  reply: ObservedMessage | undefined
}

/**
 * One tool call, from its agent message (or, answered after a wait, from the start of the send
 * that runs it) to its `tool-result`. Its span is opened when the call is known to run — at its
 * result, or when a sub-agent starts under it — with the recorded start time, so a call that only
 * waits for an approval or a client's answer gets no `execute_tool` span in that send.
 */
interface ToolCall {
  name: string
  start: number
  input: unknown
  span: Span | undefined
}

/** How a send ended. */
interface Outcome {
  error?: unknown
  aborted?: boolean
  /** The send stopped for input (`waiting_input`): its unanswered calls go on in the next send. */
  waiting?: boolean
  result?: { usage?: ObservedUsage; stopReason?: string; messages?: ObservedMessage[]; pending?: unknown[] }
}

/** Where a trace's `invoke_agent` span hangs: the caller's context, or a parent's tool span. */
export interface SessionTraceOptions {
  /** The context the `invoke_agent` span is parented in. Default is `context.active()` at send start. */
  parent?: () => Context
  /** `gen_ai.agent.name` known up front (sub-agents). */
  agentName?: string
  /** Whether this session is traced through its parent's `subagent` events. */
  viaParent?: boolean
  /** Told every request's usage (a sub-agent's counts in its parent's send). */
  onUsage?: (usage: ObservedUsage) => void
}

/**
 * The spans of one session's sends, driven by its events: `invoke_agent` from `state: active` to
 * `done` / `error` / an ending state, `chat {model}` from `step-start` to `step-finish` (ended at
 * that moment, once the reply message or the failure is known), and `execute_tool {name}` from the
 * agent message that asks for the call to its `tool-result`. Model requests and tool calls are
 * children of `invoke_agent`, parented explicitly (no context manager needed).
 */
export class SessionTrace {
  readonly sessionId: string
  readonly viaParent: boolean
  /** Child sessions traced through this session's `subagent` events during the current send. */
  readonly children: Set<string> = new Set()
  readonly #telemetry: Telemetry
  readonly #parent: (() => Context) | undefined
  readonly #agentName: string | undefined
  readonly #onUsage: ((usage: ObservedUsage) => void) | undefined
  #invoke: Span | undefined
  #invokeStart = 0
  #invokeProvider = UNKNOWN_PROVIDER
  #model: string | undefined
  /** `#model` is the last request's of an earlier send: this send's first request replaces it. */
  #modelProvisional = false
  #named = false
  /** The span's name is the last profile of an earlier send: this send's first request replaces it. */
  #namedProvisional = false
  /** The profile and model of the last request this trace saw, whichever send made it. */
  #lastAgent: string | undefined
  #lastModel: string | undefined
  #usage: Required<ObservedUsage> = emptyUsage()
  #hasUsage = false
  #chat: ChatStep | undefined
  #tools = new Map<string, ToolCall>()
  /** Calls still waiting for input when the last send ended (id → tool name): the next send runs them. */
  #carried = new Map<string, string>()
  /** With `recordContent`: the user message that starts the next send, and each step's new input. */
  #pendingUser: ObservedMessage | undefined
  #stepInput: ObservedMessage | undefined
  #lastReply: ObservedMessage | undefined
  /** Whether the send traced now has had its first `step-start`. */
  #stepSeen = false
  /** Whether the send traced now noted `agentx.input_required`. */
  #inputRequired = false
  /** The stop reason of the send's last request that finished. */
  #lastStopReason: string | undefined

  constructor(telemetry: Telemetry, sessionId: string, options: SessionTraceOptions = {}) {
    this.#telemetry = telemetry
    this.sessionId = sessionId
    this.#parent = options.parent
    this.#agentName = options.agentName ?? telemetry.agentName
    this.viaParent = options.viaParent ?? false
    this.#onUsage = options.onUsage
  }

  /**
   * A request of a sub-agent this send started: its usage is part of the send's (what
   * `SendResult.usage` says). Used when the send ends without a result, as when it stops for an
   * answer inside the sub-agent.
   */
  addChildUsage(usage: ObservedUsage): void {
    if (!this.#invoke) return
    this.#addUsage(usage)
    this.#onUsage?.(usage)
  }

  /** Whether a send is being traced. */
  get active(): boolean {
    return this.#invoke !== undefined
  }

  /** Whether the trace holds nothing (the router may forget it). */
  get idle(): boolean {
    return this.#invoke === undefined && this.#pendingUser === undefined && this.#carried.size === 0
  }

  handle(event: ObservedEvent): void {
    switch (event.type) {
      case 'message':
        this.#onMessage(event.message as ObservedMessage | undefined)
        return
      case 'state':
        this.#onState(event.state, event.previous)
        return
      case 'step-start':
        this.#startChat(event)
        return
      case 'step-finish':
        this.#finishChat(event)
        return
      case 'tool-result':
        this.#endTool(event)
        return
      case 'done':
        this.#endSend({ result: (event.result ?? {}) as NonNullable<Outcome['result']> })
        return
      case 'error':
        this.#telemetry.learnProvider((event.error as { provider?: unknown } | undefined)?.provider)
        this.#endSend({ error: event.error })
        return
      case 'retry':
        this.#telemetry.learnProvider((event.error as { provider?: unknown } | undefined)?.provider)
        this.#current()?.addEvent(EVENT.retry, {
          'agentx.retry.attempt': numberOr(event.attempt, 0),
          'agentx.retry.delay_ms': numberOr(event.delayMs, 0),
          [GEN_AI.errorType]: errorTypeOf(event.error),
        })
        return
      case 'retries-exhausted':
        this.#current()?.addEvent(EVENT.retriesExhausted, { [GEN_AI.errorType]: errorTypeOf(event.error) })
        return
      case 'persist-error':
        this.#invoke?.addEvent(EVENT.persistError, { [GEN_AI.errorType]: errorTypeOf(event.error) })
        return
      case 'handoff':
        this.#invoke?.addEvent(EVENT.handoff, {
          'agentx.handoff.from': stringOr(event.from, ''),
          'agentx.handoff.to': stringOr(event.to, ''),
        })
        return
      case 'compaction':
        this.#onCompaction(event.message as ObservedMessage | undefined)
        return
      case 'input-required':
        this.#noteInputRequired()
        return
      default:
        // Deltas, usage and tool-call events carry nothing the spans need (step-finish has the usage,
        // the agent message has the tool calls).
        return
    }
  }

  /**
   * The context a sub-agent's `invoke_agent` hangs in: the running tool call that started it (by
   * its id, which the kernel's `subagent` event carries; for an older kernel, the one named after
   * the agent, or the only one running), else this send's `invoke_agent`.
   */
  childContext(agent: string, toolUseId?: string): Context {
    const call = toolUseId === undefined ? undefined : this.#tools.get(toolUseId)
    let named: [string, ToolCall] | undefined
    let only: [string, ToolCall] | undefined
    let running = 0
    for (const entry of this.#tools) {
      running++
      only = entry
      if (entry[1].name === agent) named ??= entry
    }
    const chosen: [string, ToolCall] | undefined =
      call !== undefined ? [toolUseId!, call] : (named ?? (running === 1 ? only : undefined))
    // The call runs: a sub-agent started under it.
    const parent = chosen ? this.#openTool(chosen[0], chosen[1]) : this.#invoke
    return parent ? trace.setSpan(contextApi.active(), parent) : contextApi.active()
  }

  /** Marks, on `invoke_agent`, that a sub-agent started in a child session. */
  noteSubagent(sessionId: string, agent: string): void {
    this.children.add(sessionId)
    this.#invoke?.addEvent(EVENT.subagent, {
      'agentx.subagent.session_id': sessionId,
      [GEN_AI.agentName]: agent,
    })
  }

  /** The provider became known: fills it in where `unknown` was recorded. */
  providerResolved(provider: string): void {
    if (this.#invoke && this.#invokeProvider === UNKNOWN_PROVIDER) {
      this.#invokeProvider = provider
      this.#invoke.setAttribute(GEN_AI.providerName, provider)
    }
    if (this.#chat && this.#chat.provider === UNKNOWN_PROVIDER) {
      this.#chat.provider = provider
      this.#chat.span.setAttribute(GEN_AI.providerName, provider)
    }
  }

  /** Ends every open span now (the instrumentation is being removed). */
  close(): void {
    // A call still running has no span yet (it gets one with its result): it gets one now, ended
    // with the rest, rather than vanishing from the trace.
    if (this.#invoke) for (const [id, call] of this.#tools) if (!call.span) this.#openTool(id, call)
    this.#endSend({})
    this.#pendingUser = undefined
  }

  // --- sends ---------------------------------------------------------------------------------------

  #onState(state: unknown, previous: unknown): void {
    if (state === 'deleted') {
      if (this.#invoke) this.#endSend({})
      // Nothing of a deleted session goes on: the calls it waited on are forgotten with it.
      this.#carried.clear()
      this.#pendingUser = undefined
      return
    }
    if (state === 'active' && previous !== 'active') {
      if (this.#invoke) this.#endSend({})
      this.#startSend()
      return
    }
    if (typeof state !== 'string' || !ENDING_STATES.has(state) || !this.#invoke) return
    // The kernel announces the wait after this state change; the span ends now, so it is noted here.
    if (state === 'waiting_input') this.#noteInputRequired()
    this.#endSend(
      state === 'aborted' ? { aborted: true } : state === 'waiting_input' ? { waiting: true } : {},
    )
  }

  /** The running send stopped for input: once per send, on `invoke_agent`. */
  #noteInputRequired(): void {
    if (!this.#invoke || this.#inputRequired) return
    this.#inputRequired = true
    this.#invoke.addEvent(EVENT.inputRequired)
  }

  #startSend(): void {
    const { tracer, recordContent } = this.#telemetry
    this.#invokeStart = now()
    this.#invokeProvider = this.#telemetry.provider()
    this.#stepSeen = false
    this.#inputRequired = false
    this.#lastStopReason = undefined
    // Until a request names them, a send continues with the profile and model of this session's
    // last request seen (a send may make none: an approved call aborted while its tool runs).
    const name = this.#agentName ?? this.#lastAgent
    this.#named = name !== undefined
    this.#namedProvisional = this.#agentName === undefined && this.#lastAgent !== undefined
    this.#model = this.#lastModel
    this.#modelProvisional = this.#lastModel !== undefined
    this.#usage = emptyUsage()
    this.#hasUsage = false
    this.#lastReply = undefined
    this.children.clear()
    const attributes: Attributes = {
      [GEN_AI.operationName]: OPERATION.invokeAgent,
      [GEN_AI.providerName]: this.#invokeProvider,
      [GEN_AI.conversationId]: this.sessionId,
    }
    if (name !== undefined) attributes[GEN_AI.agentName] = name
    if (this.#model !== undefined) attributes[GEN_AI.requestModel] = this.#model
    if (recordContent && this.#pendingUser) {
      attributes[GEN_AI.inputMessages] = inputMessagesJson([this.#pendingUser])
    }
    this.#stepInput = this.#pendingUser
    this.#pendingUser = undefined
    // Calls answered in this send (approved, or a sub-agent resumed) run from its start.
    for (const [id, name] of this.#carried) {
      this.#tools.set(id, { name, start: this.#invokeStart, input: undefined, span: undefined })
    }
    this.#carried.clear()
    const parent = this.#parent ? this.#parent() : contextApi.active()
    const invoke = tracer.startSpan(
      name === undefined ? OPERATION.invokeAgent : `${OPERATION.invokeAgent} ${name}`,
      { kind: SpanKind.INTERNAL, attributes, startTime: toHrTime(this.#invokeStart) },
      parent,
    )
    this.#invoke = invoke
  }

  #endSend(outcome: Outcome): void {
    const invoke = this.#invoke
    const failure = outcome.aborted
      ? ABORTED
      : outcome.error !== undefined
        ? errorTypeOf(outcome.error)
        : undefined
    this.#settleChat(failure)
    const waiting =
      failure === undefined && (outcome.waiting === true || (outcome.result?.pending?.length ?? 0) > 0)
    for (const [id, call] of this.#tools) {
      // A call waiting for input goes on in the next send. One that never ran (it waits for an
      // approval or a client's answer) has no span; a sub-agent that ran until it stopped for an
      // answer ends its span here and gets a new one then.
      if (waiting) this.#carried.set(id, call.name)
      this.#closeTool(id, call, failure)
    }
    if (!invoke) return
    this.#invoke = undefined
    const end = now()
    const { recordContent } = this.#telemetry
    const result = outcome.result
    if (result?.usage) this.#setUsage(invoke, result.usage)
    else if (this.#hasUsage) this.#setUsage(invoke, this.#usage)
    // A send that stopped for input ends before its `done`: its last request says why it stopped.
    const stopReason = result?.stopReason ?? (outcome.waiting ? this.#lastStopReason : undefined)
    if (typeof stopReason === 'string') invoke.setAttribute(GEN_AI.finishReasons, [stopReason])
    if (recordContent) {
      const reply = lastAgentMessage(result?.messages) ?? this.#lastReply
      if (reply) invoke.setAttribute(GEN_AI.outputMessages, outputMessagesJson(reply, result?.stopReason))
    }
    if (failure !== undefined) {
      invoke.setAttribute(GEN_AI.errorType, failure)
      const quotesReply = !recordContent && quotesContent(outcome.error)
      invoke.setStatus({
        code: SpanStatusCode.ERROR,
        message: outcome.aborted
          ? 'The send was aborted.'
          : quotesReply
            ? CONTENT_LEFT_OUT
            : errorMessageOf(outcome.error),
      })
      if (outcome.error !== undefined)
        invoke.recordException(
          quotesReply
            ? { code: 'OUTPUT_INVALID', name: errorNameOf(outcome.error), message: CONTENT_LEFT_OUT }
            : exceptionOf(outcome.error),
          toHrTime(end),
        )
    }
    invoke.end(toHrTime(end))
    this.#recordDuration(
      OPERATION.invokeAgent,
      this.#invokeProvider,
      this.#model,
      end - this.#invokeStart,
      failure,
    )
    this.#stepInput = undefined
    this.#lastReply = undefined
  }

  // --- model requests ------------------------------------------------------------------------------

  #startChat(event: ObservedEvent): void {
    if (!this.#invoke) return
    this.#settleChat(undefined)
    const { tracer, recordContent } = this.#telemetry
    const model = stringOr(event.model, '')
    // The configured name wins; otherwise the adapter of this request (profiles may differ).
    const provider =
      this.#telemetry.configuredProvider ??
      (typeof event.provider === 'string' ? providerNameOf(event.provider) : this.#telemetry.provider())
    const agent = typeof event.agent === 'string' ? event.agent : undefined
    if (agent !== undefined) this.#lastAgent = agent
    if (model !== '') this.#lastModel = model
    if ((this.#model === undefined || this.#modelProvisional) && model !== '') {
      this.#model = model
      this.#modelProvisional = false
      this.#invoke.setAttribute(GEN_AI.requestModel, model)
    }
    if ((!this.#named || this.#namedProvisional) && agent !== undefined) {
      this.#named = true
      this.#namedProvisional = false
      this.#invoke.setAttribute(GEN_AI.agentName, agent)
      this.#invoke.updateName(`${OPERATION.invokeAgent} ${agent}`)
    }
    // `invoke_agent` is the provider of the send's first request (the profile it runs with may use
    // another adapter than the agent's); a later step only fills in an unknown one.
    const firstStep = !this.#stepSeen
    this.#stepSeen = true
    if (
      provider !== UNKNOWN_PROVIDER &&
      provider !== this.#invokeProvider &&
      (firstStep || this.#invokeProvider === UNKNOWN_PROVIDER)
    ) {
      this.#invokeProvider = provider
      this.#invoke.setAttribute(GEN_AI.providerName, provider)
    }
    const attributes: Attributes = {
      [GEN_AI.operationName]: OPERATION.chat,
      [GEN_AI.providerName]: provider,
      [GEN_AI.conversationId]: this.sessionId,
    }
    if (model !== '') attributes[GEN_AI.requestModel] = model
    if (recordContent && this.#stepInput)
      attributes[GEN_AI.inputMessages] = inputMessagesJson([this.#stepInput])
    this.#stepInput = undefined
    const start = now()
    const span = tracer.startSpan(
      model === '' ? OPERATION.chat : `${OPERATION.chat} ${model}`,
      { kind: SpanKind.CLIENT, attributes, startTime: toHrTime(start) },
      trace.setSpan(contextApi.active(), this.#invoke),
    )
    this.#chat = {
      span,
      start,
      model,
      provider,
      end: undefined,
      stopReason: undefined,
      failed: false,
      reply: undefined,
    }
  }

  #finishChat(event: ObservedEvent): void {
    const chat = this.#chat
    if (!chat || chat.end !== undefined) return
    chat.end = now()
    chat.stopReason = typeof event.stopReason === 'string' ? event.stopReason : undefined
    chat.failed = chat.stopReason === 'error' || chat.stopReason === 'aborted'
    const usage = event.usage as ObservedUsage | undefined
    if (usage) {
      this.#setUsage(chat.span, usage)
      this.#addUsage(usage)
      this.#onUsage?.(usage)
      this.#recordTokens(chat, usage)
    }
    if (chat.stopReason !== undefined && !chat.failed) {
      this.#lastStopReason = chat.stopReason
      chat.span.setAttribute(GEN_AI.finishReasons, [chat.stopReason])
    }
    // A reply is persisted (and shown as a `message` event) right after `step-finish`; a failure is
    // named by the `error` event that ends the send. Either settles the span, at this end time.
    if (!chat.failed && !this.#telemetry.recordContent) this.#settleChat(undefined)
  }

  /** Ends the current model request's span (at its `step-finish` time when there was one). */
  #settleChat(failure: string | undefined): void {
    const chat = this.#chat
    if (!chat) return
    this.#chat = undefined
    const end = chat.end ?? now()
    // A failed request is named by the send's failure; one cut short (no `step-finish`) takes the
    // send's failure when there is one.
    let errorType: string | undefined
    if (chat.failed) errorType = failure ?? (chat.stopReason === 'aborted' ? ABORTED : OTHER_ERROR)
    else if (chat.end === undefined) errorType = failure
    if (this.#telemetry.recordContent && chat.reply) {
      chat.span.setAttribute(GEN_AI.outputMessages, outputMessagesJson(chat.reply, chat.stopReason))
    }
    if (errorType !== undefined) {
      chat.span.setAttribute(GEN_AI.errorType, errorType)
      chat.span.setStatus({ code: SpanStatusCode.ERROR })
    }
    chat.span.end(toHrTime(end))
    this.#recordDuration(OPERATION.chat, chat.provider, chat.model, end - chat.start, errorType)
  }

  // --- messages ------------------------------------------------------------------------------------

  #onMessage(message: ObservedMessage | undefined): void {
    if (!message) return
    const { recordContent } = this.#telemetry
    switch (message.type) {
      case 'user':
        if (recordContent && !this.#invoke) this.#pendingUser = message
        return
      case 'agent': {
        if (!this.#invoke) return
        this.#lastReply = message
        const chat = this.#chat
        if (chat) {
          chat.reply = message
          if (chat.end !== undefined && !chat.failed) this.#settleChat(undefined)
        }
        if (message.incomplete !== true && Array.isArray(message.content)) {
          for (const block of message.content as ObservedBlock[]) {
            if (block?.type === 'tool_use' && typeof block.id === 'string') this.#startTool(block)
          }
        }
        return
      }
      case 'tool':
        if (recordContent && this.#invoke) this.#stepInput = message
        return
      default:
        return
    }
  }

  #onCompaction(message: ObservedMessage | undefined): void {
    const attributes: Attributes = { [GEN_AI.conversationId]: this.sessionId }
    const throughSeq = message?.compaction?.throughSeq
    if (typeof throughSeq === 'number') attributes['agentx.compaction.through_seq'] = throughSeq
    const usage = message?.usage
    if (typeof usage?.inputTokens === 'number') attributes[GEN_AI.inputTokens] = usage.inputTokens
    if (typeof usage?.outputTokens === 'number') attributes[GEN_AI.outputTokens] = usage.outputTokens
    // The summary was a model request too: its tokens count in the token metric.
    if (usage !== undefined) this.#recordTokens({ provider: this.#telemetry.provider(), model: '' }, usage)
    if (this.#invoke) {
      this.#invoke.addEvent(EVENT.compaction, attributes)
      return
    }
    // A manual `session.compact()` outside a send: a span of its own, so it is not lost.
    const time = toHrTime(now())
    this.#telemetry.tracer
      .startSpan(
        EVENT.compaction,
        { kind: SpanKind.INTERNAL, attributes, startTime: time },
        contextApi.active(),
      )
      .end(time)
  }

  // --- tool calls ----------------------------------------------------------------------------------

  #startTool(block: ObservedBlock): void {
    const id = block.id as string
    if (!this.#invoke || this.#tools.has(id)) return
    this.#tools.set(id, { name: stringOr(block.name, ''), start: now(), input: block.input, span: undefined })
  }

  /** The span of a call known to run, opened now (with its recorded start) if it is not open yet. */
  #openTool(id: string, call: ToolCall): Span {
    if (call.span) return call.span
    const attributes: Attributes = {
      [GEN_AI.operationName]: OPERATION.executeTool,
      [GEN_AI.toolName]: call.name,
      [GEN_AI.toolCallId]: id,
      [GEN_AI.toolType]: 'function',
      [GEN_AI.conversationId]: this.sessionId,
    }
    if (this.#telemetry.recordContent && call.input !== undefined)
      attributes[GEN_AI.toolArguments] = contentText(call.input ?? null)
    const parent = this.#invoke ? trace.setSpan(contextApi.active(), this.#invoke) : contextApi.active()
    call.span = this.#telemetry.tracer.startSpan(
      `${OPERATION.executeTool} ${call.name}`,
      { kind: SpanKind.INTERNAL, attributes, startTime: toHrTime(call.start) },
      parent,
    )
    return call.span
  }

  #endTool(event: ObservedEvent): void {
    const id = event.toolUseId
    if (typeof id !== 'string') return
    const call = this.#tools.get(id)
    if (!call) {
      // Answered without running (the user replied with text instead): nothing carries over.
      this.#carried.delete(id)
      return
    }
    const span = this.#openTool(id, call)
    this.#tools.delete(id)
    if (this.#telemetry.recordContent)
      span.setAttribute(GEN_AI.toolResult, contentText(toolResultValue(event.content)))
    if (event.isError === true) {
      span.setAttribute(GEN_AI.errorType, TOOL_ERROR)
      span.setStatus({
        code: SpanStatusCode.ERROR,
        // The error text may quote the input: it is content.
        ...(this.#telemetry.recordContent ? { message: contentText(toolResultValue(event.content)) } : {}),
      })
    }
    span.end(toHrTime(now()))
  }

  /** Ends a tool call that never got its result (the send ended first); one that never ran has no span. */
  #closeTool(id: string, call: ToolCall, errorType: string | undefined): void {
    this.#tools.delete(id)
    const { span } = call
    if (!span) return
    if (errorType !== undefined) {
      span.setAttribute(GEN_AI.errorType, errorType)
      span.setStatus({ code: SpanStatusCode.ERROR })
    }
    span.end(toHrTime(now()))
  }

  // --- usage and metrics ---------------------------------------------------------------------------

  /** The span events of the moment: on the running model request, else on the send. */
  #current(): Span | undefined {
    return this.#chat && this.#chat.end === undefined ? this.#chat.span : this.#invoke
  }

  #setUsage(span: Span, usage: ObservedUsage): void {
    if (typeof usage.inputTokens === 'number') span.setAttribute(GEN_AI.inputTokens, usage.inputTokens)
    if (typeof usage.outputTokens === 'number') span.setAttribute(GEN_AI.outputTokens, usage.outputTokens)
    if (typeof usage.cacheReadTokens === 'number' && usage.cacheReadTokens > 0)
      span.setAttribute(GEN_AI.cacheReadTokens, usage.cacheReadTokens)
    if (typeof usage.cacheWriteTokens === 'number' && usage.cacheWriteTokens > 0)
      span.setAttribute(GEN_AI.cacheWriteTokens, usage.cacheWriteTokens)
    if (typeof usage.reasoningTokens === 'number' && usage.reasoningTokens > 0)
      span.setAttribute(GEN_AI.reasoningTokens, usage.reasoningTokens)
  }

  #addUsage(usage: ObservedUsage): void {
    this.#hasUsage = true
    const total = this.#usage
    total.inputTokens += numberOr(usage.inputTokens, 0)
    total.outputTokens += numberOr(usage.outputTokens, 0)
    total.cacheReadTokens += numberOr(usage.cacheReadTokens, 0)
    total.cacheWriteTokens += numberOr(usage.cacheWriteTokens, 0)
    total.reasoningTokens += numberOr(usage.reasoningTokens, 0)
  }

  #recordTokens(chat: Pick<ChatStep, 'provider' | 'model'>, usage: ObservedUsage): void {
    const base: Attributes = {
      [GEN_AI.operationName]: OPERATION.chat,
      [GEN_AI.providerName]: chat.provider,
    }
    if (chat.model !== '') base[GEN_AI.requestModel] = chat.model
    if (typeof usage.inputTokens === 'number')
      this.#telemetry.tokenUsage.record(usage.inputTokens, { ...base, [GEN_AI.tokenType]: 'input' })
    if (typeof usage.outputTokens === 'number')
      this.#telemetry.tokenUsage.record(usage.outputTokens, { ...base, [GEN_AI.tokenType]: 'output' })
  }

  #recordDuration(
    operation: string,
    provider: string,
    model: string | undefined,
    milliseconds: number,
    errorType: string | undefined,
  ): void {
    const attributes: Attributes = {
      [GEN_AI.operationName]: operation,
      [GEN_AI.providerName]: provider,
    }
    if (model !== undefined && model !== '') attributes[GEN_AI.requestModel] = model
    if (errorType !== undefined) attributes[GEN_AI.errorType] = errorType
    this.#telemetry.operationDuration.record(Math.max(0, milliseconds) / 1000, attributes)
  }
}

function emptyUsage(): Required<ObservedUsage> {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 }
}

function lastAgentMessage(messages: ObservedMessage[] | undefined): ObservedMessage | undefined {
  if (!Array.isArray(messages)) return undefined
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.type === 'agent') return messages[i]
  return undefined
}

/** What a failure whose message quotes the reply says instead while content is not recorded. */
const CONTENT_LEFT_OUT =
  'The reply did not match the output schema (OUTPUT_INVALID); its details quote the reply and are left out because recordContent is off.'

/** Whether the failure's message quotes the model's reply: `OUTPUT_INVALID` names the keys and values it found. */
function quotesContent(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === 'OUTPUT_INVALID'
}

function errorNameOf(error: unknown): string {
  const name = (error as { name?: unknown } | undefined)?.name
  return typeof name === 'string' && name !== '' ? name : 'Error'
}

function exceptionOf(error: unknown): Error | string {
  return error instanceof Error ? error : errorMessageOf(error)
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback
}
