import {
  type AnyMessage,
  type ContentBlock,
  type ImageBlock,
  type ToolResultBlock,
  ValidationError,
} from '@agentx/core'
import { parseDataUrl, textOf, toolInputObject } from '@agentx/core/provider'
import type { Content, Part } from '@google/genai'
import { readGeminiMetadata } from './gemini-provider-metadata.js'

/** A conversation in Gemini's terms: `contents` plus the `systemInstruction`. */
export interface GeminiConversation {
  contents: Content[]
  /** Absent when there is no system prompt. */
  systemInstruction?: Content
}

/** What {@link convertToGeminiContents} needs besides the prompt. */
export interface ConvertToGeminiContentsOptions {
  /** The persisted conversation before the prompt, in `seq` order. */
  history: readonly AnyMessage[]
  /** Default is none. */
  systemPrompt?: string | undefined
}

interface ToolCallInfo {
  name: string
  /** The id to send back, or `undefined` when the adapter made it up. */
  wireId: string | undefined
  /** Whether a tool result answers it somewhere in the conversation. */
  answered: boolean
}

/**
 * Converts a core conversation (history, then the prompt) into Gemini `contents`.
 *
 * `user` and `tool` messages become role `user`, `agent` messages role `model`; `system` messages
 * and the system prompt join `systemInstruction`. Tool calls become `functionCall` parts and tool
 * results `functionResponse` parts that carry the call's `name` and, when Gemini gave one, its `id`
 * (`{ output }`, or `{ error }` for a failed tool); images become `inlineData` (base64 or `data:`
 * URL) or `fileData` (any other URL); thinking becomes `thought` parts. Every `thoughtSignature`
 * kept in `providerMetadata.gemini` (or a thinking block's `signature`) goes back on its part.
 * Consecutive turns of the same role are merged, as Gemini expects alternating roles. A tool call
 * that no tool result answers (its tools were interrupted) is left out, as Gemini rejects it.
 *
 * Throws a `ValidationError` (before any request is made) for a tool result that answers no tool
 * call, or an image with neither `data` nor `url`.
 *
 * Called by `GeminiAdapter` for each request; exported for custom adapters and tests.
 */
export function convertToGeminiContents(
  prompt: string | ContentBlock[],
  options: ConvertToGeminiContentsOptions,
): GeminiConversation {
  const toolCalls = collectToolCalls(options.history, prompt)
  const systemParts: Part[] = []
  if (options.systemPrompt !== undefined && options.systemPrompt !== '')
    systemParts.push({ text: options.systemPrompt })

  const contents: Content[] = []
  const append = (role: 'user' | 'model', parts: Part[]): void => {
    if (parts.length === 0) return
    const last = contents[contents.length - 1]
    if (last !== undefined && last.role === role) last.parts = [...(last.parts ?? []), ...parts]
    else contents.push({ role, parts })
  }

  for (const message of options.history) {
    if (message.type === 'system') {
      const text = textOf(message.content)
      if (text !== '') systemParts.push({ text })
      continue
    }
    const role = message.type === 'agent' ? 'model' : 'user'
    append(role, toParts(message.content, role, toolCalls))
  }
  append('user', toParts(prompt, 'user', toolCalls))

  const conversation: GeminiConversation = { contents }
  if (systemParts.length > 0) conversation.systemInstruction = { parts: systemParts }
  return conversation
}

function toParts(
  content: string | ContentBlock[],
  role: 'user' | 'model',
  toolCalls: Map<string, ToolCallInfo>,
): Part[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }]
  const parts: Part[] = []
  // Images returned by tools follow the function responses of the same turn.
  const trailing: Part[] = []
  for (const block of content) {
    const signature = readGeminiMetadata(block).thoughtSignature
    switch (block.type) {
      case 'text':
        if (block.text === '' && signature === undefined) break
        parts.push(withSignature({ text: block.text }, signature))
        break
      case 'thinking': {
        // Reasoning is the model's own; a user turn has none to replay. An empty one with no
        // signature (OpenAI reasoning without a summary, Claude's redacted thinking) says nothing,
        // and Gemini refuses a part without data.
        const thoughtSignature = signature ?? block.signature
        if (role === 'model' && (block.text !== '' || thoughtSignature !== undefined))
          parts.push(withSignature({ text: block.text, thought: true }, thoughtSignature))
        break
      }
      case 'image':
        parts.push(imagePart(block))
        break
      case 'tool_use': {
        const info = toolCalls.get(block.id)
        // Gemini rejects a function call without its response (e.g. tools interrupted by an abort).
        if (info?.answered !== true) break
        const functionCall: NonNullable<Part['functionCall']> = {
          name: block.name,
          args: toolInputObject(block.input),
        }
        if (info?.wireId !== undefined) functionCall.id = info.wireId
        parts.push(withSignature({ functionCall }, signature))
        break
      }
      case 'tool_result':
        parts.push(functionResponsePart(block, toolCalls))
        if (Array.isArray(block.content)) {
          for (const inner of block.content) if (inner.type === 'image') trailing.push(imagePart(inner))
        }
        break
      default:
        break
    }
  }
  return [...parts, ...trailing]
}

function withSignature(part: Part, signature: string | undefined): Part {
  if (signature !== undefined) part.thoughtSignature = signature
  return part
}

function functionResponsePart(block: ToolResultBlock, toolCalls: Map<string, ToolCallInfo>): Part {
  const call = toolCalls.get(block.toolUseId)
  if (call === undefined) {
    throw new ValidationError(
      `The tool result for "${block.toolUseId}" answers no tool call in the history; Gemini needs the call's name. Keep the agent message with the tool call before its result.`,
    )
  }
  const output = typeof block.content === 'string' ? block.content : textOf(block.content)
  const functionResponse: NonNullable<Part['functionResponse']> = {
    name: call.name,
    response: block.isError ? { error: output } : { output },
  }
  if (call.wireId !== undefined) functionResponse.id = call.wireId
  return { functionResponse }
}

function imagePart(block: ImageBlock): Part {
  if (block.data !== undefined) return { inlineData: { mimeType: block.mediaType, data: block.data } }
  if (block.url !== undefined) {
    const inline = parseDataUrl(block.url)
    if (inline) return { inlineData: { mimeType: inline.mediaType || block.mediaType, data: inline.data } }
    return { fileData: { mimeType: block.mediaType, fileUri: block.url } }
  }
  throw new ValidationError('An image block needs `data` (base64) or `url`.')
}

function collectToolCalls(
  history: readonly AnyMessage[],
  prompt: string | ContentBlock[],
): Map<string, ToolCallInfo> {
  const calls = new Map<string, ToolCallInfo>()
  const answered = new Set<string>()
  const visit = (content: string | ContentBlock[]): void => {
    if (typeof content === 'string') return
    for (const block of content) {
      if (block.type === 'tool_result') answered.add(block.toolUseId)
      if (block.type !== 'tool_use') continue
      const synthetic = readGeminiMetadata(block).syntheticId === true
      calls.set(block.id, { name: block.name, wireId: synthetic ? undefined : block.id, answered: false })
    }
  }
  for (const message of history) visit(message.content)
  visit(prompt)
  for (const [id, call] of calls) call.answered = answered.has(id)
  return calls
}
