import type { AdapterMessage } from '../contracts/agent-adapter.js'
import type { AnyMessage, ContentBlock } from '../contracts/messages.js'
import { SessionBusyError } from '../errors/session-busy-error.js'
import { SessionStateError } from '../errors/session-state-error.js'
import { ValidationError } from '../errors/validation-error.js'
import type { PendingToolCall, Tool } from '../tools/tool.js'
import { addUsage, emptyUsage } from '../util/token-usage.js'
import {
  checkAnswers,
  findWaitingBatch,
  type PendingAnswer,
  pendingCalls,
  repliedInstead,
  type WaitingBatch,
} from './approvals.js'
import { type Continuation, continuationForRetry } from './continuation.js'
import { handoffTarget } from './handoffs.js'
import { compactBeforeRequest, compactionFor } from './compaction.js'
import { type ModelRequestContext, type ResponseOutcome, runModelRequest } from './model-request.js'
import {
  checkAdapterOptions,
  partialAgentName,
  profileFor,
  stampAgentName,
  streamOptionsFor,
  toolsFor,
} from './send-profile.js'
import { isAbort, type SendRun, type SessionCore } from './session-core.js'
import type { SendResult, SessionEvent } from './session-events.js'
import { checkAgainst, type SchemaLike } from '../tools/schema.js'
import { closeWaitingChildren } from './subagents.js'
import { type BatchContext, resultEvent, runBatch, toolCallsOf } from './tool-step.js'
import { isAgentTool } from '../tools/agent-tool.js'

const SUMMARY_LENGTH = 100

/** The protected hooks of `BaseSession` that the loop calls. */
export interface SendHooks {
  transformMessage(message: AnyMessage): AnyMessage
  extractSessionId(event: AdapterMessage): string | undefined
}

/**
 * One send, as the loop of DESIGN §7: the opening (a user message, answers to pending calls, or a
 * retry), then model request → tool step until the model stops calling tools, `maxSteps`, or a
 * call must wait for the application; then `idle` or `waiting_input`. A failure keeps what was
 * streamed and ends in `error` or `aborted`; a send refused before its first write (bad answers,
 * nothing to retry, held by another process) leaves the session as it was.
 */
