import type { AnyMessage, ContentBlock } from '@agentx/core'

type Json = Record<string, unknown>

/** An Anthropic Messages API message param. */
export interface AnthropicMessageParam {
  role: 'user' | 'assistant'
  content: Json[]
}

/** Converts one core content block to an Anthropic content block param (unknown blocks are dropped). */
export function convertBlock(block: ContentBlock): Json | undefined {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text }
    case 'image':
      return block.data !== undefined
        ? { type: 'image', source: { type: 'base64', media_type: block.mediaType, data: block.data } }
        : { type: 'image', source: { type: 'url', url: block.url } }
    case 'thinking':
      return {
        type: 'thinking',
        thinking: block.text,
        ...(block.signature === undefined ? {} : { signature: block.signature }),
      }
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: block.input ?? {} }
    case 'tool_result':
      return {
        type: 'tool_result',
        tool_use_id: block.toolUseId,
        content:
          typeof block.content === 'string'
            ? block.content
            : block.content.map(convertBlock).filter((item): item is Json => item !== undefined),
        ...(block.isError === undefined ? {} : { is_error: block.isError }),
      }
    default:
      return undefined
  }
}

function toBlocks(content: string | ContentBlock[]): Json[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  return content.map(convertBlock).filter((item): item is Json => item !== undefined)
}

/**
 * Converts the persisted history plus the new prompt to Anthropic `messages`: `agent` messages
 * become `assistant`, `user` and `tool` messages become `user` (tool results answer the tool
 * calls before them), consecutive messages of one role merge, `system` messages are left to the
 * system prompt.
 */
export function convertToAnthropicMessages(
  history: readonly AnyMessage[],
  prompt: string | ContentBlock[],
): AnthropicMessageParam[] {
  const out: AnthropicMessageParam[] = []
  const push = (role: 'user' | 'assistant', content: Json[]): void => {
    if (content.length === 0) return
    const last = out.at(-1)
    if (last && last.role === role) last.content.push(...content)
    else out.push({ role, content: [...content] })
  }
  for (const message of history) {
    if (message.type === 'system') continue
    push(message.type === 'agent' ? 'assistant' : 'user', toBlocks(message.content))
  }
  push('user', toBlocks(prompt))
  return out
}
