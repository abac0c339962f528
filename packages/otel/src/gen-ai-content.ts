import type { ObservedBlock, ObservedMessage } from './observed-event.js'

/**
 * Converts AgentX messages to the JSON the GenAI conventions prescribe for
 * `gen_ai.input.messages` / `gen_ai.output.messages` (`{ role, parts }` with `text`, `tool_call`,
 * `tool_call_response`, `blob`, `uri` and `reasoning` parts). Only called when `recordContent` is
 * on. OpenTelemetry attributes cannot hold structures, so the result is recorded as a JSON string,
 * as the conventions allow.
 */
type Part = Record<string, unknown>

const ROLES: Readonly<Record<string, string>> = {
  user: 'user',
  agent: 'assistant',
  tool: 'tool',
  system: 'system',
}

/** `[{ role, parts }]` for the given messages, as JSON text. */
export function inputMessagesJson(messages: readonly ObservedMessage[]): string {
  return toJson(messages.map((message) => ({ role: roleOf(message), parts: partsOf(message.content) })))
}

/** `[{ role: 'assistant', parts, finish_reason }]` for one reply, as JSON text. */
export function outputMessagesJson(message: ObservedMessage, finishReason: string | undefined): string {
  return toJson([
    {
      role: 'assistant',
      parts: partsOf(message.content),
      finish_reason: finishReason ?? message.stopReason ?? 'other',
    },
  ])
}

/** A tool's arguments or result as attribute text: a string stays as is, anything else is JSON. */
export function contentText(value: unknown): string {
  if (typeof value === 'string') return value
  return toJson(value)
}

/**
 * A tool result's content as the conventions' `response` / `gen_ai.tool.call.result`: the text
 * when it is only text blocks, otherwise the parts.
 */
export function toolResultValue(content: unknown): unknown {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return content
  let text = ''
  for (const block of content as ObservedBlock[]) {
    if (block?.type !== 'text' || typeof block.text !== 'string') return partsOf(content)
    text += block.text
  }
  return text
}

function roleOf(message: ObservedMessage): string {
  return (message.type !== undefined && ROLES[message.type]) || 'user'
}

function partsOf(content: unknown): Part[] {
  if (typeof content === 'string') return [{ type: 'text', content }]
  if (!Array.isArray(content)) return []
  return (content as ObservedBlock[]).map(partOf)
}

function partOf(block: ObservedBlock): Part {
  switch (block?.type) {
    case 'text':
      return { type: 'text', content: block.text ?? '' }
    case 'thinking':
      return { type: 'reasoning', content: block.text ?? '' }
    case 'tool_use':
      return {
        type: 'tool_call',
        id: block.id ?? null,
        name: block.name ?? '',
        arguments: block.input ?? null,
      }
    case 'tool_result':
      return {
        type: 'tool_call_response',
        id: block.toolUseId ?? null,
        response: toolResultValue(block.content),
      }
    case 'image':
      return block.data !== undefined
        ? { type: 'blob', modality: 'image', mime_type: block.mediaType ?? null, content: block.data }
        : { type: 'uri', modality: 'image', mime_type: block.mediaType ?? null, uri: block.url ?? null }
    default:
      return { type: typeof block?.type === 'string' ? block.type : 'unknown' }
  }
}

function toJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null'
  } catch {
    return String(value)
  }
}
