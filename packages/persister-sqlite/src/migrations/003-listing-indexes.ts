import { CompiledQuery, type SchemaModule, sql } from 'kysely'
import type { SqliteMigration } from './sqlite-migration.js'

/**
 * The rows of `session_metadata` for the session row `row` (`new` in a trigger, `sessions` in the
 * backfill, read from `from`): one per top-level key of a metadata object whose value is a string,
 * a number or a boolean. `json_each` reads the key as text, so any key works (dots, quotes, `$`);
 * arrays, objects and `null` are left out, as no filter can ask for them. Metadata that is not an
 * object (only another writer could store one) has no rows.
 */
function metadataRows(row: string, from: string): string {
  return `insert or replace into session_metadata (session_id, key, value_type, value, last_activity, id_order)
select ${row}.id, entry.key,
  case entry.type when 'text' then 'string' when 'true' then 'boolean' when 'false' then 'boolean' else 'number' end,
  entry.value, ${row}.last_activity, ${row}.id_order
from ${from}
where json_type(${row}.metadata) = 'object' and entry.type in ('text', 'integer', 'real', 'true', 'false')`
}

/**
 * Version 3: indexes for the two listing filters that were checked row by row.
 *
 * - `includeChildren: false` (the default of `listSessions`): partial indexes of the top-level
 *   sessions (`parent_session_id is null`) in listing order, alone, per user and/or app and per state, so a
 *   page of top-level sessions is read in order without stepping over child sessions.
 * - `metadata: { key, value }`: the side table `session_metadata` holds one row per top-level
 *   metadata key with a string, number or boolean value, with the session's listing order, indexed
 *   by `(key, value_type, value, last_activity, id_order)`: a filter reads the matching sessions
 *   newest first and stops when the page is full, whether one session matches or most do.
 *   Triggers on `sessions` keep it equal to the `metadata`, `last_activity` and `id_order` columns
 *   in the statement that writes them (every writer, every process), and its foreign key removes
 *   its rows with their session. The type is part of the key, so `1`, `'1'` and `true` differ; `1`
 *   and `1.0` are one number.
 *
 * Existing rows are copied into the side table in the migration's transaction.
 */
export const listingIndexes: SqliteMigration = {
  version: 3,
  name: 'listing indexes: top-level sessions, metadata equality',
  up(schema: SchemaModule): CompiledQuery[] {
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
      // WITHOUT ROWID: the rows live in the primary key's b-tree, and the lookup index below
      // carries (session_id, key) with it, so a lookup never reads the table. `value` is ANY: a
      // string stays text, a number integer or real, a boolean 1 or 0 (told apart by value_type).
      // `last_activity` and `id_order` copy the session's, so that the index is in listing order.
      schema
        .createTable('session_metadata')
        .addColumn('session_id', 'text', (column) =>
          column.notNull().references('sessions.id').onDelete('cascade'),
        )
        .addColumn('key', 'text', (column) => column.notNull())
        .addColumn('value_type', 'text', (column) => column.notNull())
        .addColumn('value', sql`any`, (column) => column.notNull())
        .addColumn('last_activity', 'text', (column) => column.notNull())
        .addColumn('id_order', 'blob', (column) => column.notNull())
        .addPrimaryKeyConstraint('session_metadata_pk', ['session_id', 'key'])
        .modifyEnd(sql`strict, without rowid`)
        .compile(),
      schema
        .createIndex('session_metadata_lookup')
        .on('session_metadata')
        .columns(['key', 'value_type', 'value', 'last_activity', 'id_order'])
        .compile(),
      // `or replace`: a metadata text with a repeated key (only another writer can make one) keeps
      // the last value, the one JSON.parse reads back.
      CompiledQuery.raw(`create trigger sessions_metadata_insert after insert on sessions
when new.metadata is not null
begin
  ${metadataRows('new', 'json_each(new.metadata) as entry')};
end`),
      // Only when the metadata changed: saving a session with the same metadata (the kernel does at
      // the end of every send) only moves its rows (next trigger).
      CompiledQuery.raw(`create trigger sessions_metadata_update after update of metadata on sessions
when new.metadata is not old.metadata
begin
  delete from session_metadata where session_id = old.id;
  ${metadataRows('new', 'json_each(new.metadata) as entry')};
end`),
      // A session saved with new activity and the same metadata (every send) moves its rows in the
      // listing order.
      CompiledQuery.raw(`create trigger sessions_metadata_activity after update of last_activity, id_order on sessions
when new.metadata is old.metadata and (new.last_activity is not old.last_activity or new.id_order is not old.id_order)
begin
  update session_metadata set last_activity = new.last_activity, id_order = new.id_order where session_id = new.id;
end`),
      CompiledQuery.raw(metadataRows('sessions', 'sessions, json_each(sessions.metadata) as entry')),
    ]
  },
}
