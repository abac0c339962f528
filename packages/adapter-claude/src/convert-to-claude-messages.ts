import type { AnyMessage, ContentBlock, ImageBlock, ProviderMetadata, ToolResultBlock } from '@agentx/core'
import { ValidationError } from '@agentx/core'
import { parseDataUrl, textOf, toolInputObject } from '@agentx/core/provider'

/** A content block as the Messages API takes it (`text`, `image`, `thinking`, `tool_use`, `tool_result` …). */
export type ClaudeContentBlockParam = { type: string } & Record<string, unknown>

/** One message of the Messages API `messages` array. */
export interface ClaudeMessageParam {
  role: 'user' | 'assistant'
  content: ClaudeContentBlockParam[]
}

/** What {@link convertToClaudeMessages} produces: the `system` and `messages` request fields. */
export interface ClaudePrompt {
  /** The system prompt; absent when there is none. */
  system?: string
  messages: ClaudeMessageParam[]
}

/** What {@link convertToClaudeMessages} converts. */
export interface ConvertToClaudeMessagesInput {
  /** The persisted conversation, in `seq` order. */
  history: readonly AnyMessage[]
  /** The new input: user content, or the tool results of a tool-loop step. */
  prompt: string | readonly ContentBlock[]
  systemPrompt?: string | undefined
}

/** The `providerMetadata` key of this provider. */
const KEY = 'claude'

/** The placeholder a tool call gets when history holds no result for it (the API rejects unpaired calls). */
export const MISSING_TOOL_RESULT = 'No result was recorded for this tool call.'

/**
 * Converts AgentX history plus the new prompt into Messages API input.
 *
 * Called by {@link ClaudeAdapter} before every request. Rules it keeps:
 * - `user` and `tool` messages become `user` turns, `agent` messages `assistant` turns; consecutive
 *   turns of one role are merged (the API requires alternation), tool results first in their turn.
 * - `system` messages in history are appended to the system prompt (the API has one system field).
 * - Every `tool_use` is answered by a `tool_result` in the next `user` turn: a missing result gets an
 *   error placeholder ({@link MISSING_TOOL_RESULT}), a result without its call is dropped.
 * - Images: base64 `data` → `source.type: base64`, `url` → `source.type: url`.
 * - Thinking blocks go back with their `signature` (unsigned ones cannot be verified and are left
 *   out); redacted thinking (`providerMetadata.claude.redactedData`) goes back as `redacted_thinking`.
 * - `providerMetadata.claude.cache_control` / `citations` on a block are sent as those API fields.
 *
 * @throws {ValidationError} for content that cannot be sent (an image with neither `data` nor `url`, an unknown block type).
 */
export function convertToClaudeMessages(input: ConvertToClaudeMessagesInput): ClaudePrompt {
  const systemParts: string[] = []
  if (input.systemPrompt !== undefined && input.systemPrompt !== '') systemParts.push(input.systemPrompt)
  const turns: ClaudeMessageParam[] = []
  const push = (role: 'user' | 'assistant', content: ClaudeContentBlockParam[]): void => {
    if (content.length === 0) return
    const last = turns[turns.length - 1]
    if (last && last.role === role) last.content.push(...content)
    else turns.push({ role, content })
  }

  for (const message of input.history) {
    switch (message.type) {
      case 'system':
        systemParts.push(textOf(message.content))
        break
      case 'agent':
        push('assistant', convertBlocks(message.content, 'assistant'))
        break
      case 'user':
      case 'tool':
        push('user', convertBlocks(message.content, 'user'))
        break
      default:
        throw new ValidationError(
          `Message ${message.id} has an unknown type '${String((message as { type: unknown }).type)}'.`,
        )
    }
  }
  push('user', convertBlocks(input.prompt, 'user'))

  const messages = pairToolCalls(turns).map((turn) =>
    turn.role === 'user' ? { ...turn, content: toolResultsFirst(turn.content) } : turn,
  )
  const system = systemParts.filter((part) => part !== '').join('\n\n')
  return system === '' ? { messages } : { system, messages }
}

function convertBlocks(
  content: string | readonly ContentBlock[],
  role: 'user' | 'assistant',
): ClaudeContentBlockParam[] {
  if (typeof content === 'string') {
    const converted = convertBlock({ type: 'text', text: content }, role)
    return converted ? [converted] : []
  }
  const result: ClaudeContentBlockParam[] = []
  for (const block of content) {
    const converted = convertBlock(block, role)
    if (converted) result.push(converted)
  }
  return result
}

function convertBlock(block: ContentBlock, role: 'user' | 'assistant'): ClaudeContentBlockParam | undefined {
  const meta = claudeMetadata(block.providerMetadata)
  switch (block.type) {
    case 'text': {
      // The API rejects empty text blocks, and blank ones ("\n\n" before a tool call, which
      // Claude and other providers write) in assistant turns.
      if (block.text === '' || (role === 'assistant' && block.text.trim() === '')) return undefined
      const param: ClaudeContentBlockParam = { type: 'text', text: block.text }
      // Citations are sent back only on assistant turns: API 2026-10-21 rejects them in user turns.
      if (role === 'assistant' && Array.isArray(meta?.citations) && meta.citations.length > 0)
        param.citations = meta.citations
      return withCacheControl(param, meta)
    }
    case 'image':
      return withCacheControl(convertImage(block), meta)
    case 'thinking': {
      if (role !== 'assistant') return undefined
      if (typeof meta?.redactedData === 'string')
        return { type: 'redacted_thinking', data: meta.redactedData }
      if (block.signature === undefined || block.signature === '') return undefined
      return { type: 'thinking', thinking: block.text, signature: block.signature }
    }
    case 'tool_use':
      if (role !== 'assistant') return undefined
      return withCacheControl(
        {
          type: 'tool_use',
          id: claudeToolId(block.id),
          name: block.name,
          input: toolInputObject(block.input),
        },
        meta,
      )
    case 'tool_result':
      if (role !== 'user') return undefined
      return withCacheControl(convertToolResult(block), meta)
    default:
      throw new ValidationError(
        `Claude cannot take a content block of type '${String((block as { type: unknown }).type)}'.`,
      )
  }
}

