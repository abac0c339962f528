import type {
  AnyMessage,
  ContentBlock,
  TokenUsage,
  ToolResultBlock,
  ToolUseBlock,
} from '../contracts/messages.js'
import { agentToolProfile } from '../tools/agent-tool.js'
import { errorResult, runTools, STOPPED_TEXT } from '../tools/run-tools.js'
import type { PendingToolCall, Tool, ToolAnswer } from '../tools/tool.js'
import { addUsage } from '../util/token-usage.js'
import type { PendingAnswer } from './approvals.js'
import type { SessionEvent } from './session-events.js'
import { deepFreeze } from './session-history.js'
import { type ChildOutcome, type ChildSessions, closeWaitingChildren, runChild } from './subagents.js'

/** The tool calls of an agent message, in order. */
export function toolCallsOf(message: AnyMessage): ToolUseBlock[] {
  if (!Array.isArray(message.content)) return []
  const calls: ToolUseBlock[] = []
  for (const block of message.content) if (block.type === 'tool_use') calls.push(block)
  return calls
}

/** Merges tool lists; later lists win by name. */
export function mergeTools(...lists: Array<readonly Tool[] | undefined>): Map<string, Tool> {
  const tools = new Map<string, Tool>()
  for (const list of lists) for (const tool of list ?? []) tools.set(tool.name, tool)
  return tools
}

/** What running a batch produced: the results for one `tool` message, or the calls it still waits on. */
export type BatchOutcome =
  | { kind: 'done'; results: ToolResultBlock[]; usage: TokenUsage | undefined }
  | { kind: 'waiting'; pending: PendingToolCall[]; usage: TokenUsage | undefined }

/** What the tool step needs from its session. */
export interface BatchContext {
  sessionId: string
  signal: AbortSignal
  messages: readonly AnyMessage[]
  emit(event: SessionEvent): void
  children: ChildSessions | undefined
}

/**
 * The tool step of the send loop: runs one model response's batch of tool calls and returns the
 * results in call order (one `tool` message per batch). Agent tools run first, each in its child
 * session; when a child stops to wait for the application, nothing else of the batch runs and the
 * batch waits with the child's pending calls. Then the other calls run in parallel: with
 * `answers` (the batch was waiting), a denial becomes an `isError` result giving the reason, an
 * approval runs (with its edited input), and a client tool's answer is its result. Each result is
 * shown as a `tool-result` event when it is ready.
 */
export async function runBatch(
  calls: ToolUseBlock[],
  tools: Map<string, Tool>,
  context: BatchContext,
  answers?: ReadonlyMap<string, PendingAnswer>,
): Promise<BatchOutcome> {
  const results = new Map<string, ToolResultBlock>()
  let usage: TokenUsage | undefined
  const childCalls = calls.filter((call) => agentToolProfile(tools.get(call.name)) !== undefined)
  if (childCalls.length > 0) {
    const children = context.children
    const outcomes: ChildOutcome[] = await Promise.all(
      childCalls.map((call): ChildOutcome | Promise<ChildOutcome> =>
        children === undefined
          ? {
              kind: 'done' as const,
              result: errorResult(call.id, 'Agent tools need a session made by an agent.'),
            }
          : runChild(call, agentToolProfile(tools.get(call.name))!, {
              sessionId: context.sessionId,
              signal: context.signal,
              children,
              emit: context.emit,
              ...(answers === undefined ? {} : { answers }),
            }),
      ),
    )
    // What the children used counts in this send, also when one of them stopped for an answer.
    for (const outcome of outcomes) {
      if (outcome.usage) usage = usage ? addUsage(usage, outcome.usage) : { ...outcome.usage }
    }
    const pending = outcomes.flatMap((outcome) => (outcome.kind === 'waiting' ? outcome.pending : []))
    if (pending.length > 0 && !context.signal.aborted) return { kind: 'waiting', pending, usage }
    // Aborted while a child waited for input (a sibling was stopped): the send stops instead of
    // waiting. The waiting children give up their calls, and their parent calls say they stopped.
    const waiting = childCalls.filter((_, index) => outcomes[index]!.kind === 'waiting')
    if (waiting.length > 0)
      await closeWaitingChildren(context.children, context.sessionId, waiting, () => true)
    for (const [index, outcome] of outcomes.entries()) {
      const result =
        outcome.kind === 'done' ? outcome.result : errorResult(childCalls[index]!.id, STOPPED_TEXT)
      results.set(result.toolUseId, result)
      context.emit(resultEvent(result))
    }
  }
  const toRun: ToolUseBlock[] = []
  for (const call of calls) {
    if (results.has(call.id)) continue
    const answer = answers?.get(call.id)
    if (answer === undefined) toRun.push(call)
    else if (answer.type === 'tool_result') results.set(call.id, clientResult(answer))
    else if (!answer.approved) {
      const reason = answer.reason?.trim()
      results.set(
        call.id,
        errorResult(call.id, `The user denied this tool call${reason ? `: ${reason}` : '.'}`),
      )
    } else toRun.push(answer.input === undefined ? call : { ...call, input: answer.input })
    const fixed = results.get(call.id)
    if (fixed) context.emit(resultEvent(fixed))
  }
  const ran = await runTools(toRun, tools, {
    sessionId: context.sessionId,
    signal: context.signal,
    messages: context.messages,
    onResult: (result) => context.emit(resultEvent(result)),
  })
  for (const result of ran) results.set(result.toolUseId, result)
  return { kind: 'done', results: calls.map((call) => results.get(call.id)!), usage }
}

function clientResult(answer: ToolAnswer): ToolResultBlock {
  const content: string | ContentBlock[] = answer.content
  return answer.isError === true
    ? { type: 'tool_result', toolUseId: answer.toolUseId, content, isError: true }
    : { type: 'tool_result', toolUseId: answer.toolUseId, content }
}

/**
 * The `tool-result` event of a result. Its content is the one the `tool` message will store, so it
 * is frozen first: a listener that changes what it is shown (to redact or shorten it) cannot
 * change what is stored.
 */
export function resultEvent(result: ToolResultBlock): SessionEvent {
  deepFreeze(result.content)
  return result.isError
    ? { type: 'tool-result', toolUseId: result.toolUseId, content: result.content, isError: true }
    : { type: 'tool-result', toolUseId: result.toolUseId, content: result.content }
}
