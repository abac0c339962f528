import type { AnyMessage, ContentBlock } from '../contracts/messages.js'

/** Where a model request picks the conversation up: its prompt, and how much history comes before it. */
export interface Continuation {
  prompt: string | ContentBlock[]
  /** The index in the history of the message that `prompt` is; the history sent is everything before it. */
  historyEnd: number
}

/**
 * Where `session.retry()` starts again (DESIGN §10.2): from the last user message without storing
 * it again, or — when tool steps of that exchange completed — from the last tool results. An
 * incomplete reply after that point stays stored but is left out of the model's history. Returns
 * `undefined` when there is no user message to retry, or when a complete reply already answers it
 * (the failed send stored no user message of its own) — unless `answeredAgain`: that reply was
 * refused as structured output, so the model is asked again.
 */
export function continuationForRetry(
  messages: readonly AnyMessage[],
  answeredAgain = false,
): Continuation | undefined {
  let user = -1
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.type === 'user') {
      user = i
      break
    }
  }
  // A compacted session holds only the messages after its summary (DESIGN §10.4): when the user
  // message was summarised, the exchange goes on from the last tool results held.
  let continuation: Continuation | undefined =
    user === -1 ? undefined : { prompt: messages[user]!.content, historyEnd: user }
  for (let i = user + 1; i < messages.length; i++) {
    const message = messages[i]!
    if (message.type === 'tool') continuation = { prompt: message.content, historyEnd: i }
  }
  if (continuation === undefined || answeredAgain) return continuation
  // Already answered (the failed send stored no user message of its own): nothing to retry.
  for (let i = continuation.historyEnd + 1; i < messages.length; i++) {
    if (answers(messages[i]!)) return undefined
  }
  return continuation
}

/** Whether a reply comes after where `from` starts: a retry from there leaves it out of the history. */
export function leavesOutReply(messages: readonly AnyMessage[], from: Continuation): boolean {
  for (let i = from.historyEnd + 1; i < messages.length; i++) if (messages[i]!.type === 'agent') return true
  return false
}

/** A complete agent reply that asks for no tool: it ends its exchange. */
function answers(message: AnyMessage): boolean {
  return message.type === 'agent' && message.incomplete !== true && !asksForTools(message)
}

function asksForTools(message: AnyMessage): boolean {
  return Array.isArray(message.content) && message.content.some((block) => block.type === 'tool_use')
}

/**
 * The first `end` messages as the model should see them. A partial reply kept after an abort or
 * error stays (the model said it) without tool calls that never got results, which providers
 * reject — unless a retry replaced it (another agent message follows it directly): then it is
 * left out, as is a complete reply so replaced.
 */
export function historyForModel(messages: readonly AnyMessage[], end: number): AnyMessage[] {
  const result: AnyMessage[] = []
  for (let i = 0; i < end; i++) {
    const message = messages[i]!
    // A reply that a retry replaced (another agent message follows it directly) is left out: a
    // partial one, a complete one whose tool calls never ran (the send was aborted before they
    // started), and one refused as structured output (OUTPUT_INVALID, then `retry()`).
    if (message.type === 'agent' && messages[i + 1]?.type === 'agent') continue
    if (!message.incomplete) {
      result.push(message)
      continue
    }
    if (!Array.isArray(message.content)) {
      result.push(message)
      continue
    }
    const content = message.content.filter((block) => block.type !== 'tool_use')
    if (content.length > 0) result.push({ ...message, content })
  }
  return result
}
