import { type CompiledQuery, type SchemaModule, sql } from 'kysely'
import type { PostgresMigration, PostgresMigrationContext } from './postgres-migration.js'

/**
 * Version 2 (Storage v2): columns for the optional fields of `@agentx/core` 0.2
 * (`AnyMessage.agentName`, `compaction`; `SessionData.activeAgent`, `parentSessionId`,
 * `parentToolUseId`, `forkedFrom`), the lease columns, and their indexes.
 *
 * Schema 1 kept fields it had no column for in the `extra` jsonb column; the last statements move
 * those of the new columns out of it (strings into text columns, objects into jsonb columns;
 * anything else stays in `extra`, which is read over the columns), so queries on the new columns
 * also see rows written by release 0.1 and every row reads back exactly as before.
 */
export const storageV2: PostgresMigration = {
  version: 2,
  name: 'storage v2: agent names, child sessions, forks, compaction, leases',
  up(schema: SchemaModule, context: PostgresMigrationContext): CompiledQuery[] {
    const text = sql`text collate "C"`
    return [
      schema
        .alterTable('sessions')
        .addColumn('active_agent', 'text')
        .addColumn('parent_session_id', text)
        .addColumn('parent_tool_use_id', 'text')
        .addColumn('forked_from', 'jsonb')
        .addColumn('lease_owner', text)
        .addColumn('lease_expires_at', 'timestamptz')
        .compile(),
      schema.alterTable('messages').addColumn('agent_name', text).addColumn('compaction', 'jsonb').compile(),
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
      context.compile(sql`update ${context.table('sessions')} set
  active_agent = case when jsonb_typeof(extra -> 'activeAgent') = 'string' then extra ->> 'activeAgent' end,
  parent_session_id = case when jsonb_typeof(extra -> 'parentSessionId') = 'string' then extra ->> 'parentSessionId' end,
  parent_tool_use_id = case when jsonb_typeof(extra -> 'parentToolUseId') = 'string' then extra ->> 'parentToolUseId' end,
  forked_from = case when jsonb_typeof(extra -> 'forkedFrom') = 'object' then extra -> 'forkedFrom' end,
  extra = nullif(extra - array_remove(array[
    case when jsonb_typeof(extra -> 'activeAgent') = 'string' then 'activeAgent' end,
    case when jsonb_typeof(extra -> 'parentSessionId') = 'string' then 'parentSessionId' end,
    case when jsonb_typeof(extra -> 'parentToolUseId') = 'string' then 'parentToolUseId' end,
    case when jsonb_typeof(extra -> 'forkedFrom') = 'object' then 'forkedFrom' end], null), '{}'::jsonb)
where extra ?| array['activeAgent', 'parentSessionId', 'parentToolUseId', 'forkedFrom']`),
      context.compile(sql`update ${context.table('messages')} set
  agent_name = case when jsonb_typeof(extra -> 'agentName') = 'string' then extra ->> 'agentName' end,
  compaction = case when jsonb_typeof(extra -> 'compaction') = 'object' then extra -> 'compaction' end,
  extra = nullif(extra - array_remove(array[
    case when jsonb_typeof(extra -> 'agentName') = 'string' then 'agentName' end,
    case when jsonb_typeof(extra -> 'compaction') = 'object' then 'compaction' end], null), '{}'::jsonb)
where extra ?| array['agentName', 'compaction']`),
    ]
  },
}
