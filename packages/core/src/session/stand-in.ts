import type { AnyMessage, ContentBlock } from '../contracts/messages.js'
import type { AgentError } from '../errors/agent-error.js'

/**
 * What the write queue stores in place of a message the store refused for good (an error that is
 * not retryable, such as a row over the store's size limit): the session keeps no seq gap, and
 * after a restart its history is still a conversation a provider takes.
 *
 * Same id, seq, type, timestamp, usage, stop reason and profile. Text, images and thinking give
 * way to a note; tool calls keep their id and name (their input becomes `{}`), tool results keep
 * their call id and become errors that carry the note, so every call still has its result.
 * `metadata.notStored` names the store's error code.
 */
export function standIn(message: AnyMessage, error: AgentError): AnyMessage {
  const note = `[This message was not stored: the store refused it (${error.code}).]`
  const replaced: AnyMessage = {
    id: message.id,
    sessionId: message.sessionId,
    seq: message.seq,
    type: message.type,
    content: typeof message.content === 'string' ? note : standInBlocks(message.content, note),
    timestamp: message.timestamp,
    metadata: { notStored: { code: error.code } },
  }
  if (message.usage !== undefined) replaced.usage = message.usage
  if (message.stopReason !== undefined) replaced.stopReason = message.stopReason
  if (message.agentName !== undefined) replaced.agentName = message.agentName
  return replaced
}

function standInBlocks(blocks: readonly ContentBlock[], note: string): ContentBlock[] {
  const kept: ContentBlock[] = []
  for (const block of blocks) {
    if (block.type === 'tool_use') kept.push({ type: 'tool_use', id: block.id, name: block.name, input: {} })
    else if (block.type === 'tool_result') {
      kept.push({ type: 'tool_result', toolUseId: block.toolUseId, content: note, isError: true })
    }
  }
  // Results carry the note themselves (a tool message holds results only).
  if (kept.some((block) => block.type === 'tool_result')) return kept
  return [{ type: 'text', text: note }, ...kept]
}
