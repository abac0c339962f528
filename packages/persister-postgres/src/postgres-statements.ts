import { type CompiledQuery, type Kysely, type RawBuilder, sql } from 'kysely'
import type { MessageReadRow, MessageRow } from './message-row.js'
import type { Database } from './postgres-schema.js'
import type { SessionReadRow, SessionRow } from './session-row.js'

/** Columns of a message row with their PostgreSQL types, in the order the upsert binds them. */
const MESSAGE_COLUMNS = [
  ['session_id', 'text'],
  ['id', 'text'],
  ['seq', 'int8'],
  ['type', 'text'],
  ['content', 'jsonb'],
  ['timestamp', 'text'],
  ['usage', 'jsonb'],
  ['stop_reason', 'text'],
  ['incomplete', 'bool'],
  ['is_tool_use', 'bool'],
  ['tool_name', 'text'],
  ['tool_input', 'jsonb'],
  ['tool_id', 'text'],
  ['tool_result', 'jsonb'],
  ['metadata', 'jsonb'],
  ['extra', 'jsonb'],
  ['agent_name', 'text'],
  ['compaction', 'jsonb'],
] as const satisfies ReadonlyArray<readonly [keyof MessageRow, string]>

const SESSION_COLUMNS = [
  ['id', 'text'],
  ['id_order', 'bytea'],
  ['summary', 'text'],
  ['created_at', 'text'],
  ['last_activity', 'text'],
  ['cwd', 'text'],
  ['model', 'text'],
  ['system_prompt', 'text'],
  ['state', 'text'],
  ['provider_session_id', 'text'],
  ['token_usage', 'jsonb'],
  ['user_id', 'text'],
  ['app_name', 'text'],
  ['metadata', 'jsonb'],
  ['extra', 'jsonb'],
  ['active_agent', 'text'],
  ['parent_session_id', 'text'],
  ['parent_tool_use_id', 'text'],
  ['forked_from', 'jsonb'],
] as const satisfies ReadonlyArray<readonly [keyof SessionRow, string]>

/** The filters of {@link PostgresStatements.selectSessions}, values already encoded. */
export interface SessionFilters {
  id?: string
  userId?: string
  appName?: string
  states?: readonly string[]
  /** The JSON text of a one-key object, `{"key": value}` (key and value encoded): see {@link metadataContainment}. */
  metadata?: string
  /** Leave out sessions with a parent. */
  withoutChildren?: boolean
}

/** Which sessions {@link PostgresStatements.deleteSessionTrees} deletes, values already encoded. */
export type SessionTreeRoots =
  | { id: string }
  | { lastActivityBefore: string; states?: readonly string[]; userId?: string; appName?: string }

/** Retention roots selected per statement, so that one statement never holds its locks for long. */
const DELETE_CHUNK = 500

/**
 * The SQL statements of the hot paths, built once per schema with Kysely's `sql` tag.
 *
 * Writes are multi-row upserts that bind one array per column and `unnest` them: one statement
 * with a fixed number of parameters whatever the batch size, so PostgreSQL parses a short text and
 * the driver sends one round trip per batch.
 */
export class PostgresStatements {
  readonly #kysely: Kysely<Database>
  readonly #messages: RawBuilder<unknown>
  readonly #sessions: RawBuilder<unknown>
  readonly #upsertMessages: (rows: readonly MessageRow[]) => RawBuilder<unknown>
  readonly #upsertSessions: (rows: readonly SessionRow[]) => RawBuilder<unknown>

  constructor(kysely: Kysely<Database>, schema: string) {
    this.#kysely = kysely
    this.#messages = sql.id(schema, 'messages')
    this.#sessions = sql.id(schema, 'sessions')
    this.#upsertMessages = upsertStatement(this.#messages, MESSAGE_COLUMNS, ['session_id', 'id'])
    this.#upsertSessions = upsertStatement(this.#sessions, SESSION_COLUMNS, ['id'])
  }

  /** The upsert of message rows by `(session_id, id)`, compiled; the rows MUST have distinct keys. */
  upsertMessages(rows: readonly MessageRow[]): CompiledQuery {
    return this.#upsertMessages(rows).compile(this.#kysely)
  }

