import { type CompiledQuery, type SchemaModule, sql } from 'kysely'
import type { PostgresMigration, PostgresMigrationContext } from './postgres-migration.js'

/**
 * Version 3: indexes for the two listing filters that were checked row by row.
 *
 * - `includeChildren: false` (the default of `listSessions`): partial indexes of the top-level
 *   sessions (`parent_session_id is null`) in listing order, alone, per user and/or app and per state, so a
 *   page of top-level sessions is read in order without stepping over child sessions.
 * - `metadata: { key, value }`: a GIN index on `metadata` (`jsonb_path_ops`), which answers the
 *   containment `metadata @> '{"key": value}'`. For a string, number or boolean value containment
 *   is exact equality of the JSON value at that key: `1`, `'1'` and `true` differ, an array `[1]`
 *   or an object holding `1` does not match `1`.
 *
 * The indexes are built in the migration's transaction: writes to `sessions` wait while they are
 * built (a moment for thousands of sessions; measure a table of millions before upgrading).
 */
export const listingIndexes: PostgresMigration = {
  version: 3,
  name: 'listing indexes: top-level sessions, metadata containment',
  up(schema: SchemaModule, context: PostgresMigrationContext): CompiledQuery[] {
    const topLevel = sql.ref('parent_session_id')
    return [
      schema
        .createIndex('sessions_top_activity')
        .on('sessions')
        .columns(['last_activity', 'id_order'])
        .where(topLevel, 'is', null)
        .compile(),
      schema
        .createIndex('sessions_top_user_activity')
        .on('sessions')
        .columns(['user_id', 'last_activity', 'id_order'])
        .where(topLevel, 'is', null)
        .compile(),
      schema
        .createIndex('sessions_top_app_activity')
        .on('sessions')
        .columns(['app_name', 'last_activity', 'id_order'])
        .where(topLevel, 'is', null)
        .compile(),
      schema
        .createIndex('sessions_top_user_app_activity')
        .on('sessions')
        .columns(['user_id', 'app_name', 'last_activity', 'id_order'])
        .where(topLevel, 'is', null)
        .compile(),
      schema
        .createIndex('sessions_top_state_activity')
        .on('sessions')
        .columns(['state', 'last_activity', 'id_order'])
        .where(topLevel, 'is', null)
        .compile(),
      // jsonb_path_ops: smaller and faster than the default jsonb_ops for `@>`, the only operator
      // the persister uses on this column. fastupdate off: a session's few keys go into the index
      // when it is saved instead of into a pending list that every lookup scans until the next
      // (auto)vacuum; the planner also stops ignoring an index with a long pending list.
      context.compile(
        sql`create index sessions_metadata on ${context.table('sessions')} using gin (metadata jsonb_path_ops) with (fastupdate = off)`,
      ),
    ]
  },
}
