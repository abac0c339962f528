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
  /** The agent profile that answered last (agents with profiles only). */
  activeAgent?: string
  /** On a sub-agent's child session: the parent session and the tool call it answers. */
  parentSessionId?: string
  parentToolUseId?: string
  /** On a fork: where it was copied from. */
  forkedFrom?: { sessionId: string; seq: number }
  /** Why the session is in `error` (or was cut by a server stop): see {@link LastError}. */
  lastError?: LastError
}

/** The error of a session's last failed send, stored in `metadata.lastError` so that a reload shows it. */
export interface LastError {
  code: string
  message: string
  /** Whether sending again (`retry`) may succeed. */
  retryable: boolean
  /** The adapter error kind, for provider errors. */
  kind?: string
  /** When it happened (ISO-8601). */
  at?: string
}

/** The {@link LastError} stored in a session's metadata, if it is well-formed. */
export function lastErrorOf(data: Pick<SessionData, 'metadata'>): LastError | undefined {
  const value = data.metadata?.lastError
  if (typeof value !== 'object' || value === null) return undefined
  const record = value as Record<string, unknown>
  if (typeof record.code !== 'string' || typeof record.message !== 'string') return undefined
  const lastError: LastError = {
    code: record.code,
    message: record.message,
    retryable: record.retryable === true,
  }
  if (typeof record.kind === 'string') lastError.kind = record.kind
  if (typeof record.at === 'string') lastError.at = record.at
  return lastError
}

/** The provider id stored in a session's metadata; sessions without one belong to the demo. */
export function providerOf(data: Pick<SessionData, 'metadata'>): string {
  const provider = data.metadata?.provider
  return typeof provider === 'string' && provider !== '' ? provider : 'demo'
}

/** The list view of a session, from its stored fields. */
export function toSessionView(data: SessionData, canSend: boolean): SessionView {
  const view: SessionView = {
    id: data.id,
    summary: data.summary,
    model: data.model ?? '',
    provider: providerOf(data),
    state: data.state,
    createdAt: data.createdAt,
    lastActivity: data.lastActivity,
    tokenUsage: { ...data.tokenUsage },
    canSend,
  }
  if (data.systemPrompt !== undefined && data.systemPrompt !== '') view.systemPrompt = data.systemPrompt
  if (data.activeAgent !== undefined) view.activeAgent = data.activeAgent
  if (data.parentSessionId !== undefined) view.parentSessionId = data.parentSessionId
  if (data.parentToolUseId !== undefined) view.parentToolUseId = data.parentToolUseId
  if (data.forkedFrom !== undefined) view.forkedFrom = { ...data.forkedFrom }
  return view
}
