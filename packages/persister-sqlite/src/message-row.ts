import type { AnyMessage } from '@agentx/core'
import { ValidationError } from '@agentx/core'
import type { Selectable } from 'kysely'
import type { MessagesTable } from './sqlite-schema.js'
import { applyExtra, ExtraFields, keyText } from './text-fields.js'

/** Every column of a message row, in the order the upsert binds them. */
export const MESSAGE_COLUMNS = [
  'session_id',
  'id',
  'seq',
  'type',
  'content',
  'timestamp',
  'usage',
  'stop_reason',
  'incomplete',
  'is_tool_use',
  'tool_name',
  'tool_input',
  'tool_id',
  'tool_result',
  'metadata',
  'extra',
  'agent_name',
  'compaction',
] as const

/** A message row as written. */
export type MessageRow = { [Column in (typeof MESSAGE_COLUMNS)[number]]: Selectable<MessagesTable>[Column] }

/**
 * The columns read back to rebuild a message, in this order (the session id is known from the
 * query; the derived tool columns are never read).
 */
export const MESSAGE_READ_COLUMNS = [
  'id',
  'seq',
  'type',
  'content',
  'timestamp',
  'usage',
  'stop_reason',
  'incomplete',
  'metadata',
  'extra',
  'agent_name',
  'compaction',
] as const

/** A message row as read back: the values of {@link MESSAGE_READ_COLUMNS}, in order. */
export type MessageReadValues = [
  id: string,
  seq: number,
  type: string,
  content: string,
  timestamp: string,
  usage: string | null,
  stopReason: string | null,
  incomplete: number | null,
  metadata: string | null,
  extra: string | null,
  agentName: string | null,
  compaction: string | null,
]

const KNOWN_FIELDS = new Set([
  'id',
  'sessionId',
  'seq',
  'type',
  'content',
  'timestamp',
  'usage',
  'stopReason',
  'incomplete',
  'metadata',
  'agentName',
  'compaction',
])

/**
 * Builds the row of a message of session `sessionId` that `checkMessage` has checked. Serialises
 * everything it keeps, so a caller that mutates the message afterwards changes nothing stored.
 */
export function toMessageRow(sessionId: string, message: AnyMessage): MessageRow {
  const extra = new ExtraFields('message')
  if (message.incomplete !== undefined && typeof message.incomplete !== 'boolean') {
    throw new ValidationError('message.incomplete must be a boolean.')
  }
  if (message.usage !== undefined && (typeof message.usage !== 'object' || message.usage === null)) {
    throw new ValidationError('message.usage must be a TokenUsage object.')
  }
  const row: MessageRow = {
    session_id: keyText(sessionId, 'sessionId'),
    id: keyText(message.id, 'message.id'),
    seq: message.seq,
    type: message.type,
    content: JSON.stringify(message.content),
    timestamp: extra.text('timestamp', message.timestamp),
    usage: message.usage === undefined ? null : JSON.stringify(message.usage),
    stop_reason: message.stopReason === undefined ? null : extra.text('stopReason', message.stopReason),
    incomplete: message.incomplete === undefined ? null : message.incomplete ? 1 : 0,
    is_tool_use: 0,
    tool_name: null,
    tool_input: null,
    tool_id: null,
    tool_result: null,
    metadata: message.metadata === undefined ? null : JSON.stringify(message.metadata),
    extra: null,
    agent_name: message.agentName === undefined ? null : extra.text('agentName', message.agentName),
    compaction: message.compaction === undefined ? null : JSON.stringify(message.compaction),
  }
  deriveToolColumns(message.content, row)
  // for…in, not Object.keys: no array per message. `checkMessage` let only own keys through.
  for (const key in message) {
    if (KNOWN_FIELDS.has(key)) continue
    const value = (message as unknown as Record<string, unknown>)[key]
    if (value !== undefined) extra.add(key, value)
  }
  row.extra = extra.toJson()
  return row
}

/** Rebuilds a message of session `sessionId` from its row: absent optional fields stay absent. */
export function fromMessageValues(values: MessageReadValues, sessionId: string): AnyMessage {
  const [
    id,
    seq,
    type,
    content,
    timestamp,
    usage,
    stopReason,
    incomplete,
    metadata,
    extra,
    agentName,
    compaction,
  ] = values
  const message: AnyMessage = {
    id,
    sessionId,
    seq,
    type: type as AnyMessage['type'],
    content: JSON.parse(content) as AnyMessage['content'],
    timestamp,
  }
  if (usage !== null) message.usage = JSON.parse(usage) as NonNullable<AnyMessage['usage']>
  if (stopReason !== null) message.stopReason = stopReason as NonNullable<AnyMessage['stopReason']>
  if (incomplete !== null) message.incomplete = incomplete === 1
  if (metadata !== null) message.metadata = JSON.parse(metadata) as Record<string, unknown>
  if (agentName !== null) message.agentName = agentName
  if (compaction !== null)
    message.compaction = JSON.parse(compaction) as NonNullable<AnyMessage['compaction']>
  return extra === null ? message : applyExtra(message, extra)
}

/**
 * Fills the query-only tool columns: the first `tool_use` block's name, id and input, and the
 * first `tool_result` block's content (and its `toolUseId` when there is no `tool_use` block).
 */
function deriveToolColumns(content: AnyMessage['content'], row: MessageRow): void {
  if (typeof content === 'string') return
  let toolUse: Record<string, unknown> | undefined
  let toolResult: Record<string, unknown> | undefined
  for (const block of content as unknown[]) {
    if (typeof block !== 'object' || block === null) continue
    const type = (block as { type?: unknown }).type
    if (type === 'tool_use' && toolUse === undefined) toolUse = block as Record<string, unknown>
    else if (type === 'tool_result' && toolResult === undefined) toolResult = block as Record<string, unknown>
    if (toolUse !== undefined && toolResult !== undefined) break
  }
  if (toolUse !== undefined) {
    row.is_tool_use = 1
    row.tool_name = readableText(toolUse.name)
    row.tool_id = readableText(toolUse.id)
    row.tool_input = toolUse.input === undefined ? null : JSON.stringify(toolUse.input)
  }
  if (toolResult !== undefined) {
    row.tool_id ??= readableText(toolResult.toolUseId)
    row.tool_result = toolResult.content === undefined ? null : JSON.stringify(toolResult.content)
  }
}

/** A derived column's text: strings only, unpaired surrogates replaced (never read back). */
function readableText(value: unknown): string | null {
  return typeof value === 'string' ? value.replace(/\p{Cs}/gu, '\uFFFD') : null
}
