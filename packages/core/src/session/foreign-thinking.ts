import type { AgentAdapter } from '../contracts/agent-adapter.js'
import type { AnyMessage, ContentBlock } from '../contracts/messages.js'
import { DEFAULT_PROFILE, type SessionProfile } from './session-profile.js'

/**
 * The history one adapter gets, without the thinking signatures of other providers.
 *
 * Profiles share a conversation (DESIGN §10.3), not their providers' private state: a thinking
 * block's `signature` (Anthropic's signature, OpenAI's encrypted reasoning, Gemini's thought
 * signature) can only be verified by the provider that made it, and each of them refuses a request
 * carrying another's. A reply's signed blocks name their provider (by `getName()`) as a key of
 * their `providerMetadata` ({@link markSignatures}), so this holds across restarts and after the
 * agent's adapter changed. A block of another provider goes without its signature; adapters leave
 * an unsigned thinking block out, or send it as plain thought text. A signed block that names no
 * provider (stored before blocks were marked) is judged by the profile that wrote its message: a
 * profile of another provider, or kept as it is.
 *
 * `all` is the session's whole held history (of which `history` is a part): a session that never
 * held a signed block costs one look at each new message, not a pass per request.
 */
export function withoutForeignSignatures(
  history: AnyMessage[],
  all: readonly AnyMessage[],
  profiles: ReadonlyMap<string, SessionProfile> | undefined,
  sessionAdapter: AgentAdapter,
  adapter: AgentAdapter,
): AnyMessage[] {
  if (!holdsSignatures(all)) return history
  const provider = adapter.getName()
  const foreign = new Set<string>()
  for (const profile of profiles?.values() ?? []) {
    if ((profile.adapter ?? sessionAdapter).getName() !== provider) foreign.add(profile.name)
  }
  let result: AnyMessage[] | undefined
  for (let i = 0; i < history.length; i++) {
    const message = history[i]!
    if (message.type !== 'agent' || !Array.isArray(message.content) || !message.content.some(isSigned))
      continue
    const byProfile = foreign.has(message.agentName ?? DEFAULT_PROFILE)
    const keep = (block: ContentBlock): boolean => {
      const issuer = issuerOf(block, provider)
      return issuer === undefined ? !byProfile : issuer === provider
    }
    if (message.content.every((block) => !isSigned(block) || keep(block))) continue
    result ??= history.slice()
    result[i] = {
      ...message,
      content: message.content.map((block) => (isSigned(block) && !keep(block) ? unsigned(block) : block)),
    }
  }
  return result ?? history
}

/**
 * Marks who signed the thinking of a reply from `provider`: each signed block gets the provider's
 * key in its `providerMetadata` (`{}` when the adapter put nothing there). Changes `content` in place.
 */
export function markSignatures(content: ContentBlock[], provider: string): void {
  for (const block of content) {
    if (!isSigned(block)) continue
    const metadata = block.providerMetadata
    if (metadata !== undefined && Object.hasOwn(metadata, provider)) continue
    block.providerMetadata = { ...metadata, [provider]: {} }
  }
}

/** The provider a signed block names: `provider` itself, another one, or `undefined` when it names none. */
function issuerOf(block: ContentBlock, provider: string): string | undefined {
  const metadata = block.providerMetadata
  if (metadata === undefined || metadata === null || typeof metadata !== 'object') return undefined
  if (Object.hasOwn(metadata, provider)) return provider
  return Object.keys(metadata)[0]
}

/** How far each held history was looked at, and whether it holds a signed thinking block. */
const looked = new WeakMap<readonly AnyMessage[], { upTo: number; signed: boolean }>()

function holdsSignatures(all: readonly AnyMessage[]): boolean {
  let state = looked.get(all)
  if (state === undefined) {
    state = { upTo: 0, signed: false }
    looked.set(all, state)
  }
  // A message taken back (a send that failed before the model was called) frees its place.
  state.upTo = Math.min(state.upTo, all.length)
  for (let i = state.upTo; !state.signed && i < all.length; i++) {
    const content = all[i]!.content
    if (Array.isArray(content) && content.some(isSigned)) state.signed = true
  }
  state.upTo = all.length
  return state.signed
}

function isSigned(block: ContentBlock): boolean {
  return block.type === 'thinking' && block.signature !== undefined
}

function unsigned(block: ContentBlock): ContentBlock {
  if (!isSigned(block)) return block
  const { signature: _signature, ...rest } = block as Extract<ContentBlock, { type: 'thinking' }>
  return rest
}
