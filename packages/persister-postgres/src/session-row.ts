import type { SessionData } from '@agentx/core'
import { ValidationError } from '@agentx/core'
import {
  applyExtra,
  decodeJson,
  decodeText,
  encodeJson,
  extraFields,
  fieldText,
  idOrder,
  keyText,
} from './text-fields.js'

/** A session row as written: every column, text encoded, JSON as text. */
export interface SessionRow {
  id: string
  id_order: Buffer
  summary: string
  created_at: string
  last_activity: string
  cwd: string | null
  model: string | null
  system_prompt: string | null
  state: string
  provider_session_id: string | null
  token_usage: string
  user_id: string | null
  app_name: string | null
  metadata: string | null
  extra: string | null
  active_agent: string | null
  parent_session_id: string | null
  parent_tool_use_id: string | null
  forked_from: string | null
}

/** A session row as read back (jsonb columns selected as text). */
export type SessionReadRow = Omit<SessionRow, 'id_order'>

const KNOWN_FIELDS: ReadonlySet<string> = new Set([
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

/** Builds the row of a session that `validateSessionData` has checked and copied. */
export function toSessionRow(session: SessionData): SessionRow {
  const optional = (
    key: 'cwd' | 'model' | 'systemPrompt' | 'providerSessionId' | 'activeAgent' | 'parentToolUseId',
  ): string | null => (session[key] === undefined ? null : fieldText(session[key], `session.${key}`))
  if (session.metadata !== undefined && (typeof session.metadata !== 'object' || session.metadata === null)) {
    throw new ValidationError('session.metadata must be an object.')
  }
  return {
    id: keyText(session.id, 'session.id'),
    id_order: idOrder(session.id),
    summary: fieldText(session.summary, 'session.summary'),
    created_at: fieldText(session.createdAt, 'session.createdAt'),
    last_activity: fieldText(session.lastActivity, 'session.lastActivity'),
    cwd: optional('cwd'),
    model: optional('model'),
    system_prompt: optional('systemPrompt'),
    state: fieldText(session.state, 'session.state'),
    provider_session_id: optional('providerSessionId'),
    token_usage: encodeJson(session.tokenUsage),
    user_id: session.userId === undefined ? null : keyText(session.userId, 'session.userId'),
    app_name: session.appName === undefined ? null : keyText(session.appName, 'session.appName'),
    metadata: session.metadata === undefined ? null : encodeJson(session.metadata),
    extra: extraFields(session, KNOWN_FIELDS),
    active_agent: optional('activeAgent'),
    parent_session_id:
      session.parentSessionId === undefined
        ? null
        : keyText(session.parentSessionId, 'session.parentSessionId'),
    parent_tool_use_id: optional('parentToolUseId'),
    forked_from: session.forkedFrom === undefined ? null : encodeJson(session.forkedFrom),
  }
}

/** Rebuilds a session from its row: absent optional fields stay absent. */
export function fromSessionRow(row: SessionReadRow): SessionData {
  const session: SessionData = {
    id: decodeText(row.id),
    summary: decodeText(row.summary),
    createdAt: decodeText(row.created_at),
    lastActivity: decodeText(row.last_activity),
    state: decodeText(row.state) as SessionData['state'],
    tokenUsage: decodeJson(row.token_usage) as SessionData['tokenUsage'],
  }
  if (row.cwd !== null) session.cwd = decodeText(row.cwd)
  if (row.model !== null) session.model = decodeText(row.model)
  if (row.system_prompt !== null) session.systemPrompt = decodeText(row.system_prompt)
  if (row.provider_session_id !== null) session.providerSessionId = decodeText(row.provider_session_id)
  if (row.user_id !== null) session.userId = decodeText(row.user_id)
  if (row.app_name !== null) session.appName = decodeText(row.app_name)
  if (row.metadata !== null) session.metadata = decodeJson(row.metadata) as Record<string, unknown>
  if (row.active_agent !== null) session.activeAgent = decodeText(row.active_agent)
  if (row.parent_session_id !== null) session.parentSessionId = decodeText(row.parent_session_id)
  if (row.parent_tool_use_id !== null) session.parentToolUseId = decodeText(row.parent_tool_use_id)
  if (row.forked_from !== null)
    session.forkedFrom = decodeJson(row.forked_from) as NonNullable<SessionData['forkedFrom']>
  return applyExtra(session, row.extra)
}