export async function runSend(core: SessionCore, run: SendRun, hooks: SendHooks): Promise<SendResult> {
  const { options, emit } = run
  const signal = run.controller.signal
  let sendUsage = emptyUsage()
  let started = false
  try {
    // Several processes on one store: claim the session (SessionBusyError when another process
    // runs a send of it) and take in what others appended since this object last looked.
    if (core.lease) {
      await core.lease.claim()
      await core.refresh()
    }
    await core.history.load()
    core.throwIfAborted(signal)
    let profile = profileFor(core, options.agent ?? core.data.activeAgent)
    let tools = toolsFor(core, profile, options)
    // Everything that can refuse the send happens before the first write or state change.
    const batch = run.input.kind === 'retry' ? undefined : await waitingBatch(core, tools, signal)
    const answers = run.input.kind === 'answers' ? checkAnswers(run.input.answers, batch) : undefined
    const retryFrom = run.input.kind === 'retry' ? retryContinuation(core) : undefined
    checkAdapterOptions(core, { tools, options, profile })
    started = true
    if (retryFrom !== undefined) core.setState('active', emit)
    const opening = retryFrom ?? (await open(core, run, tools, signal, batch, answers))
    let { prompt, historyEnd } = 'waiting' in opening ? { prompt: '', historyEnd: 0 } : opening
    const maxSteps = options.maxSteps ?? core.options.maxSteps
    const context = requestContext(core, run, signal, hooks)
    let last: AnyMessage | undefined
    let pending: PendingToolCall[] = 'waiting' in opening ? opening.waiting : []
    for (let step = 1; pending.length === 0; step++) {
      context.adapter = profile.adapter ?? core.adapter
      const request = { historyEnd, tools, options, signal, profile, adapter: context.adapter }
      let streamOptions = streamOptionsFor(core, request)
      const summary = await compactBeforeRequest(core, run, {
        prompt,
        historyEnd,
        request: streamOptions,
        adapter: context.adapter,
        settings: compactionFor(core, profile),
      })
      if (summary !== undefined) {
        if (summary.usage) sendUsage = addUsage(sendUsage, summary.usage)
        streamOptions = streamOptionsFor(core, request)
      }
      emit({
        type: 'step-start',
        step,
        agent: profile.name,
        model: streamOptions.model,
        provider: context.adapter.getName(),
      })
      let outcome: ResponseOutcome
      try {
        outcome = await runModelRequest(context, prompt, streamOptions, core.history.nextSeq())
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
      last = hooks.transformMessage(stampAgentName(core, outcome.message, profile))
      await core.write(core.append(last, run))
      const calls = toolCallsOf(last)
      if (calls.length === 0) break
      const stepContext = batchContext(core, run, signal)
      // A call that needs approval or is a client tool holds the whole batch (DESIGN §10.1).
      pending = await pendingCalls(calls, tools, stepContext)
      if (pending.length > 0) break
      const batchOutcome = await runBatch(calls, tools, stepContext)
      if (batchOutcome.kind === 'waiting') {
        pending = batchOutcome.pending
        break
      }
      if (batchOutcome.usage) sendUsage = addUsage(sendUsage, batchOutcome.usage)
      core.throwIfAborted(signal)
      historyEnd = core.history.messages.length
      await core.write(core.append(core.newMessage('tool', batchOutcome.results), run))
      prompt = batchOutcome.results
      // A `transfer_to_<name>` call hands the same send over to that profile (DESIGN §10.3).
      const target = handoffTarget(calls, profile)
      if (target !== undefined) {
        emit({ type: 'handoff', from: profile.name, to: target })
        profile = profileFor(core, target)
        tools = toolsFor(core, profile, options)
        core.data.activeAgent = target
      }
      if (step >= maxSteps) break
    }

    core.data.lastActivity = new Date().toISOString()
    const text = textOf(last?.content ?? '')
    // Structured output is checked before the send counts as done: an invalid reply stays stored
    // and the send fails with OUTPUT_INVALID (state `error`, so `retry()` can ask again).
    const output =
      options.output !== undefined && pending.length === 0
        ? await parseOutput(text, options.output.schema)
        : undefined
    // The last events go out once the session's record is queued (durable, in `sync` mode); from
    // then on the send is settled, so their listeners may start the next one.
    const settledEvents: SessionEvent[] = []
    core.setState(pending.length > 0 ? 'waiting_input' : 'idle', (event) => settledEvents.push(event))
    await core.write(core.queue?.saveSession(core.toSessionData()))
    run.settled = true
    for (const event of settledEvents) emit(event)
    if (pending.length > 0) emit({ type: 'input-required', pending })
    const result: SendResult = {
      messages: run.produced,
      text,
      usage: sendUsage,
      stopReason: last?.stopReason,
    }
    if (pending.length > 0) result.pending = pending
    if (output !== undefined) result.output = output.value
    emit({ type: 'done', result })
    return result
  } catch (caught) {
    const error = core.toError(caught, signal)
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
    run.settled = true
    if (core.data.state !== 'deleted') {
      // A failure before the model was called (loading history, a sync write) still ends the send in `error`.
      if (core.data.state !== 'active') core.setState('active', emit)
      core.setState(aborted ? 'aborted' : 'error', emit)
    }
    if (!aborted) emit({ type: 'error', error })
    if (core.data.state !== 'deleted') {
      core.data.lastActivity = new Date().toISOString()
      void core.queue?.saveSession(core.toSessionData())
    }
    throw error
  }
}

/** The unanswered tool batch the stored conversation ends with, if any. */
export async function waitingBatch(
  core: SessionCore,
  tools: Map<string, Tool>,
  signal: AbortSignal,
): Promise<WaitingBatch | undefined> {
  return findWaitingBatch(core.history.messages, tools, {
    sessionId: core.id,
    signal,
    children: core.options.children,
    waiting: core.data.state === 'waiting_input',
  })
}

function retryContinuation(core: SessionCore): Continuation {
  const continuation = continuationForRetry(core.history.messages)
  if (continuation === undefined) {
    throw new SessionStateError(`Session ${core.id} has no user message to retry.`, {
      state: core.data.state,
    })
  }
  return continuation
}

/**
 * The opening of a send: the results of the batch the session waits on (answered, or closed
 * because the user wrote instead), then — for content — the user message.
 */
async function open(
  core: SessionCore,
  run: SendRun,
  tools: Map<string, Tool>,
  signal: AbortSignal,
  batch: WaitingBatch | undefined,
  answers: Map<string, PendingAnswer> | undefined,
): Promise<Continuation | { waiting: PendingToolCall[] }> {
  const { emit } = run
  if (run.input.kind === 'answers' && batch !== undefined && answers !== undefined) {
    core.setState('active', emit)
    core.data.lastActivity = new Date().toISOString()
    void core.queue?.saveSession(core.toSessionData())
    const outcome = await runBatch(batch.calls, tools, batchContext(core, run, signal), answers)
    // A sub-agent stopped again for another answer: the batch keeps waiting.
    if (outcome.kind === 'waiting') return { waiting: outcome.pending }
    core.throwIfAborted(signal)
    const historyEnd = core.history.messages.length
    await core.write(core.append(core.newMessage('tool', outcome.results), run))
    return { prompt: outcome.results, historyEnd }
  }
  const content = (run.input as { content: string | ContentBlock[] }).content
  if (batch !== undefined) {
    await closeWaitingChildren(core.options.children, core.id, batch.calls, (call) =>
      isAgentTool(tools.get(call.name)),
    )
    const closed = repliedInstead(batch)
    for (const result of closed) emit(resultEvent(result))
    await core.write(core.append(core.newMessage('tool', closed), run))
  }
  const user = core.newMessage('user', content)
  if (core.data.summary === '') core.data.summary = summarize(content)
  const userSaved = core.append(user, run)
  // In `sync` durability the user message is shown once durable: `state: active` follows it then.
  const shownLater: SessionEvent[] = []
  const sync = core.options.durability === 'sync' && core.queue !== undefined
  core.setState('active', sync ? (event) => shownLater.push(event) : emit)
  core.data.lastActivity = user.timestamp
  await beforeModel(core, user, userSaved, run, shownLater)
  return { prompt: content, historyEnd: core.history.messages.length - 1 }
}

/**
 * Saves the session as `active`; in `sync` durability waits for the user message and the
 * session. A send that fails here never reached the model: its user message is taken back unless
 * it already became durable, so it is never written later behind the caller's back.
 */
async function beforeModel(
  core: SessionCore,
  user: AnyMessage,
  userSaved: Promise<void> | undefined,
  run: SendRun,
  shownLater: SessionEvent[],
): Promise<void> {
  const sessionSaved = core.queue?.saveSession(core.toSessionData())
  if (core.options.durability !== 'sync' || core.queue === undefined) return
  try {
    try {
      await core.write(userSaved)
    } finally {
      for (const event of shownLater) run.emit(event)
    }
    await core.write(sessionSaved)
  } catch (error) {
    if ((await core.queue.retract(user)) === 'removed') {
      core.history.removeLast(user.id)
      run.produced.pop()
    }
    throw error
  }
}

function requestContext(
  core: SessionCore,
  run: SendRun,
  signal: AbortSignal,
  hooks: SendHooks,
): ModelRequestContext {
  const context: ModelRequestContext = {
    sessionId: core.id,
    adapter: core.adapter,
    signal,
    retry: core.options.retry,
    checkpointIntervalMs: core.options.checkpointIntervalMs,
    logger: core.options.logger,
    emit: run.emit,
    sink: run.sink,
    extractSessionId: (event) => hooks.extractSessionId(event),
    onProviderSessionId: (id) => {
      core.resumeAdapter = context.adapter
      if (id === core.data.providerSessionId) return
      core.data.providerSessionId = id
      void core.queue?.saveSession(core.toSessionData())
    },
    onUsage: (usage) => {
      core.usage = addUsage(core.usage, usage)
    },
    saveCheckpoint: (message) => core.write(core.queue?.saveMessage(message)),
    keepPartial: (message) => {
      const kept = core.history.append({ ...message, incomplete: true, ...partialAgentName(core) })
      const shown = core.show(kept, core.queue?.saveMessage(kept), run.emit)
      // The send fails with the model's error either way; a failed write is reported by the queue.
      return core.options.durability === 'sync' ? shown?.catch(() => undefined) : undefined
    },
    toError: (caught) => core.toError(caught, signal),
  }
  return context
}

function batchContext(core: SessionCore, run: SendRun, signal: AbortSignal): BatchContext {
  return {
    sessionId: core.id,
    signal,
    messages: core.history.messages,
    emit: run.emit,
    children: core.options.children,
  }
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

/**
 * The structured output of a reply: its text parsed as JSON (a Markdown code fence around it is
 * tolerated) and checked against the schema. Throws a ValidationError of code `OUTPUT_INVALID`.
 */
async function parseOutput(text: string, schema: SchemaLike): Promise<{ value: unknown }> {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/.exec(text)
  let parsed: unknown
  try {
    parsed = JSON.parse(fenced ? fenced[1]! : text)
  } catch (cause) {
    throw new ValidationError(
      'The reply is not the JSON the output schema asks for; it is stored as it is.',
      {
        code: 'OUTPUT_INVALID',
        cause,
      },
    )
  }
  const checked = await checkAgainst(schema, parsed)
  if (!checked.ok) {
    throw new ValidationError(
      `The reply does not match the output schema (${checked.issues.join('; ')}); it is stored as it is.`,
      { code: 'OUTPUT_INVALID' },
    )
  }
  return { value: checked.value }
}
