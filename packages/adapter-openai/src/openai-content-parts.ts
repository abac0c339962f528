import type { ImageBlock, ToolUseBlock } from '@agentx/core'

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
