import type { ContentBlock, ImageBlock, ToolUseBlock } from '@agentx/core'

/** The URL OpenAI takes for an image block: its `url`, or a `data:` URL of its base64 bytes. */
export function imageUrlOf(block: ImageBlock): string {
  if (block.url !== undefined && block.url !== '') return block.url
  return `data:${block.mediaType};base64,${block.data ?? ''}`
}

/** OpenAI's image `detail`: `providerMetadata.openai.detail` of the block when set, else `auto`. */
export type OpenAIImageDetail = 'auto' | 'low' | 'high'

/** The `detail` to send for an image block. */
export function imageDetailOf(block: ImageBlock): OpenAIImageDetail {
  const detail = (block.providerMetadata?.openai as { detail?: unknown } | undefined)?.detail
  return detail === 'low' || detail === 'high' ? detail : 'auto'
}

/**
 * The JSON arguments text of a tool call as it is sent back to OpenAI: the raw text the model
 * produced when it was not valid JSON (kept in `providerMetadata.openai.rawArguments`), else the
 * input serialised.
 */
export function toolArgumentsOf(block: ToolUseBlock): string {
  const raw = (block.providerMetadata?.openai as { rawArguments?: unknown } | undefined)?.rawArguments
  if (typeof raw === 'string') return raw
  return JSON.stringify(block.input ?? {})
}

/** The text of the text blocks of `content`, joined by newlines (a string is returned as is). */
export function textOf(content: string | ContentBlock[]): string {
  if (typeof content === 'string') return content
  return content
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n')
}

/** The content of a message as blocks (a string becomes one text block). */
export function blocksOf(content: string | ContentBlock[]): ContentBlock[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content
}
