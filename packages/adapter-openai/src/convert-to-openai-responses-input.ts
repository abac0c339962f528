import type { AnyMessage, ContentBlock, ToolResultBlock } from '@agentx/core'
import type { OpenAIImageDetail } from './openai-content-parts.js'
import { blocksOf, imageUrlOf, textOf } from '@agentx/core/provider'
import { imageDetailOf, toolArgumentsOf } from './openai-content-parts.js'

/** One item of the Responses API `input` array, as this adapter builds it. */
export type OpenAIResponsesInputItem =
  | { role: 'user' | 'system'; content: string | OpenAIResponsesInputPart[] }
  | { role: 'assistant'; content: string }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; call_id: string; output: string | OpenAIResponsesInputPart[] }
  | {
      type: 'reasoning'
      id?: string
      summary: Array<{ type: 'summary_text'; text: string }>
      encrypted_content: string
    }

/** A content part of a Responses API input message. */
export type OpenAIResponsesInputPart =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url: string; detail: OpenAIImageDetail }

/** Options of {@link convertToOpenAIResponsesInput}. */
export interface ConvertToOpenAIResponsesInputOptions {
  /**
   * Drop function calls without a result and results without a call, which the API rejects
   * (a crash between a call and its result leaves such a history). `true` for a full replay;
   * `false` for the new input of a resumed conversation, whose calls live on the server.
   */
  pairToolCalls: boolean
}

/**
 * Converts persisted messages and the new prompt into Responses API `input` items.
 *
 * Called by the adapter with the whole history (replay) or with the messages after the response
 * it resumes. User text and images become a `user` message (`input_text`, `input_image` with a
 * URL or a `data:` URL), tool results `function_call_output` items (a string, or parts when
 * there are images), agent text an `assistant` message, tool calls `function_call` items, and
 * thinking with a signature (OpenAI's `encrypted_content`) a `reasoning` item; thinking without
 * one cannot be sent back and is left out. The system prompt travels as `instructions`, not here.
 */
export function convertToOpenAIResponsesInput(
  messages: readonly AnyMessage[],
  prompt: string | ContentBlock[],
  options: ConvertToOpenAIResponsesInputOptions,
): OpenAIResponsesInputItem[] {
  const items: OpenAIResponsesInputItem[] = []
  for (const message of messages) {
    if (message.type === 'agent') appendAgent(items, blocksOf(message.content))
    else if (message.type === 'system') items.push({ role: 'system', content: textOf(message.content) })
    else appendUser(items, message.content)
  }
  appendUser(items, prompt)
  return options.pairToolCalls ? pairToolCalls(items) : items
}

function appendUser(items: OpenAIResponsesInputItem[], content: string | ContentBlock[]): void {
  if (typeof content === 'string') {
    items.push({ role: 'user', content })
    return
  }
  const parts: OpenAIResponsesInputPart[] = []
  for (const block of content) {
    if (block.type === 'tool_result') items.push(toFunctionOutput(block))
    else if (block.type === 'text') parts.push({ type: 'input_text', text: block.text })
    else if (block.type === 'image')
      parts.push({ type: 'input_image', image_url: imageUrlOf(block), detail: imageDetailOf(block) })
  }
  if (parts.length > 0) items.push({ role: 'user', content: parts })
}

function appendAgent(items: OpenAIResponsesInputItem[], blocks: readonly ContentBlock[]): void {
  let text = ''
  const flush = (): void => {
    if (text !== '') items.push({ role: 'assistant', content: text })
    text = ''
  }
  for (const block of blocks) {
    if (block.type === 'text') text += block.text
    else if (block.type === 'tool_use') {
      flush()
      items.push({
        type: 'function_call',
        call_id: block.id,
        name: block.name,
        arguments: toolArgumentsOf(block),
      })
    } else if (block.type === 'thinking' && block.signature !== undefined && block.signature !== '') {
      flush()
      const itemId = (block.providerMetadata?.openai as { itemId?: unknown } | undefined)?.itemId
      items.push({
        type: 'reasoning',
        ...(typeof itemId === 'string' && itemId !== '' ? { id: itemId } : {}),
        summary: block.text === '' ? [] : [{ type: 'summary_text', text: block.text }],
        encrypted_content: block.signature,
      })
    } else if (block.type === 'tool_result') {
      flush()
      items.push(toFunctionOutput(block))
    }
  }
  flush()
}

function toFunctionOutput(block: ToolResultBlock): OpenAIResponsesInputItem {
  const content = block.content
  if (typeof content === 'string' || !content.some((part) => part.type === 'image')) {
    return { type: 'function_call_output', call_id: block.toolUseId, output: textOf(content) }
  }
  const output: OpenAIResponsesInputPart[] = []
  for (const part of content) {
    if (part.type === 'text') output.push({ type: 'input_text', text: part.text })
    else if (part.type === 'image')
      output.push({ type: 'input_image', image_url: imageUrlOf(part), detail: imageDetailOf(part) })
  }
  return { type: 'function_call_output', call_id: block.toolUseId, output }
}

function pairToolCalls(items: OpenAIResponsesInputItem[]): OpenAIResponsesInputItem[] {
  const calls = new Set<string>()
  const outputs = new Set<string>()
  for (const item of items) {
    if ('type' in item && item.type === 'function_call') calls.add(item.call_id)
    if ('type' in item && item.type === 'function_call_output') outputs.add(item.call_id)
  }
  return items.filter((item) => {
    if (!('type' in item)) return true
    if (item.type === 'function_call') return outputs.has(item.call_id)
    if (item.type === 'function_call_output') return calls.has(item.call_id)
    return true
  })
}
