import type { ContentBlock } from '@agentx/core'

/**
 * Records the provider's own stop reason in `providerMetadata.openai.stopReason` of the last
 * content block, for a reason that maps to `other` (rule A-FIN-005): the value is not lost, and
 * it is persisted with the message. A response without content gets an empty text block to
 * carry it (empty text is never sent back to the provider).
 */
export function keepRawStopReason(content: ContentBlock[], rawStopReason: string): void {
  let last = content[content.length - 1]
  if (!last) {
    last = { type: 'text', text: '' }
    content.push(last)
  }
  const metadata = { ...last.providerMetadata }
  metadata.openai = { ...(metadata.openai as Record<string, unknown> | undefined), stopReason: rawStopReason }
  last.providerMetadata = metadata
}
