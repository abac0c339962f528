import type { AdapterMessage } from '../contracts/agent-adapter.js'
import type { ContentBlock, StopReason, TokenUsage } from '../contracts/messages.js'

/** Builds a {@link TokenUsage} with `totalTokens` filled in. */
export function usage(
  inputTokens: number,
  outputTokens: number,
  extra: Partial<TokenUsage> = {},
): TokenUsage {
  return { inputTokens, outputTokens, ...extra, totalTokens: inputTokens + outputTokens }
}

/** Options of {@link textTurn}. */
export interface TextTurnOptions {
  /** Characters per `text-delta`. Default is `4`. */
  chunkSize?: number
  usage?: TokenUsage
  stopReason?: StopReason
  /** A `session` event first, as a stateful provider sends. */
  sessionId?: string
}

/** The events of a model response that streams `text`: deltas, then `message`, then `usage`. */
export function textTurn(text: string, options: TextTurnOptions = {}): AdapterMessage[] {
  const size = options.chunkSize ?? 4
  const events: AdapterMessage[] = []
  if (options.sessionId !== undefined) events.push({ type: 'session', sessionId: options.sessionId })
  const characters = Array.from(text)
  for (let i = 0; i < characters.length; i += size) {
    events.push({ type: 'text-delta', text: characters.slice(i, i + size).join('') })
  }
  events.push({
    type: 'message',
    content: [{ type: 'text', text }],
    stopReason: options.stopReason ?? 'end_turn',
  })
  if (options.usage) events.push({ type: 'usage', usage: options.usage })
  return events
}

/** The events of a model response that calls tools (optionally after some text). */
export function toolCallTurn(
  calls: Array<{ id: string; name: string; input: unknown }>,
  options: { text?: string; usage?: TokenUsage } = {},
): AdapterMessage[] {
  const content: ContentBlock[] = []
  const events: AdapterMessage[] = []
  if (options.text) {
    events.push({ type: 'text-delta', text: options.text })
    content.push({ type: 'text', text: options.text })
  }
  for (const call of calls) {
    events.push({ type: 'tool-call', ...call })
    content.push({ type: 'tool_use', ...call })
  }
  events.push({ type: 'message', content, stopReason: 'tool_use' })
  if (options.usage) events.push({ type: 'usage', usage: options.usage })
  return events
}

/** Reads an async iterable to the end into an array. */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = []
  for await (const item of iterable) items.push(item)
  return items
}
