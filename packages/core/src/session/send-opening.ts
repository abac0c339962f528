import type { AnyMessage, ContentBlock, TokenUsage, ToolUseBlock } from '../contracts/messages.js'
import { textOf } from '../util/content-text.js'
import { SessionStateError } from '../errors/session-state-error.js'
import type { PendingToolCall, Tool } from '../tools/tool.js'
import { isAgentTool } from '../tools/agent-tool.js'
import { type PendingAnswer, pendingCalls, repliedInstead, type WaitingBatch } from './approvals.js'
import { type Continuation, continuationForRetry } from './continuation.js'
import type { SendRun, SessionCore } from './session-core.js'
import type { SendOptions } from './session.js'
import type { SessionEvent } from './session-events.js'
import { closeWaitingChildren } from './subagents.js'
import { type BatchContext, resultEvent, runBatch } from './tool-step.js'

// The opening of a send (DESIGN §7): a retry from the last user message, or the results of the
// batch the session waits on, then the user message — stored before the model is asked.

const SUMMARY_LENGTH = 100

/**
 * Where the send's first model request starts (`prompt`, `historyEnd`), with the calls of the
 * batch it answered; or the calls still waiting (a sub-agent asked again).
 */
/**
 * How a send opens: the prompt of its first request, or (answers that left a sub-agent waiting)
 * the calls it still waits on; `usage` is what answering took (sub-agents that ran on).
 */
export type Opening = ((Continuation & { answered?: ToolUseBlock[] }) | { waiting: PendingToolCall[] }) & {
  usage?: TokenUsage
}

/** Refuses a `retry()` unless the last send failed, was aborted or was interrupted (DESIGN §10.2). */
export function assertRetryable(core: SessionCore): void {
  const state = core.data.state
  if (state !== 'error' && state !== 'aborted' && state !== 'interrupted') {
    throw new SessionStateError(
      `retry() continues a send that failed, was aborted or interrupted; session ${core.id} is '${state}'.`,
      { state },
    )
  }
}

export function retryContinuation(core: SessionCore): Continuation {
  const continuation = continuationForRetry(core.history.messages, core.retryAnswered)
  if (continuation === undefined) {
    const asked = core.history.messages.some((message) => message.type === 'user')
    throw new SessionStateError(
      asked
        ? // The failed send's reply was stored after all (a write that landed after the send gave up on it).
          `Session ${core.id} has nothing to retry: its last message is already answered by a complete reply; send the next message instead.`
        : `Session ${core.id} has no user message to retry.`,
      { state: core.data.state },
    )
  }
  return continuation
}

/**
 * The opening of a send: the results of the batch the session waits on (answered, or closed
 * because the user wrote instead), then — for content — the user message. An answered batch
 * comes back with its calls (`answered`), so that a handoff among them takes effect.
 */
export async function openSend(
  core: SessionCore,
  run: SendRun,
  tools: Map<string, Tool>,
  signal: AbortSignal,
  batch: WaitingBatch | undefined,
  answers: Map<string, PendingAnswer> | undefined,
): Promise<Opening> {
  const { emit } = run
  if (run.input.kind === 'answers' && batch !== undefined && answers !== undefined) {
    core.setState('active', emit)
    core.data.lastActivity = new Date().toISOString()
    // In `sync` durability the store says `active` before an approved tool runs: a crash while it
    // runs leaves the send `interrupted` (to retry), not the calls pending as if never answered.
    await core.write(core.queue?.saveSession(core.toSessionData()))
    const context = batchContext(core, run, signal)
    const outcome = await runBatch(batch.calls, tools, context, answers)
    const usage = outcome.usage === undefined ? {} : { usage: outcome.usage }
    if (outcome.kind === 'waiting') {
      // A sub-agent stopped (again) for an answer: the batch keeps waiting, and what it waits on is
      // what the store says — the sub-agents' calls and the batch's own calls that wait, which are
      // asked again (their answers take effect when the whole batch runs; none is stored before).
      return { waiting: await pendingCalls(batch.calls, tools, context), ...usage }
    }
    const historyEnd = core.history.messages.length
    // Stored also when aborted while the tools ran: each answered call keeps its result.
    await core.write(core.append(core.newMessage('tool', outcome.results), run))
    core.throwIfAborted(signal)
    return { prompt: outcome.results, historyEnd, answered: batch.calls, ...usage }
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
  const stateEvents: SessionEvent[] = []
  core.setState('active', (event) => stateEvents.push(event))
  core.data.lastActivity = user.timestamp
  // The store says `active` before it holds the user message: a process that dies in between
  // leaves the send `interrupted` (to retry), never an unanswered message in a session stored `idle`.
  const sessionSaved = core.queue?.saveSession(core.toSessionData())
  const userSaved = core.append(user, run)
  // `state: active` follows the user message; in `sync` durability both are shown once durable.
  const sync = core.options.durability === 'sync' && core.queue !== undefined
  if (!sync) for (const event of stateEvents) emit(event)
  await beforeModel(core, user, { userSaved, sessionSaved }, run, sync ? stateEvents : [])
  return { prompt: content, historyEnd: core.history.messages.length - 1 }
}

/**
 * In `sync` durability, waits for the session saved as `active` and the user message. A send that
 * fails here never reached the model: its user message is taken back unless it already became
 * durable, so it is never written later behind the caller's back.
 */
async function beforeModel(
  core: SessionCore,
  user: AnyMessage,
  {
    userSaved,
    sessionSaved,
  }: { userSaved: Promise<void> | undefined; sessionSaved: Promise<void> | undefined },
  run: SendRun,
  shownLater: SessionEvent[],
): Promise<void> {
  if (core.options.durability !== 'sync' || core.queue === undefined) return
  try {
    try {
      await core.write(userSaved)
    } finally {
      for (const event of shownLater) run.emit(event)
    }
    await core.write(sessionSaved)
  } catch (error) {
    const outcome = await core.queue.retract(user)
    if (outcome !== 'durable') {
      core.history.removeLast(user.id)
      run.produced.pop()
    }
    // The store may have committed it and lost the answer: the next send looks before it writes.
    if (outcome === 'uncertain') core.unsure = user
    throw error
  }
}

/** What a tool step needs of the session and the send. */
export function batchContext(core: SessionCore, run: SendRun, signal: AbortSignal): BatchContext {
  return {
    sessionId: core.id,
    signal,
    // A copy: a tool that changes what it was given cannot change the session's history.
    messages: core.history.snapshot(),
    emit: run.emit,
    children: core.options.children,
  }
}

/** The session's `summary` from its first user message: whitespace collapsed, at most 100 characters. */
function summarize(content: string | ContentBlock[]): string {
  const text = textOf(content).replace(/\s+/g, ' ').trim()
  const characters = Array.from(text)
  return characters.length > SUMMARY_LENGTH ? `${characters.slice(0, SUMMARY_LENGTH - 1).join('')}…` : text
}

/**
 * The options of a `retry()`: those of the send that failed (in this process), without its signal
 * and its profile (the retry runs the profile that answered last), overridden by `given`.
 */
export function retryOptions(failed: SendOptions | undefined, given: SendOptions): SendOptions {
  if (failed === undefined) return given
  const { signal: _signal, agent: _agent, ...repeated } = failed
  return { ...repeated, ...given }
}
