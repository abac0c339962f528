import type { SessionData } from '@agentx/core'
import type { Selectable } from 'kysely'
import type { SessionsTable } from './sqlite-schema.js'
import { applyExtra, ExtraFields, keyText } from './text-fields.js'

/** The columns read back to rebuild a session (everything but `id_order`). */
export const SESSION_READ_COLUMNS = [
  'id',
  'summary',
  'created_at',
  'last_activity',
  'cwd',
  'model',
  'system_prompt',
  'state',
  'provider_session_id',
  'token_usage',
  'user_id',
  'app_name',
  'metadata',
  'extra',
  'active_agent',
  'parent_session_id',
  'parent_tool_use_id',
  'forked_from',
] as const

/** A session row as read back. */
export type SessionReadRow = Pick<Selectable<SessionsTable>, (typeof SESSION_READ_COLUMNS)[number]>

const KNOWN_FIELDS = new Set([
  'id',
  'summary',
  'createdAt',
  'lastActivity',
  'cwd',
  'model',
  'systemPrompt',
  'state',
  'providerSessionId',
  'tokenUsage',
  'userId',
  'appName',
  'metadata',
  'activeAgent',
  'parentSessionId',
  'parentToolUseId',
  'forkedFrom',
])

/** A session row as written: every column but the lease, which only `claimSession` writes. */
export type SessionRow = Omit<SessionsTable, 'lease_owner' | 'lease_expires_at'>

/** The sort key of an id: its UTF-16 code units, big-endian, so BLOB order is JavaScript's string order. */
export function idOrder(id: string): Buffer {
  return Buffer.from(id, 'utf16le').swap16()
}

/** Builds the row of a session that `validateSessionData` has checked and copied. */
export function toSessionRow(session: SessionData): SessionRow {
  const extra = new ExtraFields('session')
  const optionalText = (
    key: 'cwd' | 'model' | 'systemPrompt' | 'providerSessionId' | 'activeAgent' | 'parentToolUseId',
  ): string | null => (session[key] === undefined ? null : extra.text(key, session[key]))
  const id = keyText(session.id, 'session.id')
  const row: SessionRow = {
    id,
    id_order: idOrder(id),
    summary: extra.text('summary', session.summary),
    created_at: extra.text('createdAt', session.createdAt),
    last_activity: extra.text('lastActivity', session.lastActivity),
    cwd: optionalText('cwd'),
    model: optionalText('model'),
    system_prompt: optionalText('systemPrompt'),
    state: extra.text('state', session.state),
    provider_session_id: optionalText('providerSessionId'),
    token_usage: JSON.stringify(session.tokenUsage),
    user_id: session.userId === undefined ? null : keyText(session.userId, 'session.userId'),
    app_name: session.appName === undefined ? null : keyText(session.appName, 'session.appName'),
    metadata: session.metadata === undefined ? null : JSON.stringify(session.metadata),
    extra: null,
    active_agent: optionalText('activeAgent'),
    parent_session_id:
      session.parentSessionId === undefined
        ? null
        : keyText(session.parentSessionId, 'session.parentSessionId'),
    parent_tool_use_id: optionalText('parentToolUseId'),
    forked_from: session.forkedFrom === undefined ? null : JSON.stringify(session.forkedFrom),
  }
  for (const key of Object.keys(session)) {
    if (!KNOWN_FIELDS.has(key)) extra.add(key, (session as unknown as Record<string, unknown>)[key])
  }
  row.extra = extra.toJson()
  return row
}

/** Rebuilds a session from its row: absent optional fields stay absent. */
export function fromSessionRow(row: SessionReadRow): SessionData {
  const session: SessionData = {
    id: row.id,
    summary: row.summary,
    createdAt: row.created_at,
    lastActivity: row.last_activity,
    state: row.state as SessionData['state'],
    tokenUsage: JSON.parse(row.token_usage) as SessionData['tokenUsage'],
  }
  if (row.cwd !== null) session.cwd = row.cwd
  if (row.model !== null) session.model = row.model
  if (row.system_prompt !== null) session.systemPrompt = row.system_prompt
  if (row.provider_session_id !== null) session.providerSessionId = row.provider_session_id
  if (row.user_id !== null) session.userId = row.user_id
  if (row.app_name !== null) session.appName = row.app_name
  if (row.metadata !== null) session.metadata = JSON.parse(row.metadata) as Record<string, unknown>
  if (row.active_agent !== null) session.activeAgent = row.active_agent
  if (row.parent_session_id !== null) session.parentSessionId = row.parent_session_id
  if (row.parent_tool_use_id !== null) session.parentToolUseId = row.parent_tool_use_id
  if (row.forked_from !== null)
    session.forkedFrom = JSON.parse(row.forked_from) as NonNullable<SessionData['forkedFrom']>
  return applyExtra(session, row.extra)
}
