import { type CompiledQuery, type SchemaModule, sql } from 'kysely'
import type { SqliteConnection, SqliteMigration } from './sqlite-migration.js'

/**
 * Version 2 (Storage v2): columns for the optional fields of `@agentx/core` 0.2
 * (`AnyMessage.agentName`, `compaction`; `SessionData.activeAgent`, `parentSessionId`,
 * `parentToolUseId`, `forkedFrom`), the lease columns, and their indexes.
 *
 * Schema 1 kept fields it had no column for in the `extra` JSON column; {@link moveToColumns}
 * moves those of the new columns out of it, so queries on the new columns also see rows written
 * by release 0.1 and every row reads back exactly as before.
 */
export const storageV2: SqliteMigration = {
  version: 2,
  name: 'storage v2: agent names, child sessions, forks, compaction, leases',
  up(schema: SchemaModule): CompiledQuery[] {
    return [
      schema.alterTable('sessions').addColumn('active_agent', 'text').compile(),
      schema.alterTable('sessions').addColumn('parent_session_id', 'text').compile(),
      schema.alterTable('sessions').addColumn('parent_tool_use_id', 'text').compile(),
      schema.alterTable('sessions').addColumn('forked_from', 'text').compile(),
      schema.alterTable('sessions').addColumn('lease_owner', 'text').compile(),
      schema.alterTable('sessions').addColumn('lease_expires_at', 'integer').compile(),
      schema.alterTable('messages').addColumn('agent_name', 'text').compile(),
      schema.alterTable('messages').addColumn('compaction', 'text').compile(),
      // Children of a session: the cascade of deleteSession/deleteSessions walks it.
      schema
        .createIndex('sessions_parent')
        .on('sessions')
        .column('parent_session_id')
        .where(sql.ref('parent_session_id'), 'is not', null)
        .compile(),
      // markInterrupted at start-up: active sessions by lease end, a small partial index.
      schema
        .createIndex('sessions_active_lease')
        .on('sessions')
        .column('lease_expires_at')
        .where(sql.ref('state'), '=', sql.lit('active'))
        .compile(),
      schema
        .createIndex('messages_agent_name')
        .on('messages')
        .columns(['agent_name', 'session_id'])
        .where(sql.ref('agent_name'), 'is not', null)
        .compile(),
    ]
  },
  migrateData: moveToColumns,
}

const SESSION_TEXT = [
  ['activeAgent', 'active_agent'],
  ['parentSessionId', 'parent_session_id'],
  ['parentToolUseId', 'parent_tool_use_id'],
] as const

/**
 * Moves the fields of the new columns out of `extra` for rows written by schema 1. A value moves
 * only when the column holds it exactly (a string without unpaired surrogates for text columns, an
 * object for JSON columns); anything else stays in `extra`, which is read over the columns, so
 * every row reads back as before either way. Only rows with an `extra` value are read, which are few.
 */
function moveToColumns(database: SqliteConnection): void {
  const sessions = database.prepare('select id, extra from sessions where extra is not null').all() as Array<{
    id: string
    extra: string
  }>
  const updateSession = database.prepare(
    'update sessions set active_agent = ?, parent_session_id = ?, parent_tool_use_id = ?, forked_from = ?, extra = ? where id = ?',
  )
  for (const row of sessions) {
    const extra = JSON.parse(row.extra) as Record<string, unknown>
    const moved = SESSION_TEXT.map(([field]) => takeText(extra, field))
    const forkedFrom = takeObject(extra, 'forkedFrom')
    if (moved.every((value) => value === null) && forkedFrom === null) continue
    updateSession.run(...moved, forkedFrom, remaining(extra), row.id)
  }
  const messages = database
    .prepare('select session_id, id, extra from messages where extra is not null')
    .all() as Array<{ session_id: string; id: string; extra: string }>
  const updateMessage = database.prepare(
    'update messages set agent_name = ?, compaction = ?, extra = ? where session_id = ? and id = ?',
  )
  for (const row of messages) {
    const extra = JSON.parse(row.extra) as Record<string, unknown>
    const agentName = takeText(extra, 'agentName')
    const compaction = takeObject(extra, 'compaction')
    if (agentName === null && compaction === null) continue
    updateMessage.run(agentName, compaction, remaining(extra), row.session_id, row.id)
  }
}

/** Removes `field` from `extra` and returns it when it is text a column holds exactly, else `null`. */
function takeText(extra: Record<string, unknown>, field: string): string | null {
  const value = Object.hasOwn(extra, field) ? extra[field] : undefined
  if (typeof value !== 'string' || !(value as string & { isWellFormed(): boolean }).isWellFormed())
    return null
  delete extra[field]
  return value
}

/** Removes `field` from `extra` and returns its JSON text when it is an object, else `null`. */
function takeObject(extra: Record<string, unknown>, field: string): string | null {
  const value = Object.hasOwn(extra, field) ? extra[field] : undefined
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null
  delete extra[field]
  return JSON.stringify(value)
}

function remaining(extra: Record<string, unknown>): string | null {
  return Object.keys(extra).length === 0 ? null : JSON.stringify(extra)
}
