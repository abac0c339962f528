import type { ContentBlock } from '../contracts/messages.js'

/**
 * The text of a message's content as the model wrote it: its text blocks concatenated (a string
 * as is); images, tool calls and thinking contribute nothing. `SendResult.text`, a sub-agent's
 * tool result, the compaction summary.
 */
export function textOf(content: string | readonly ContentBlock[]): string {
  if (typeof content === 'string') return content
  let text = ''
  for (const block of content) if (block.type === 'text') text += block.text
  return text
}
