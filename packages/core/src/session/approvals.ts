import type { AnyMessage, ToolResultBlock, ToolUseBlock } from '../contracts/messages.js'
import { ValidationError } from '../errors/validation-error.js'
import { agentToolProfile } from '../tools/agent-tool.js'
import { errorResult } from '../tools/run-tools.js'
import { checkAgainst } from '../tools/schema.js'
import type { PendingToolCall, Tool, ToolAnswer, ToolApproval } from '../tools/tool.js'
import { raceAbort } from '../util/abort.js'
import { type ChildSessions, childPending } from './subagents.js'
import { toolCallsOf } from './tool-step.js'

/** An answer to a pending call, as sent through `send`. */
export type PendingAnswer = ToolApproval | ToolAnswer

/** The batch a session waits on: the agent message whose calls have no results yet. */
export interface WaitingBatch {
  message: AnyMessage
  calls: ToolUseBlock[]
  pending: PendingToolCall[]
}

/** What a call needs before it runs: nothing (`undefined`), an approval, or the application's answer. */
async function kindOf(
  call: ToolUseBlock,
  tool: Tool | undefined,
  context: { sessionId: string; signal: AbortSignal; messages: readonly AnyMessage[] },
): Promise<PendingToolCall['kind'] | undefined> {
  if (tool === undefined) return undefined
  if (tool.execute === undefined) return 'client'
  const needsApproval = tool.needsApproval
  if (typeof needsApproval === 'function') {
    const { signal } = context
    // The check gets the input `execute` would get: parsed by the schema (coerced, defaults
    // filled), as its type says. Input the schema refuses never runs (the model is told why), so
    // there is nothing to approve. A check or schema that never settles does not outlast an abort.
    const checked = await raceAbort(
      checkAgainst(tool.inputSchema, call.input).catch(() => ({ ok: false as const })),
      signal,
    )
    if (!checked.ok) return undefined
    try {
      // The caller's context also carries the send's internals (its emitter, its child sessions);
      // the application's check gets exactly the documented ToolContext, nothing to misuse.
      const answer = await raceAbort(
        needsApproval(checked.value, {
          sessionId: context.sessionId,
          toolCallId: call.id,
          signal,
          messages: context.messages,
        }),
        signal,
      )
      return answer ? 'approval' : undefined
    } catch (error) {
      if (signal.aborted && error === signal.reason) throw error
      // The application's check failed: a person decides rather than the call running unchecked.
      return 'approval'
    }
  }
  return needsApproval === true ? 'approval' : undefined
}

/**
 * The calls of one model response that must wait (DESIGN §10.1): those of client tools and those
 * that need approval. When any must wait, no call of the batch runs.
 */
export async function pendingCalls(
  calls: ToolUseBlock[],
  tools: Map<string, Tool>,
  context: {
    sessionId: string
    signal: AbortSignal
    messages: readonly AnyMessage[]
    children?: ChildSessions | undefined
  },
): Promise<PendingToolCall[]> {
  const pending: PendingToolCall[] = []
  for (const call of calls) {
    const tool = tools.get(call.name)
    if (agentToolProfile(tool) !== undefined) {
      // An agent tool waits when its child session does (a pending call inside the sub-agent).
      if (context.children) pending.push(...(await childPending(context.children, context.sessionId, call)))
      continue
    }
    const kind = await kindOf(call, tool, context)
    if (kind !== undefined) {
      pending.push({
        toolUseId: call.id,
        name: call.name,
        input: call.input,
        kind,
        sessionId: context.sessionId,
      })
    }
  }
  return pending
}

/**
 * The batch the session waits on, derived from what is stored: the last message is an agent
 * message with tool calls and nothing answered them. Works after a restart and from any process.
 */
export async function findWaitingBatch(
  messages: readonly AnyMessage[],
  tools: Map<string, Tool>,
  context: {
    sessionId: string
    signal: AbortSignal
    children?: ChildSessions | undefined
    /** The stored state is `waiting_input`: the batch is known to wait for the application. */
    waiting?: boolean
  },
): Promise<WaitingBatch | undefined> {
  // A compaction summary written while waiting (`session.compact()`) does not answer the calls.
  let end = messages.length - 1
  while (end >= 0 && messages[end]!.compaction !== undefined) end--
  const last = messages[end]
  if (last === undefined || last.type !== 'agent' || last.incomplete) return undefined
  const calls = toolCallsOf(last)
  if (calls.length === 0) return undefined
  const pending = await pendingCalls(calls, tools, { ...context, messages: Object.freeze(messages.slice()) })
  if (pending.length === 0 && context.waiting === true) {
    // The session waits, yet none of the tools known now makes a call wait: the calls were made
    // with tools given to that send only (`send(…, { tools })`), or to a session object of an
    // earlier process. A call whose tool is not known here is the application's to answer.
    for (const call of calls) {
      if (tools.has(call.name)) continue
      pending.push({
        toolUseId: call.id,
        name: call.name,
        input: call.input,
        kind: 'client',
        sessionId: context.sessionId,
      })
    }
  }
  return { message: last, calls, pending }
}

/**
 * Checks answers against the batch: every pending call answered exactly once, with the kind of
 * answer it needs, and no answer for anything else. Throws {@link ValidationError}; nothing has
 * been written when it does.
 */
export function checkAnswers(
  answers: PendingAnswer[],
  batch: WaitingBatch | undefined,
): Map<string, PendingAnswer> {
  if (batch === undefined || batch.pending.length === 0) {
    throw new ValidationError(
      'Nothing is pending: tool_approval and tool_result answers need a waiting session.',
    )
  }
  const byId = new Map<string, PendingAnswer>()
  const pending = new Map(batch.pending.map((call) => [call.toolUseId, call]))
  for (const answer of answers) {
    const call = pending.get(answer.toolUseId)
    if (call === undefined) {
      throw new ValidationError(`No pending tool call has the id '${answer.toolUseId}'.`)
    }
    if (byId.has(answer.toolUseId))
      throw new ValidationError(`Tool call '${answer.toolUseId}' is answered twice.`)
    const expected = call.kind === 'approval' ? 'tool_approval' : 'tool_result'
    if (answer.type !== expected) {
      throw new ValidationError(
        `Tool call '${answer.toolUseId}' (${call.name}) needs a '${expected}' answer.`,
      )
    }
    byId.set(answer.toolUseId, answer)
  }
  const missing = batch.pending.filter((call) => !byId.has(call.toolUseId))
  if (missing.length > 0) {
    throw new ValidationError(
      `Every pending tool call needs an answer; missing: ${missing.map((call) => `'${call.toolUseId}' (${call.name})`).join(', ')}.`,
    )
  }
  return byId
}

/**
 * Results for a batch the user did not answer but replied to with ordinary content. A call that
 * waited for the application was not run. One that needed nothing has no result because the send
 * ended while the batch ran (the process stopped): it may have run, so the result does not say it
 * did not.
 */
export function repliedInstead(batch: WaitingBatch): ToolResultBlock[] {
  const waited = new Set(batch.pending.map((call) => call.toolUseId))
  return batch.calls.map((call) =>
    errorResult(
      call.id,
      waited.has(call.id)
        ? 'Not run: the user replied with a message instead of answering this tool call.'
        : 'No result: the send stopped before this call finished (the process ended), so whether it ran is not known.',
    ),
  )
}
