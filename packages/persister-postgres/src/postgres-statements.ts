import { type Kysely, type RawBuilder, sql } from 'kysely'
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
] as const satisfies ReadonlyArray<readonly [keyof SessionRow, string]>

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

  /** Upserts message rows by `(session_id, id)`; the rows MUST have distinct keys. */
  async upsertMessages(rows: readonly MessageRow[]): Promise<void> {
    await this.#upsertMessages(rows).execute(this.#kysely)
  }

  /** Upserts session rows by `id`; the rows MUST have distinct ids. */
  async upsertSessions(rows: readonly SessionRow[]): Promise<void> {
    await this.#upsertSessions(rows).execute(this.#kysely)
  }

  /** A session's messages with `seq > afterSeq`, by seq, at most `limit` (`null`: all). */
  async selectMessages(sessionId: string, afterSeq: number, limit: number | null): Promise<MessageReadRow[]> {
    // `m.seq`: a bare `seq` in ORDER BY would mean the text output column.
    const { rows } =
      await sql<MessageReadRow>`select id, seq::text as seq, type, content::text as content, timestamp,
usage::text as usage, stop_reason, incomplete, metadata::text as metadata, extra::text as extra
from ${this.#messages} as m where m.session_id = ${sessionId} and m.seq > ${afterSeq} order by m.seq limit ${limit}`.execute(
        this.#kysely,
      )
    return rows
  }

  /** Sessions matching `filters`, newest activity first, ties by id descending (UTF-16 order). */
  async selectSessions(
    filters: { id?: string; userId?: string; appName?: string; state?: string },
    limit: number | null,
    offset: number,
  ): Promise<SessionReadRow[]> {
    const conditions: Array<RawBuilder<unknown>> = []
    if (filters.id !== undefined) conditions.push(sql`id = ${filters.id}`)
    if (filters.userId !== undefined) conditions.push(sql`user_id = ${filters.userId}`)
    if (filters.appName !== undefined) conditions.push(sql`app_name = ${filters.appName}`)
    if (filters.state !== undefined) conditions.push(sql`state = ${filters.state}`)
    const where = conditions.length === 0 ? sql`` : sql`where ${sql.join(conditions, sql` and `)}`
    const { rows } =
      await sql<SessionReadRow>`select id, summary, created_at, last_activity, cwd, model, system_prompt,
state, provider_session_id, token_usage::text as token_usage, user_id, app_name, metadata::text as metadata,
extra::text as extra from ${this.#sessions} ${where}
order by last_activity desc, id_order desc limit ${limit} offset ${offset}`.execute(this.#kysely)
    return rows
  }

  /** Deletes a session; the foreign key's `ON DELETE CASCADE` removes its messages in the same statement. */
  async deleteSession(id: string): Promise<void> {
    await sql`delete from ${this.#sessions} where id = ${id}`.execute(this.#kysely)
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
