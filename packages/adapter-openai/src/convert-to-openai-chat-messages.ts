import type { AnyMessage, ContentBlock, ImageBlock, ToolResultBlock } from '@agentx/core'
import type { OpenAIImageDetail } from './openai-content-parts.js'
import { blocksOf, imageUrlOf, textOf } from '@agentx/core/provider'
import { imageDetailOf, toolArgumentsOf } from './openai-content-parts.js'

/** A content part of a Chat Completions user message. */
export type OpenAIChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: OpenAIImageDetail } }

/** One Chat Completions message, as this adapter builds it. */
export type OpenAIChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | OpenAIChatContentPart[] }
  | {
      role: 'assistant'
      content: string | null
      /** The reasoning a compatible server streamed, sent back in the field it came in. */
      reasoning_content?: string
      reasoning?: string
      tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>
    }
  | { role: 'tool'; tool_call_id: string; content: string }

/**
 * Converts the system prompt, persisted messages and the new prompt into Chat Completions
 * `messages`, in a form every compatible server accepts.
 *
 * The system prompt comes first as a `system` message. User content with one text block is a
 * plain string (the most compatible form), otherwise `text` / `image_url` parts. Agent text and
 * tool calls become one `assistant` message (`content: null` when it only calls tools). Thinking
 * is sent back only when a compatible server streamed it (`reasoning_content` or `reasoning`,
 * kept in `providerMetadata.openai.reasoningField`), in that same field: DeepSeek refuses a tool
 * loop whose assistant turns come back without it. Other thinking is not sent (OpenAI's Chat
 * Completions has no field for it). Each tool result is a `tool` message
 * right after the call; images a tool returned follow in a `user` message, since `tool` messages
 * carry only text. Calls without a result and results without a call are dropped: the API rejects
 * them (a crash between a call and its result leaves such a history).
 */
export function convertToOpenAIChatMessages(
  systemPrompt: string | undefined,
  messages: readonly AnyMessage[],
  prompt: string | ContentBlock[],
): OpenAIChatMessage[] {
  const result: OpenAIChatMessage[] = []
  if (systemPrompt !== undefined && systemPrompt !== '')
    result.push({ role: 'system', content: systemPrompt })
  for (const message of messages) {
    if (message.type === 'agent') appendAgent(result, blocksOf(message.content))
    else if (message.type === 'system') result.push({ role: 'system', content: textOf(message.content) })
    else appendUser(result, message.content)
  }
  appendUser(result, prompt)
  return pairToolCalls(result)
}

function appendUser(result: OpenAIChatMessage[], content: string | ContentBlock[]): void {
  if (typeof content === 'string') {
    result.push({ role: 'user', content })
    return
  }
  const parts: OpenAIChatContentPart[] = []
  const toolImages: OpenAIChatContentPart[] = []
  for (const block of content) {
    if (block.type === 'tool_result') result.push(toToolMessage(block, toolImages))
    else if (block.type === 'text') parts.push({ type: 'text', text: block.text })
    else if (block.type === 'image') parts.push({ type: 'image_url', image_url: imageUrlPart(block) })
  }
  if (toolImages.length > 0) result.push({ role: 'user', content: toolImages })
  if (parts.length === 1 && parts[0]?.type === 'text') result.push({ role: 'user', content: parts[0].text })
  else if (parts.length > 0) result.push({ role: 'user', content: parts })
}

function appendAgent(result: OpenAIChatMessage[], blocks: readonly ContentBlock[]): void {
  let text = ''
  const reasoning: { field?: 'reasoning_content' | 'reasoning'; text: string } = { text: '' }
  const calls: NonNullable<Extract<OpenAIChatMessage, { role: 'assistant' }>['tool_calls']> = []
  for (const block of blocks) {
    if (block.type === 'text') text += block.text
    else if (block.type === 'thinking') {
      const field = (block.providerMetadata?.openai as { reasoningField?: unknown } | undefined)
        ?.reasoningField
      if (field === 'reasoning_content' || field === 'reasoning') {
        reasoning.field ??= field
        reasoning.text += block.text
      }
    } else if (block.type === 'tool_use') {
      calls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: toolArgumentsOf(block) },
      })
    }
  }
  if (text === '' && calls.length === 0) return
  result.push({
    role: 'assistant',
    content: text === '' ? null : text,
    ...(reasoning.field !== undefined && reasoning.text !== '' ? { [reasoning.field]: reasoning.text } : {}),
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  })
}

function toToolMessage(block: ToolResultBlock, images: OpenAIChatContentPart[]): OpenAIChatMessage {
  if (typeof block.content !== 'string') {
    const found = block.content.filter((part) => part.type === 'image')
    if (found.length > 0) {
      images.push({ type: 'text', text: `Images returned by tool call ${block.toolUseId}:` })
      for (const image of found) images.push({ type: 'image_url', image_url: imageUrlPart(image) })
    }
  }
  return { role: 'tool', tool_call_id: block.toolUseId, content: textOf(block.content) }
}

function pairToolCalls(messages: OpenAIChatMessage[]): OpenAIChatMessage[] {
  const answered = new Set<string>()
  const asked = new Set<string>()
  for (const message of messages) {
    if (message.role === 'tool') answered.add(message.tool_call_id)
    if (message.role === 'assistant') for (const call of message.tool_calls ?? []) asked.add(call.id)
  }
  const result: OpenAIChatMessage[] = []
  for (const message of messages) {
    if (message.role === 'tool' && !asked.has(message.tool_call_id)) continue
    if (message.role === 'assistant' && message.tool_calls) {
      const calls = message.tool_calls.filter((call) => answered.has(call.id))
      if (calls.length === 0 && message.content === null) continue
      const { tool_calls: _dropped, ...rest } = message
      result.push(calls.length > 0 ? { ...rest, tool_calls: calls } : rest)
      continue
    }
    result.push(message)
  }
  return result
}

/** Chat's `image_url` part; `detail` only when asked for (compatible servers may not know it). */
function imageUrlPart(block: ImageBlock): { url: string; detail?: OpenAIImageDetail } {
  const detail = imageDetailOf(block)
  return detail === 'auto' ? { url: imageUrlOf(block) } : { url: imageUrlOf(block), detail }
}