function convertImage(block: ImageBlock): ClaudeContentBlockParam {
  if (typeof block.data === 'string' && block.data !== '') {
    return { type: 'image', source: { type: 'base64', media_type: block.mediaType, data: block.data } }
  }
  if (typeof block.url === 'string' && block.url !== '') {
    const inline = parseDataUrl(block.url)
    if (inline !== undefined)
      return {
        type: 'image',
        source: { type: 'base64', media_type: inline.mediaType || block.mediaType, data: inline.data },
      }
    return { type: 'image', source: { type: 'url', url: block.url } }
  }
  throw new ValidationError('An image block needs base64 `data` or a `url`.')
}

function convertToolResult(block: ToolResultBlock): ClaudeContentBlockParam {
  const param: ClaudeContentBlockParam = { type: 'tool_result', tool_use_id: claudeToolId(block.toolUseId) }
  if (typeof block.content === 'string') {
    param.content = block.content
  } else {
    const parts: ClaudeContentBlockParam[] = []
    for (const part of block.content) {
      if (part.type === 'text') {
        if (part.text !== '')
          parts.push(
            withCacheControl({ type: 'text', text: part.text }, claudeMetadata(part.providerMetadata)),
          )
      } else if (part.type === 'image') {
        parts.push(withCacheControl(convertImage(part), claudeMetadata(part.providerMetadata)))
      } else {
        // Other blocks cannot live inside a tool result; keep what they say as text.
        parts.push({ type: 'text', text: JSON.stringify(part) })
      }
    }
    param.content = parts
  }
  if (block.isError === true) param.is_error = true
  return param
}

/**
 * Makes every assistant `tool_use` answered by a `tool_result` in the user turn right after it,
 * and drops results whose call is not in the assistant turn before them.
 */
function pairToolCalls(turns: ClaudeMessageParam[]): ClaudeMessageParam[] {
  const result: ClaudeMessageParam[] = []
  for (let index = 0; index < turns.length; index++) {
    const turn = turns[index]!
    if (turn.role === 'assistant') {
      result.push(turn)
      const callIds = turn.content
        .filter((block) => block.type === 'tool_use')
        .map((block) => block.id as string)
      if (callIds.length === 0) continue
      const next = turns[index + 1]
      const answered = new Set(
        next?.role === 'user'
          ? next.content
              .filter((block) => block.type === 'tool_result')
              .map((block) => block.tool_use_id as string)
          : [],
      )
      const missing: ClaudeContentBlockParam[] = callIds
        .filter((id) => !answered.has(id))
        .map((id) => ({ type: 'tool_result', tool_use_id: id, content: MISSING_TOOL_RESULT, is_error: true }))
      if (missing.length === 0) continue
      if (next?.role === 'user') {
        turns[index + 1] = { role: 'user', content: [...missing, ...next.content] }
      } else {
        result.push({ role: 'user', content: missing })
      }
      continue
    }
    const previous = result[result.length - 1]
    const callable = new Set(
      previous?.role === 'assistant'
        ? previous.content.filter((block) => block.type === 'tool_use').map((block) => block.id as string)
        : [],
    )
    const content = turn.content.filter(
      (block) => block.type !== 'tool_result' || callable.has(block.tool_use_id as string),
    )
    if (content.length === 0) continue
    const last = result[result.length - 1]
    if (last?.role === 'user') last.content.push(...content)
    else result.push({ role: 'user', content })
  }
  return result
}

/** The API wants a turn's tool results before any other content. */
function toolResultsFirst(content: ClaudeContentBlockParam[]): ClaudeContentBlockParam[] {
  const results = content.filter((block) => block.type === 'tool_result')
  if (results.length === 0 || results.length === content.length) return content
  return [...results, ...content.filter((block) => block.type !== 'tool_result')]
}

/** The tool call ids the Messages API accepts. */
const CLAUDE_TOOL_ID = /^[a-zA-Z0-9_-]+$/

/**
 * A tool call id Claude accepts, the same for a call and its result. Ids written by another
 * provider may hold other characters (OpenAI-compatible servers write `functions.lookup:0`): those
 * are replaced by `_`, and a hash of the whole id keeps two such ids apart.
 */
export function claudeToolId(id: string): string {
  if (CLAUDE_TOOL_ID.test(id)) return id
  let hash = 0x811c9dc5
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193)
  return `${id.replace(/[^a-zA-Z0-9_-]/g, '_')}_${(hash >>> 0).toString(36)}`
}

function withCacheControl(
  param: ClaudeContentBlockParam,
  meta: Record<string, unknown> | undefined,
): ClaudeContentBlockParam {
  if (meta?.cache_control !== undefined && meta.cache_control !== null)
    param.cache_control = meta.cache_control
  return param
}

function claudeMetadata(metadata: ProviderMetadata | undefined): Record<string, unknown> | undefined {
  const value = metadata?.[KEY]
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined
}