  /** The upsert of session rows by `id`, compiled; the rows MUST have distinct ids. */
  upsertSessions(rows: readonly SessionRow[]): CompiledQuery {
    return this.#upsertSessions(rows).compile(this.#kysely)
  }

  /** Runs a compiled statement on a connection of the pool. */
  async execute(query: CompiledQuery): Promise<void> {
    await this.#kysely.executeQuery(query)
  }

  /**
   * A session's messages with `afterSeq < seq < beforeSeq`, by seq, at most `limit` (`null`: all):
   * the first ones, or with `fromEnd` the last ones (read backwards on the `(session_id, seq)`
   * index, returned in seq order).
   */
  async selectMessages(
    sessionId: string,
    afterSeq: number,
    beforeSeq: number,
    limit: number | null,
    fromEnd: boolean,
  ): Promise<MessageReadRow[]> {
    // `m.seq`: a bare `seq` in ORDER BY would mean the text output column.
    const { rows } =
      await sql<MessageReadRow>`select id, seq::text as seq, type, content::text as content, timestamp,
usage::text as usage, stop_reason, incomplete, metadata::text as metadata, extra::text as extra, agent_name,
compaction::text as compaction
from ${this.#messages} as m where m.session_id = ${sessionId} and m.seq > ${afterSeq} and m.seq < ${beforeSeq}
order by m.seq ${fromEnd ? sql`desc` : sql`asc`} limit ${limit}`.execute(this.#kysely)
    if (fromEnd) rows.reverse()
    return rows
  }

  /** Sessions matching `filters`, newest activity first, ties by id descending (UTF-16 order). */
  async selectSessions(
    filters: SessionFilters,
    limit: number | null,
    offset: number,
  ): Promise<SessionReadRow[]> {
    const conditions: Array<RawBuilder<unknown>> = []
    if (filters.id !== undefined) conditions.push(sql`id = ${filters.id}`)
    if (filters.userId !== undefined) conditions.push(sql`user_id = ${filters.userId}`)
    if (filters.appName !== undefined) conditions.push(sql`app_name = ${filters.appName}`)
    if (filters.states !== undefined) {
      conditions.push(
        filters.states.length === 1
          ? sql`state = ${filters.states[0]}`
          : sql`state = any(${sql.val(filters.states)}::text[])`,
      )
    }
    if (filters.withoutChildren) conditions.push(sql`parent_session_id is null`)
    if (filters.metadata !== undefined) {
      // Containment, answered by the GIN index `sessions_metadata` (schema 3).
      conditions.push(sql`metadata @> ${filters.metadata}::jsonb`)
    }
    const where = conditions.length === 0 ? sql`` : sql`where ${sql.join(conditions, sql` and `)}`
    const { rows } =
      await sql<SessionReadRow>`select id, summary, created_at, last_activity, cwd, model, system_prompt,
state, provider_session_id, token_usage::text as token_usage, user_id, app_name, metadata::text as metadata,
extra::text as extra, active_agent, parent_session_id, parent_tool_use_id, forked_from::text as forked_from
from ${this.#sessions} ${where}
order by last_activity desc, id_order desc limit ${limit} offset ${offset}`.execute(this.#kysely)
    return rows
  }

  /**
   * Deletes the selected sessions and every session below them (by `parent_session_id`, any
   * depth); the foreign key's `ON DELETE CASCADE` removes their messages in the same statement.
   * Retention roots go in chunks of {@link DELETE_CHUNK}, one statement each. Returns how many
   * sessions were deleted.
   */
  async deleteSessionTrees(roots: SessionTreeRoots): Promise<number> {
    let seed: RawBuilder<unknown>
    if ('id' in roots) {
      seed = sql`select id from ${this.#sessions} where id = ${roots.id}`
    } else {
      // A session under a live lease runs a send (maybe in another process): retention leaves it.
      const conditions = [
        sql`last_activity < ${roots.lastActivityBefore}`,
        sql`(lease_owner is null or lease_expires_at <= clock_timestamp())`,
        // A child goes with its parent's tree, never on its own (an orphan, whose parent is gone, may go).
        sql`(parent_session_id is null or not exists (select 1 from ${this.#sessions} as parent where parent.id = ${this.#sessions}.parent_session_id))`,
      ]
      if (roots.states !== undefined) conditions.push(sql`state = any(${sql.val(roots.states)}::text[])`)
      if (roots.userId !== undefined) conditions.push(sql`user_id = ${roots.userId}`)
      if (roots.appName !== undefined) conditions.push(sql`app_name = ${roots.appName}`)
      seed = sql`select id from ${this.#sessions} where ${sql.join(conditions, sql` and `)} limit ${DELETE_CHUNK}`
    }
    const statement = sql`with recursive doomed(id) as (
  (${seed}) union select child.id from ${this.#sessions} as child join doomed on child.parent_session_id = doomed.id)
delete from ${this.#sessions} where id in (select id from doomed)`
    let deleted = 0
    for (;;) {
      const result = await statement.execute(this.#kysely)
      const changes = Number(result.numAffectedRows ?? 0n)
      deleted += changes
      if ('id' in roots || changes === 0) return deleted
    }
  }

  /**
   * Claims a lease in one conditional `UPDATE … RETURNING` on the server's clock. Row locking
   * makes it atomic: of owners racing for a free session, the later updates re-check the `WHERE`
   * against the winner's row and match nothing. `undefined` for an unknown session.
   */
  async claimLease(id: string, owner: string, ttlMs: number): Promise<boolean | undefined> {
    const { rows } = await sql<{ claimed: boolean; known: boolean }>`with claimed as (
  update ${this.#sessions} set lease_owner = ${owner},
    lease_expires_at = clock_timestamp() + ${ttlMs} * interval '1 millisecond'
  where id = ${id} and (lease_owner is null or lease_owner = ${owner} or lease_expires_at <= clock_timestamp())
  returning 1)
select exists (select 1 from claimed) as claimed, exists (select 1 from ${this.#sessions} where id = ${id}) as known`.execute(
      this.#kysely,
    )
    const row = rows[0]!
    return row.claimed ? true : row.known ? false : undefined
  }

  /** Ends `owner`'s lease; any other lease is left alone. */
  async releaseLease(id: string, owner: string): Promise<void> {
    await sql`update ${this.#sessions} set lease_owner = null, lease_expires_at = null
where id = ${id} and lease_owner = ${owner}`.execute(this.#kysely)
  }

  /** `active` → `interrupted` for sessions of the scope without a live lease; returns how many. */
  async markInterrupted(userId: string | undefined, appName: string | undefined): Promise<number> {
    const conditions = [
      sql`state = 'active'`,
      sql`(lease_expires_at is null or lease_expires_at <= clock_timestamp())`,
    ]
    if (userId !== undefined) conditions.push(sql`user_id = ${userId}`)
    if (appName !== undefined) conditions.push(sql`app_name = ${appName}`)
    const result = await sql`update ${this.#sessions} set state = 'interrupted'
where ${sql.join(conditions, sql` and `)}`.execute(this.#kysely)
    return Number(result.numAffectedRows ?? 0n)
  }

  /** Deletes a session's messages. */
  async deleteMessages(sessionId: string): Promise<void> {
    await sql`delete from ${this.#messages} where session_id = ${sessionId}`.execute(this.#kysely)
  }
}

/**
 * `insert into table (columns) select * from unnest($1::type[], …) on conflict (keys) do update
 * set every other column = excluded.column`.
 */
function upsertStatement<Row>(
  table: RawBuilder<unknown>,
  columns: ReadonlyArray<readonly [keyof Row & string, string]>,
  keys: ReadonlyArray<keyof Row & string>,
): (rows: readonly Row[]) => RawBuilder<unknown> {
  const names = sql.join(columns.map(([name]) => sql.id(name)))
  const updates = sql.join(
    columns
      .filter(([name]) => !keys.includes(name))
      .map(([name]) => sql`${sql.id(name)} = excluded.${sql.id(name)}`),
  )
  const conflict = sql.join(keys.map((key) => sql.id(key)))
  return (rows) => {
    const arrays = columns.map(([name, type]) => {
      const values = rows.map((row) => row[name])
      // unnest pads shorter arrays with NULL: a column that is NULL in every row is sent as an
      // empty array instead of a thousand NULLs to print and parse.
      const bound = values.every((value) => value === null) ? [] : values
      return sql`${sql.val(bound)}::${sql.raw(type)}[]`
    })
    return sql`insert into ${table} (${names}) select * from unnest(${sql.join(arrays)})
on conflict (${conflict}) do update set ${updates}`
  }
}
