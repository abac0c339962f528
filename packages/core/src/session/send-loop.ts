import type { AdapterMessage } from '../contracts/agent-adapter.js'
import type { AnyMessage, TokenUsage, ToolResultBlock, ToolUseBlock } from '../contracts/messages.js'
import { SessionBusyError } from '../errors/session-busy-error.js'
import { SessionStateError } from '../errors/session-state-error.js'
import { ValidationError } from '../errors/validation-error.js'
import { parseOutput } from '../tools/structured-output.js'
import type { PendingToolCall, Tool } from '../tools/tool.js'
import { textOf } from '../util/content-text.js'
import { jsonEqual } from '../util/json-equal.js'
import { addUsage, emptyUsage } from '../util/token-usage.js'
import { checkAnswers, findWaitingBatch, pendingCalls, type WaitingBatch } from './approvals.js'
import { compactBeforeRequest, compactionFor } from './compaction.js'
import { handoffTarget } from './handoffs.js'
import { type ModelRequestContext, type ResponseOutcome, runModelRequest } from './model-request.js'
import { assertRetryable, batchContext, type Opening, openSend, retryContinuation } from './send-opening.js'
import { leavesOutReply } from './continuation.js'
import {
  checkAdapterOptions,
  defaultModelOf,
  profileFor,
  retryAgent,
  stampAgentName,
  streamOptionsFor,
  toolsFor,
  withAgentName,
} from './send-profile.js'
import { isAbort, type SendRun, type SessionCore } from './session-core.js'
import type { SendResult, SessionEvent } from './session-events.js'
import { deepFreeze } from './session-history.js'
import { isDeletedError } from './session-lease.js'
import { refresh, settleUnsure } from './session-sync.js'
import { runBatch, toolCallsOf } from './tool-step.js'

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
      await refresh(core)
      // Stored `active`, yet the lease was free: a send of a process that died (its lease was still
      // live when this agent started, so initialize() left it). It was interrupted.
      if (core.data.state === 'active') core.data.state = 'interrupted'
      if (run.input.kind === 'retry') assertRetryable(core)
    }
    await core.history.load()
    // The user message of a send that failed on its write may be in the store all the same: it is
    // taken in before anything is written. The same content sent again is answered, not repeated.
    const resent = resentMessage(core, await settleUnsure(core), run)
    core.throwIfAborted(signal)
    // Everything that can refuse the send happens before the first write or state change.
    const retryFrom = run.input.kind === 'retry' || resent !== undefined ? retryContinuation(core) : undefined
    // A retry runs the profile that answered the failed request (its kept reply names it).
    const retried = retryFrom === undefined ? undefined : retryAgent(core, retryFrom)
    let profile =
      options.agent === undefined
        ? profileFor(core, retried ?? core.data.activeAgent, true)
        : profileFor(core, options.agent)
    let tools = toolsFor(core, profile, options)
    const batch = retryFrom !== undefined ? undefined : await waitingBatch(core, tools, signal)
    const answers = run.input.kind === 'answers' ? checkAnswers(run.input.answers, batch) : undefined
    checkAdapterOptions(core, { tools, options, profile })
    started = true
    // A retry leaves every reply after its starting point out of the history; the provider session
    // id may be one of theirs (a reply refused as structured output, a tool call whose tool never
    // ran before a crash), so the first request replays the history instead of resuming from it.
    const replayFirst = retryFrom !== undefined && leavesOutReply(core.history.messages, retryFrom)
    core.retryAnswered = false
    if (resent !== undefined) {
      run.produced.push(resent)
      emit({ type: 'message', message: resent })
    }
    if (retryFrom !== undefined) {
      core.setState('active', emit)
      core.data.lastActivity = new Date().toISOString()
      await core.write(core.queue?.saveSession(core.toSessionData()))
    }
    const opening: Opening = retryFrom ?? (await openSend(core, run, tools, signal, batch, answers))
    if (opening.usage) sendUsage = addUsage(sendUsage, opening.usage)
    let { prompt, historyEnd } = 'waiting' in opening ? { prompt: '', historyEnd: 0 } : opening
    const maxSteps = options.maxSteps ?? core.options.maxSteps
    const context = requestContext(core, run, signal, hooks)
    let last: AnyMessage | undefined
    let pending: PendingToolCall[] = 'waiting' in opening ? opening.waiting : []
    // A `transfer_to_<name>` call hands the same send over to that profile (DESIGN §10.3).
    const handOff = (calls: readonly ToolUseBlock[]): void => {
      const target = handoffTarget(calls, profile)
      if (target === undefined) return
      emit({ type: 'handoff', from: profile.name, to: target })
      profile = profileFor(core, target)
      tools = toolsFor(core, profile, options)
      core.data.activeAgent = target
    }
    if (!('waiting' in opening) && opening.answered !== undefined) handOff(opening.answered)
    for (let step = 1; pending.length === 0; step++) {
      context.adapter = profile.adapter ?? core.adapter
      context.agentName = core.options.profiles === undefined ? undefined : profile.name
      const request = {
        historyEnd,
        tools,
        options,
        signal,
        profile,
        adapter: context.adapter,
        replay: replayFirst && step === 1,
      }
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
        model: streamOptions.model || defaultModelOf(context.adapter),
        provider: context.adapter.getName(),
      })
      let outcome: ResponseOutcome
      const failed: { usage?: TokenUsage } = {}
      try {
        outcome = await runModelRequest(context, prompt, streamOptions, core.history.nextSeq(), failed)
      } catch (error) {
        const stopReason = signal.aborted ? 'aborted' : 'error'
        emit(
          failed.usage
            ? { type: 'step-finish', step, usage: failed.usage, stopReason }
            : { type: 'step-finish', step, stopReason },
        )
        throw error
      }
      // The usage shown is the reply's own (frozen): a listener cannot change what is stored.
      emit(
        outcome.usage
          ? {
              type: 'step-finish',
              step,
              usage: deepFreeze(outcome.usage),
              stopReason: outcome.message.stopReason,
            }
          : { type: 'step-finish', step, stopReason: outcome.message.stopReason },
      )
      if (outcome.usage) sendUsage = addUsage(sendUsage, outcome.usage)
      last = hooks.transformMessage(stampAgentName(core, outcome.message, profile))
      await core.write(core.append(last, run))
      const calls = toolCallsOf(last)
      if (calls.length === 0) break
      // Before its tools run, the session's record takes in the reply's usage: a process killed
      // while they run keeps it (the last write of the send would have stored it).
      await core.write(core.queue?.saveSession(core.toSessionData()))
      const stepContext = batchContext(core, run, signal)
      // A call that needs approval or is a client tool holds the whole batch (DESIGN §10.1).
      pending = await pendingCalls(calls, tools, stepContext)
      if (pending.length > 0) break
      const batchOutcome = await runBatch(calls, tools, stepContext)
      if (batchOutcome.usage) sendUsage = addUsage(sendUsage, batchOutcome.usage)
      if (batchOutcome.kind === 'waiting') {
        pending = batchOutcome.pending
        break
      }
      historyEnd = core.history.messages.length
      // Stored also when the send was aborted while the tools ran: every call of the stored reply
      // keeps its result (an aborted one says so), so the conversation stays one a model accepts.
      await core.write(core.append(core.newMessage('tool', batchOutcome.results), run))
      // A transfer whose result is stored takes effect, also when the send was aborted meanwhile:
      // the stored conversation and the session's agent agree, and `retry()` runs the new profile.
      handOff(transferred(calls, batchOutcome.results))
      core.throwIfAborted(signal)
      prompt = batchOutcome.results
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
    try {
      await core.write(core.queue?.saveSession(core.toSessionData()))
    } catch (error) {
      // Not stored, and never announced: the send fails from `active`, as listeners last heard.
      core.data.state = 'active'
      throw error
    }
    run.settled = true
    core.pausedTools = pending.length > 0 ? (options.tools ?? core.pausedTools) : undefined
    for (const event of settledEvents) emit(event)
    if (pending.length > 0) emit({ type: 'input-required', pending })
    const result: SendResult = {
      messages: run.produced,
      text,
      usage: sendUsage,
      // A send that answered a batch which keeps waiting made no request: the batch's own reason.
      stopReason: last?.stopReason ?? batch?.message.stopReason,
    }
    if (pending.length > 0) result.pending = pending
    if (output !== undefined) result.output = output.value
    core.failedOptions = undefined
    emit({ type: 'done', result })
    return result
  } catch (caught) {
    const error = core.toError(caught, signal)
    // Deleted by another process (found when claiming or reloading): deleted here too, nothing written.
    if (isDeletedError(error) && !started) {
      await core.markDeleted(emit)
      throw error
    }
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
    if (core.deletedWhileRunning) {
      // Deleted under the send (pruned here without leases, or gone from the store): nothing of
      // it is written any more, and the caller learns why rather than seeing an abort.
      core.deletedWhileRunning = false
      run.settled = true
      const deleted = new SessionStateError(
        `Session ${core.id} was deleted while this send ran; nothing more of it is stored.`,
        { state: 'deleted', cause: error },
      )
      emit({ type: 'error', error: deleted })
      throw deleted
    }
    const aborted = isAbort(error)
    run.settled = true
    core.retryAnswered = error instanceof ValidationError && error.code === 'OUTPUT_INVALID'
    core.failedOptions = run.options
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
function requestContext(
  core: SessionCore,
  run: SendRun,
  signal: AbortSignal,
  hooks: SendHooks,
): ModelRequestContext {
  const context: ModelRequestContext = {
    sessionId: core.id,
    adapter: core.adapter,
    agentName: undefined,
    signal,
    retry: core.options.retry,
    checkpointIntervalMs: core.options.checkpointIntervalMs,
    logger: core.options.logger,
    emit: run.emit,
    sink: run.sink,
    extractSessionId: hooks.extractSessionId,
    onProviderSessionId: (id) => {
      core.resumeAdapter = context.adapter
      if (id === core.data.providerSessionId) return
      core.data.providerSessionId = id
      void core.queue?.saveSession(core.toSessionData())
    },
    onUsage: (usage) => {
      core.usage = addUsage(core.usage, usage)
    },
    saveCheckpoint: (message) =>
      core.write(core.queue?.saveMessage(withAgentName(message, context.agentName))),
    keepPartial: (message) => {
      if (message.stopReason === 'error') run.failing = true
      const kept = core.history.append(withAgentName({ ...message, incomplete: true }, context.agentName))
      const shown = core.show(kept, core.queue?.saveMessage(kept), run.emit)
      // The send fails with the model's error either way; a failed write is reported by the queue.
      return core.options.durability === 'sync' ? shown?.catch(() => undefined) : undefined
    },
    toError: (caught) => core.toError(caught, signal),
  }
  return context
}

/**
 * The user message a failed send left in the store (`settleUnsure`) when this send repeats it: the
 * same content, and nothing after it. A send with other content goes on after that message.
 */
function resentMessage(
  core: SessionCore,
  stored: AnyMessage | undefined,
  run: SendRun,
): AnyMessage | undefined {
  const messages = core.history.messages
  const repeated =
    stored !== undefined &&
    messages[messages.length - 1] === stored &&
    run.input.kind === 'content' &&
    jsonEqual(stored.content, run.input.content)
  return repeated ? stored : undefined
}

/** The calls whose result is not an error: a transfer that was not run (aborted) hands nothing over. */
function transferred(calls: readonly ToolUseBlock[], results: readonly ToolResultBlock[]): ToolUseBlock[] {
  const failed = new Set(
    results.filter((result) => result.isError === true).map((result) => result.toolUseId),
  )
  return calls.filter((call) => !failed.has(call.id))
}
