import type { AgentAdapter } from '../contracts/agent-adapter.js'
import type { AnyMessage, ContentBlock } from '../contracts/messages.js'
import { DEFAULT_PROFILE, type SessionProfile } from './session-profile.js'

/**
 * The history one adapter gets, without the thinking signatures of other providers.
 *
 * Profiles share a conversation (DESIGN §10.3), not their providers' private state: a thinking
 * block's `signature` (Anthropic's signature, OpenAI's encrypted reasoning, Gemini's thought
 * signature) can only be verified by the provider that made it, and each of them refuses a request
 * carrying another's. So a thinking block of an agent message written by a profile of another
 * provider (by `getName()`) goes without its signature; adapters leave an unsigned thinking block
 * out, or send it as plain thought text. Messages of a profile no longer configured are sent as
 * stored. Without profiles, or when every profile uses the same provider, the history is unchanged.
 */
export function withoutForeignSignatures(
  history: AnyMessage[],
  profiles: ReadonlyMap<string, SessionProfile> | undefined,
  sessionAdapter: AgentAdapter,
  adapter: AgentAdapter,
): AnyMessage[] {
  if (profiles === undefined) return history
  const provider = adapter.getName()
  const foreign = new Set<string>()
  for (const profile of profiles.values()) {
    if ((profile.adapter ?? sessionAdapter).getName() !== provider) foreign.add(profile.name)
  }
  if (foreign.size === 0) return history
  let result: AnyMessage[] | undefined
  for (let i = 0; i < history.length; i++) {
    const message = history[i]!
    if (message.type !== 'agent' || !foreign.has(message.agentName ?? DEFAULT_PROFILE)) continue
    if (!Array.isArray(message.content) || !message.content.some(isSigned)) continue
    result ??= history.slice()
    result[i] = { ...message, content: message.content.map(unsigned) }
  }
  return result ?? history
}

function isSigned(block: ContentBlock): boolean {
  return block.type === 'thinking' && block.signature !== undefined
}

function unsigned(block: ContentBlock): ContentBlock {
  if (!isSigned(block)) return block
  const { signature: _signature, ...rest } = block as Extract<ContentBlock, { type: 'thinking' }>
  return rest
}
