import type { SessionData, SessionState, TokenUsage } from '@agentx/core'

/** One row of the playground's session list, as `GET /api/sessions` answers it. */
export interface SessionView {
  id: string
  /** The first user message, shortened; `''` before the first send. */
  summary: string
  model: string
  /** The id of the provider whose agent owns the session (`metadata.provider`). */
  provider: string
  state: SessionState
  createdAt: string
  lastActivity: string
  tokenUsage: TokenUsage
  /** Whether the session's provider is configured, so it can take new messages. */
  canSend: boolean
  /** The session's system prompt, when it has one. */
  systemPrompt?: string
}

/** The live fields of a session object, which win over a stored row that may lag behind. */
export interface LiveSessionFields {
  state: SessionState
  summary: string
  model: string
  lastActivity: string
  getTokenUsage(): TokenUsage
}

/** The provider id stored in a session's metadata; sessions without one belong to the demo. */
export function providerOf(data: Pick<SessionData, 'metadata'>): string {
  const provider = data.metadata?.provider
  return typeof provider === 'string' && provider !== '' ? provider : 'demo'
}

/**
 * The list view of a stored session, overlaid with its live session object when one exists (its
 * state and usage can be a few milliseconds ahead of storage).
 */
export function toSessionView(
  data: SessionData,
  live: LiveSessionFields | undefined,
  canSend: boolean,
): SessionView {
  const view: SessionView = {
    id: data.id,
    summary: live?.summary ?? data.summary,
    model: live?.model ?? data.model ?? '',
    provider: providerOf(data),
    state: live?.state ?? data.state,
    createdAt: data.createdAt,
    lastActivity: live?.lastActivity ?? data.lastActivity,
    tokenUsage: live?.getTokenUsage() ?? { ...data.tokenUsage },
    canSend,
  }
  if (data.systemPrompt !== undefined && data.systemPrompt !== '') view.systemPrompt = data.systemPrompt
  return view
}
