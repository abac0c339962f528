import { type CompiledQuery, type SchemaModule, sql } from 'kysely'
import type { PostgresMigration } from './postgres-migration.js'

/** Version 1: the `sessions` and `messages` tables of the shared AgentX schema and their indexes. */
export const initialSchema: PostgresMigration = {
  version: 1,
  name: 'initial schema',
  up(schema: SchemaModule): CompiledQuery[] {
    // "C": byte order and case-sensitive equality without locale rules, so ids compare exactly
    // and ISO timestamps sort as strings, like compareByActivity in @agentx/core.
    const text = sql`text collate "C"`
    return [
      schema
        .createTable('sessions')
        .addColumn('id', text, (column) => column.primaryKey())
        .addColumn('id_order', 'bytea', (column) => column.notNull())
        .addColumn('summary', 'text', (column) => column.notNull())
        .addColumn('created_at', text, (column) => column.notNull())
        .addColumn('last_activity', text, (column) => column.notNull())
        .addColumn('cwd', 'text')
        .addColumn('model', 'text')
        .addColumn('system_prompt', 'text')
        .addColumn('state', text, (column) => column.notNull())
        .addColumn('provider_session_id', 'text')
        .addColumn('token_usage', 'jsonb', (column) => column.notNull())
        .addColumn('user_id', text)
        .addColumn('app_name', text)
        .addColumn('metadata', 'jsonb')
        .addColumn('extra', 'jsonb')
        .compile(),
      // Listing: newest activity first, optionally scoped by user and/or app or by state. Each
      // index ends with (last_activity, id_order) so a page is read in order without sorting.
      schema.createIndex('sessions_activity').on('sessions').columns(['last_activity', 'id_order']).compile(),
      schema
        .createIndex('sessions_user_activity')
        .on('sessions')
        .columns(['user_id', 'last_activity', 'id_order'])
        .compile(),
      schema
        .createIndex('sessions_app_activity')
        .on('sessions')
        .columns(['app_name', 'last_activity', 'id_order'])
        .compile(),
      schema
        .createIndex('sessions_user_app_activity')
        .on('sessions')
        .columns(['user_id', 'app_name', 'last_activity', 'id_order'])
        .compile(),
      // The kernel lists `state = 'active'` sessions at start-up to mark them interrupted.
      schema
        .createIndex('sessions_state_activity')
        .on('sessions')
        .columns(['state', 'last_activity', 'id_order'])
        .compile(),
      schema
        .createTable('messages')
        .addColumn('session_id', text, (column) => column.notNull())
        .addColumn('id', text, (column) => column.notNull())
        .addColumn('seq', 'bigint', (column) => column.notNull())
        .addColumn('type', text, (column) => column.notNull())
        .addColumn('content', 'jsonb', (column) => column.notNull())
        .addColumn('timestamp', text, (column) => column.notNull())
        .addColumn('usage', 'jsonb')
        .addColumn('stop_reason', text)
        .addColumn('incomplete', 'boolean')
        .addColumn('is_tool_use', 'boolean', (column) => column.notNull().defaultTo(false))
        .addColumn('tool_name', text)
        .addColumn('tool_input', 'jsonb')
        .addColumn('tool_id', text)
        .addColumn('tool_result', 'jsonb')
        .addColumn('metadata', 'jsonb')
        .addColumn('extra', 'jsonb')
        .addPrimaryKeyConstraint('messages_pk', ['session_id', 'id'])
        .addUniqueConstraint('messages_session_seq', ['session_id', 'seq'])
        .addForeignKeyConstraint('messages_session_fk', ['session_id'], 'sessions', ['id'], (constraint) =>
          constraint.onDelete('cascade'),
        )
        .compile(),
      schema
        .createIndex('messages_tool_name')
        .on('messages')
        .columns(['tool_name'])
        .where(sql.ref('is_tool_use'), '=', true)
        .compile(),
    ]
  },
}
