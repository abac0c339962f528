import type { ContentBlock } from '@agentx/core'

/**
 * What this adapter keeps under `providerMetadata.gemini` of a content block, so that a replayed
 * history gives Gemini back exactly what it sent.
 */
export interface GeminiProviderMetadata {
  /**
   * The `thoughtSignature` Gemini attached to the part this block came from. Gemini 3 requires it
   * back on function calls; it is sent back unchanged.
   */
  thoughtSignature?: string
  /**
   * `true` on a `tool_use` block whose id the adapter made up because Gemini sent none; such an id
   * is never sent to Gemini (the call and its result pair by name and position instead).
   */
  syntheticId?: boolean
  /**
   * Gemini's own `finishReason`, on the last block of a response whose reason is not plainly
   * `STOP` or `MAX_TOKENS` (e.g. `RECITATION` next to stop reason `content_filter`, or a reason
   * newer than this adapter next to `other`).
   */
  finishReason?: string
}

/** The `gemini` part of a block's `providerMetadata`, when it has one. */
export function readGeminiMetadata(block: ContentBlock): GeminiProviderMetadata {
  const value = block.providerMetadata?.gemini
  if (typeof value !== 'object' || value === null) return {}
  const { thoughtSignature, syntheticId } = value as Record<string, unknown>
  const metadata: GeminiProviderMetadata = {}
  if (typeof thoughtSignature === 'string') metadata.thoughtSignature = thoughtSignature
  if (syntheticId === true) metadata.syntheticId = true
  return metadata
}
