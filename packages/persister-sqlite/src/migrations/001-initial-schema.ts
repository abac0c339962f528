import { type CompiledQuery, type SchemaModule, sql } from 'kysely'
import type { SqliteMigration } from './sqlite-migration.js'

/** Version 1: the `sessions` and `messages` tables of DESIGN.md section 8 and their indexes. */
export const initialSchema: SqliteMigration = {
  version: 1,
  name: 'initial schema',
  up(schema: SchemaModule): CompiledQuery[] {
    // STRICT tables: SQLite stores every value with exactly the declared type instead of
    // converting it by affinity, so what is read back is what was bound.
    const strict = sql`strict`
    return [
      schema
        .createTable('sessions')
        .addColumn('id', 'text', (column) => column.primaryKey().notNull())
        .addColumn('id_order', 'blob', (column) => column.notNull())
        .addColumn('summary', 'text', (column) => column.notNull())
        .addColumn('created_at', 'text', (column) => column.notNull())
        .addColumn('last_activity', 'text', (column) => column.notNull())
        .addColumn('cwd', 'text')
        .addColumn('model', 'text')
        .addColumn('system_prompt', 'text')
        .addColumn('state', 'text', (column) => column.notNull())
        .addColumn('provider_session_id', 'text')
        .addColumn('token_usage', 'text', (column) => column.notNull())
        .addColumn('user_id', 'text')
        .addColumn('app_name', 'text')
        .addColumn('metadata', 'text')
        .addColumn('extra', 'text')
        .modifyEnd(strict)
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
        .addColumn('session_id', 'text', (column) => column.notNull())
        .addColumn('id', 'text', (column) => column.notNull())
        .addColumn('seq', 'integer', (column) => column.notNull())
        .addColumn('type', 'text', (column) => column.notNull())
        .addColumn('content', 'text', (column) => column.notNull())
        .addColumn('timestamp', 'text', (column) => column.notNull())
        .addColumn('usage', 'text')
        .addColumn('stop_reason', 'text')
        .addColumn('incomplete', 'integer')
        .addColumn('is_tool_use', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('tool_name', 'text')
        .addColumn('tool_input', 'text')
        .addColumn('tool_id', 'text')
        .addColumn('tool_result', 'text')
        .addColumn('metadata', 'text')
        .addColumn('extra', 'text')
        .addPrimaryKeyConstraint('messages_pk', ['session_id', 'id'])
        .addUniqueConstraint('messages_session_seq', ['session_id', 'seq'])
        .addForeignKeyConstraint('messages_session_fk', ['session_id'], 'sessions', ['id'], (constraint) =>
          constraint.onDelete('cascade'),
        )
        .modifyEnd(strict)
        .compile(),
      schema
        .createIndex('messages_tool_name')
        .on('messages')
        .columns(['tool_name'])
        .where(sql.ref('is_tool_use'), '=', 1)
        .compile(),
    ]
  },
}
