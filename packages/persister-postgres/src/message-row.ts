import type { AnyMessage } from '@agentx/core'
import { ValidationError } from '@agentx/core'
import {
  applyExtra,
  decodeJson,
  decodeText,
  encodeJson,
  encodeText,
  extraFields,
  fieldText,
  keyText,
} from './text-fields.js'

/** A message row as written: every column, text encoded, JSON as text. */
export interface MessageRow {
  session_id: string
  id: string
  seq: number
  type: string
  content: string
  timestamp: string
  usage: string | null
  stop_reason: string | null
  incomplete: boolean | null
  is_tool_use: boolean
  tool_name: string | null
  tool_input: string | null
  tool_id: string | null
  tool_result: string | null
  metadata: string | null
  extra: string | null
  agent_name: string | null
  compaction: string | null
}

/** A message row as read back (jsonb and bigint columns selected as text). */
export interface MessageReadRow {
  id: string
  seq: string
  type: string
  content: string
  timestamp: string
  usage: string | null
  stop_reason: string | null
  incomplete: boolean | string | null
  metadata: string | null
  extra: string | null
  agent_name: string | null
  compaction: string | null
}

const KNOWN_FIELDS: ReadonlySet<string> = new Set([
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
export function toMessageRow(message: AnyMessage, sessionId: string = message.sessionId): MessageRow {
  if (message.incomplete !== undefined && typeof message.incomplete !== 'boolean') {
    throw new ValidationError('message.incomplete must be a boolean.')
  }
  if (message.usage !== undefined && (typeof message.usage !== 'object' || message.usage === null)) {
    throw new ValidationError('message.usage must be a TokenUsage object.')
  }
  if (message.metadata !== undefined && (typeof message.metadata !== 'object' || message.metadata === null)) {
    throw new ValidationError('message.metadata must be an object.')
  }
  const row: MessageRow = {
    session_id: keyText(sessionId, 'sessionId'),
    id: keyText(message.id, 'message.id'),
    seq: message.seq,
    type: message.type,
    content: encodeJson(message.content),
    timestamp: fieldText(message.timestamp, 'message.timestamp'),
    usage: message.usage === undefined ? null : encodeJson(message.usage),
    stop_reason:
      message.stopReason === undefined ? null : fieldText(message.stopReason, 'message.stopReason'),
    incomplete: message.incomplete ?? null,
    is_tool_use: false,
    tool_name: null,
    tool_input: null,
    tool_id: null,
    tool_result: null,
    metadata: message.metadata === undefined ? null : encodeJson(message.metadata),
    extra: extraFields(message, KNOWN_FIELDS),
    agent_name: message.agentName === undefined ? null : fieldText(message.agentName, 'message.agentName'),
    compaction: message.compaction === undefined ? null : encodeJson(message.compaction),
  }
  deriveToolColumns(message.content, row)
  return row
}

/** Rebuilds a message of session `sessionId` from its row: absent optional fields stay absent. */
export function fromMessageRow(row: MessageReadRow, sessionId: string): AnyMessage {
  const message: AnyMessage = {
    id: decodeText(row.id),
    sessionId,
    seq: Number(row.seq),
    type: row.type as AnyMessage['type'],
    content: decodeJson(row.content) as AnyMessage['content'],
    timestamp: decodeText(row.timestamp),
  }
  if (row.usage !== null) message.usage = decodeJson(row.usage) as NonNullable<AnyMessage['usage']>
  if (row.stop_reason !== null)
    message.stopReason = decodeText(row.stop_reason) as NonNullable<AnyMessage['stopReason']>
  // A pool with its own type parsers may return booleans as 't' / 'f'.
  if (row.incomplete !== null) message.incomplete = row.incomplete === true || row.incomplete === 't'
  if (row.metadata !== null) message.metadata = decodeJson(row.metadata) as Record<string, unknown>
  if (row.agent_name !== null) message.agentName = decodeText(row.agent_name)
  if (row.compaction !== null)
    message.compaction = decodeJson(row.compaction) as NonNullable<AnyMessage['compaction']>
  return applyExtra(message, row.extra)
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
    row.is_tool_use = true
    row.tool_name = optionalText(toolUse.name)
    row.tool_id = optionalText(toolUse.id)
    row.tool_input = toolUse.input === undefined ? null : encodeJson(toolUse.input)
  }
  if (toolResult !== undefined) {
    row.tool_id ??= optionalText(toolResult.toolUseId)
    row.tool_result = toolResult.content === undefined ? null : encodeJson(toolResult.content)
  }
}

function optionalText(value: unknown): string | null {
  return typeof value === 'string' ? encodeText(value) : null
}
