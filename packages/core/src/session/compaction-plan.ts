import type { ToolDefinition } from '../contracts/agent-adapter.js'
import type { AnyMessage, ContentBlock } from '../contracts/messages.js'
import { textOf } from '../util/content-text.js'
import { estimateTokens } from '../util/estimate-tokens.js'
import { historyForModel } from './continuation.js'

// What the model sees of a compacted conversation, and what a compaction covers (DESIGN §10.4):
// pure functions of the history, so a restarted process derives the same from the store.

/** How the summary is introduced to the model in place of the messages it covers. */
const SUMMARY_HEADER = 'Summary of the earlier conversation (the messages it covers are not shown):'

/** The latest compaction summary among `messages`, if any. */
export function latestCompaction(messages: readonly AnyMessage[]): AnyMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.compaction !== undefined) return messages[i]
  }
  return undefined
}

/**
 * The history of a model request, as the model should see it: the first `end` messages, or —
 * once the session was compacted — the latest summary followed by only the messages after its
 * `throughSeq` (other summaries left out), each as {@link historyForModel} shows it.
 *
 * The summary is a `system` message, which adapters add to the system prompt. When the kept
 * messages open with a reply of the model (a compaction inside a long tool loop), the summary is
 * shown as the opening `user` turn instead: Claude and Gemini reject a conversation whose first
 * turn is the model's.
 */
export function historyWithCompaction(messages: readonly AnyMessage[], end: number): AnyMessage[] {
  const summary = latestCompaction(messages)
  if (summary === undefined) return historyForModel(messages, end)
  const after = visibleAfter(messages, end, summary.compaction!.throughSeq)
  const opensWithReply = after[0] !== undefined && after[0].type !== 'user'
  return [summaryForModel(summary, opensWithReply ? 'user' : 'system'), ...after]
}

/**
 * The input tokens a model request would take: the usage of the last response since the latest
 * compaction plus an estimate of what came after it (that response's own content, later
 * messages, the prompt), or an estimate of everything (system prompt, tool definitions, history,
 * prompt) when no such response reported `usage.inputTokens`.
 */
export function estimateRequestTokens(request: {
  history: readonly AnyMessage[]
  prompt: string | ContentBlock[]
  systemPrompt?: string
  tools?: readonly ToolDefinition[]
}): number {
  const { history, prompt } = request
  const first = history[0]
  const summarySeq = first?.compaction === undefined ? -1 : first.seq
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i]!
    const counted = message.usage?.inputTokens ?? 0
    if (message.type === 'agent' && message.seq > summarySeq && counted > 0) {
      return counted + estimateTokens(history.slice(i)) + estimateTokens(prompt)
    }
  }
  return (
    estimateTokens(request.systemPrompt ?? '') +
    (request.tools === undefined ? 0 : estimateTokens(JSON.stringify(request.tools))) +
    estimateTokens(history) +
    estimateTokens(prompt)
  )
}

/** What a compaction covers: the messages to summarise, the summary they build on, and the last seq covered. */
export interface CompactionPlan {
  previous: AnyMessage | undefined
  messages: AnyMessage[]
  throughSeq: number
}

/**
 * Picks what to summarise among the first `end` messages: everything the model sees since the
 * latest summary except the last `keepRecentMessages`. The kept tail grows back to the user
 * message that opened its first turn (a question stays with its answer, tool results with their
 * calls); only a tool loop still running (the last turn, ending in tool calls or results) is cut
 * between two of its steps instead, never before a `tool` message. A final agent message with
 * tool calls is kept even when `keepRecentMessages` is `0` (its calls are still waiting for
 * results), and so is a last user message no complete reply answers. `undefined` when nothing is old enough to
 * summarise.
 */
export function planCompaction(
  messages: readonly AnyMessage[],
  end: number,
  keepRecentMessages: number,
): CompactionPlan | undefined {
  const previous = latestCompaction(messages)
  const visible = visibleAfter(messages, end, previous?.compaction?.throughSeq ?? -1)
  let cut = Math.max(0, visible.length - keepRecentMessages)
  const last = visible[visible.length - 1]
  if (cut === visible.length && last !== undefined && hasToolCalls(last)) cut -= 1
  // An unanswered question (its reply failed or was cut off: no complete reply follows it) stays
  // with what followed it: `retry()` sends it again, so a summary of it would show it twice.
  const lastQuestion = visible.findLastIndex((message) => message.type === 'user')
  const answered = visible
    .slice(lastQuestion + 1)
    .some((message) => message.type === 'agent' && message.incomplete !== true)
  if (lastQuestion >= 0 && !answered) cut = Math.min(cut, lastQuestion)
  if (cut < visible.length) {
    const inLastTurn = !visible.some((message, index) => index > cut && message.type === 'user')
    const inProgress = last!.type === 'tool' || hasToolCalls(last!)
    if (inLastTurn && inProgress) {
      // A tool loop still running: cut between two of its steps, never between a call and its
      // result, and its first step stays with the question.
      while (cut > 0 && visible[cut]!.type === 'tool') cut -= 1
      if (cut > 0 && visible[cut]!.type === 'agent' && visible[cut - 1]!.type === 'user') cut -= 1
    } else {
      // A finished turn is kept whole: a question stays with its answer, tool results with their calls.
      while (cut > 0 && visible[cut]!.type !== 'user') cut -= 1
    }
  }
  if (cut === 0) return undefined
  return { previous, messages: visible.slice(0, cut), throughSeq: visible[cut - 1]!.seq }
}

/** The messages of the first `end` that come after `throughSeq`, summaries left out, as the model sees them. */
function visibleAfter(messages: readonly AnyMessage[], end: number, throughSeq: number): AnyMessage[] {
  const after: AnyMessage[] = []
  for (let i = 0; i < end; i++) {
    const message = messages[i]!
    if (message.seq > throughSeq && message.compaction === undefined) after.push(message)
  }
  return historyForModel(after, after.length)
}

/** The summary as the model sees it: introduced, so the model knows what it stands for. */
function summaryForModel(summary: AnyMessage, type: 'system' | 'user'): AnyMessage {
  return {
    ...summary,
    type,
    content: [{ type: 'text', text: `${SUMMARY_HEADER}\n\n${textOf(summary.content)}` }],
  }
}

function hasToolCalls(message: AnyMessage): boolean {
  return (
    message.type === 'agent' &&
    Array.isArray(message.content) &&
    message.content.some((block) => block.type === 'tool_use')
  )
}
