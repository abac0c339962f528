import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { AnyMessage } from '@agentx/core'
import { PersistenceError } from '@agentx/core'
import BetterSqlite3 from 'better-sqlite3'
import { type CompiledQuery, Kysely, SqliteDialect, sql } from 'kysely'
import { checkNodeApi } from './check-node-api.js'
import { mapSqliteError, sqliteCode } from './map-sqlite-error.js'
import {
  fromMessageValues,
  MESSAGE_COLUMNS,
  MESSAGE_READ_COLUMNS,
  type MessageReadValues,
  type MessageRow,
} from './message-row.js'
import { SQLITE_MIGRATIONS } from './migrations/index.js'
import { SESSION_READ_COLUMNS, type SessionReadRow, type SessionRow } from './session-row.js'
import { runMigrations } from './migrations/run-migrations.js'
import type { Database } from './sqlite-schema.js'

/** What {@link openSqliteDatabase} needs. */
export interface OpenSqliteDatabaseOptions {
  filename: string
  busyTimeoutMs: number
  synchronous: 'normal' | 'full'
}

/** An open, migrated database: the better-sqlite3 connection, Kysely over it, the hot statements. */
export interface SqliteConnection {
  readonly database: BetterSqlite3.Database
  readonly kysely: Kysely<Database>
  /** Upserts each row; returns, per row, `undefined` or the driver error that rejected it. */
  readonly writeMessages: (rows: readonly MessageRow[]) => unknown[]
  /**
   * A session's messages with `afterSeq < seq < beforeSeq`, by seq, at most `limit` (`-1`: all):
   * the first ones, or with `fromEnd` the last ones (still returned in seq order).
   */
  readonly readMessages: (
    sessionId: string,
    afterSeq: number,
    beforeSeq: number,
    limit: number,
    fromEnd: boolean,
  ) => AnyMessage[]
  /** The lease statements, each one atomic statement (see {@link prepareLeases}). */
  readonly leases: SqliteLeases
  /** Upserts a session row (the lease columns are left as they are). */
  upsertSession(row: SessionRow): void
  /** The row of session `id`, or `undefined`. */
  selectSession(id: string): SessionReadRow | undefined
  /** Deletes every message of a session. */
  deleteMessages(sessionId: string): void
  /** Runs a compiled query synchronously and returns its rows (statements are cached by SQL). */
  all<Row>(query: CompiledQuery): Row[]
  /** Closes the connection (checkpointing the WAL). Idempotent. */
  close(): Promise<void>
}

/** Whether `filename` names an in-memory database rather than a file. */
export function isMemoryFilename(filename: string): boolean {
  return filename === ':memory:'
}

/**
 * Opens (creating it and its missing parent folders if needed) and migrates a SQLite database.
 *
 * Synchronous, like better-sqlite3. A file that is not a SQLite database is detected by the first
 * read, before anything is written, so it is left untouched. Failures are {@link PersistenceError}s,
 * including a Node too old to load the driver (see {@link checkNodeApi}).
 */
export function openSqliteDatabase(options: OpenSqliteDatabaseOptions): SqliteConnection {
  checkNodeApi(process.versions.napi, process.version)
  const { filename } = options
  const memory = isMemoryFilename(filename)
  if (!memory) {
    const folder = dirname(resolve(filename))
    try {
      mkdirSync(folder, { recursive: true })
    } catch (error) {
      const code = (error as { code?: unknown }).code
      throw new PersistenceError(
        `Cannot create the folder ${folder} for the SQLite database ${filename} (${String(code)}): choose a writable location for filename.`,
        { cause: error, retryable: false },
      )
    }
  }
  let database: BetterSqlite3.Database
  try {
    database = new BetterSqlite3(filename, { timeout: options.busyTimeoutMs })
  } catch (error) {
    throw mapSqliteError(error, 'open the database', filename)
  }
  try {
    // A read first: it fails with SQLITE_NOTADB on a foreign file before any pragma writes to it.
    database.pragma('schema_version', { simple: true })
    // 8 KB pages fit several ~1 KB messages each (measured: ~25 % faster writes than 4 KB). Only
    // a new, empty file takes it; an existing file keeps its page size.
    database.pragma('page_size = 8192')
    if (!memory) retryWhileBusy(() => database.pragma('journal_mode = WAL'), options.busyTimeoutMs)
    database.pragma('foreign_keys = ON')
    database.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`)
    // A 32 MB page cache (default 2 MB) keeps the index pages of large sessions hot, and reads of
    // the main file go through a memory map (measured: a 10k-message read ~30 % faster).
    database.pragma('cache_size = -32768')
    if (!memory) {
      database.pragma('mmap_size = 268435456')
      // Checkpoint every 8192 WAL pages (64 MB at 8 KB pages) instead of every 1000: each
      // checkpoint costs two fsyncs, and with the default a burst of ~1 KB messages spent more time
      // in checkpoints than in inserting (measured: ~40 % more write throughput). The WAL file is
      // cut back to 64 MB after a checkpoint resets it.
      database.pragma('wal_autocheckpoint = 8192')
      database.pragma('journal_size_limit = 67108864')
    }
    const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database }) })
    runMigrations(database, kysely, SQLITE_MIGRATIONS, filename)
    // Statements are prepared on first use: opening a file (the agent's initialize()) pays only
    // for what it runs.
    let writeMessages: SqliteConnection['writeMessages'] | undefined
    let readMessages: SqliteConnection['readMessages'] | undefined
    let leases: SqliteLeases | undefined
    return {
      database,
      kysely,
      writeMessages: (rows) => {
        writeMessages ??= prepareWriteMessages(database, kysely)
        return writeMessages(rows)
      },
      readMessages: (sessionId, afterSeq, beforeSeq, limit, fromEnd) => {
        readMessages ??= prepareReadMessages(database, kysely)
        return readMessages(sessionId, afterSeq, beforeSeq, limit, fromEnd)
      },
      get leases() {
        leases ??= prepareLeases(database)
        return leases
      },
      ...prepareSessionStatements(database, kysely),
      async close() {
        // Kysely closes the database only if it ever used it; close it here otherwise.
        await kysely.destroy()
        if (database.open) database.close()
      },
    }
  } catch (error) {
    database.close()
    throw mapSqliteError(error, 'open the database', filename)
  }
}

/**
 * Runs `statement`, trying again while it fails with `SQLITE_BUSY` for up to `timeoutMs`.
 *
 * Switching a file to WAL can fail with `SQLITE_BUSY` at once, without the busy handler waiting:
 * measured with three processes opening one new file at the same instant, 9 of 300 opens failed
 * that way. The wait blocks the thread, as SQLite's own busy handler does; it happens only while
 * another process is opening the same file.
 */
function retryWhileBusy<T>(statement: () => T, timeoutMs: number): T {
  const deadline = Date.now() + timeoutMs
  for (let delayMs = 1; ; delayMs = Math.min(delayMs * 2, 32)) {
    try {
      return statement()
    } catch (error) {
      if (!sqliteCode(error)?.startsWith('SQLITE_BUSY') || Date.now() + delayMs > deadline) throw error
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, delayMs)
    }
  }
}

/**
 * The batched write path of `saveMessage`: Kysely builds the upsert once, better-sqlite3 runs it as
 * a prepared statement for every row inside one `BEGIN IMMEDIATE` transaction.
 *
 * A row that fails (unknown session, seq taken) fails alone: SQLite rolls back only that statement.
 * If SQLite had to roll back the whole transaction (disk full, I/O error), the error is thrown so
 * that every row of the batch fails.
 */
function prepareWriteMessages(
  database: BetterSqlite3.Database,
  kysely: Kysely<Database>,
): (rows: readonly MessageRow[]) => unknown[] {
  const full = prepareUpsert(database, kysely, [])
  // Most rows are plain text or thinking with no tool call, extra field, agent name or compaction:
  // their upsert writes those columns as literals and binds 10 parameters instead of 18 (binding
  // the eight constant columns cost about 8 % of raw better-sqlite3's own write rate).
  const plain = prepareUpsert(database, kysely, CONSTANT_WHEN_PLAIN)
  const transaction = database.transaction((rows: readonly MessageRow[]): unknown[] => {
    const failures: unknown[] = new Array(rows.length)
    for (let index = 0; index < rows.length; index++) {
      const row = rows[index]!
      try {
        if (isPlain(row)) plain(row)
        else full(row)
      } catch (error) {
        if (!database.inTransaction) throw error
        failures[index] = error
      }
    }
    return failures
  })
  return (rows) => transaction.immediate(rows)
}

/** The columns a plain row leaves at these values; see {@link prepareWriteMessages}. */
const CONSTANT_WHEN_PLAIN = [
  ['is_tool_use', 0],
  ['tool_name', null],
  ['tool_input', null],
  ['tool_id', null],
  ['tool_result', null],
  ['extra', null],
  ['agent_name', null],
  ['compaction', null],
] as const satisfies ReadonlyArray<readonly [(typeof MESSAGE_COLUMNS)[number], 0 | null]>

function isPlain(row: MessageRow): boolean {
  return (
    row.is_tool_use === 0 &&
    row.tool_name === null &&
    row.tool_input === null &&
    row.tool_id === null &&
    row.tool_result === null &&
    row.extra === null &&
    row.agent_name === null &&
    row.compaction === null
  )
}

/**
 * The message upsert, compiled by Kysely once, with `constants` written as literals; returns a
 * function that runs it for one row. Each other column is compiled with a marker value, so the
 * order in which the statement binds the columns is read back from the compiled parameters.
 */
function prepareUpsert(
  database: BetterSqlite3.Database,
  kysely: Kysely<Database>,
  constants: ReadonlyArray<readonly [(typeof MESSAGE_COLUMNS)[number], 0 | null]>,
): (row: MessageRow) => void {
  const values: Record<string, unknown> = {}
  for (const column of MESSAGE_COLUMNS) values[column] = `\u0000${column}`
  for (const [column, value] of constants) values[column] = sql.lit(value)
  const compiled = kysely
    .insertInto('messages')
    .values(values as unknown as MessageRow)
    .onConflict((conflict) =>
      conflict.columns(['session_id', 'id']).doUpdateSet((eb) => {
        const set: Record<string, unknown> = {}
        for (const column of MESSAGE_COLUMNS) {
          if (column !== 'session_id' && column !== 'id') set[column] = eb.ref(`excluded.${column}`)
        }
        return set as Partial<MessageRow>
      }),
    )
    .compile()
  const order = compiled.parameters.map((marker) => {
    const column = MESSAGE_COLUMNS.find((name) => values[name] === marker)
    if (column === undefined) throw new Error(`Unexpected parameter ${String(marker)} in the message upsert.`)
    return column
  })
  const upsert = database.prepare(compiled.sql)
  const parameters: unknown[] = new Array(order.length)
  return (row) => {
    for (let column = 0; column < order.length; column++) parameters[column] = row[order[column]!]
    upsert.run(parameters)
  }
}

/** Rows per query of the read path: see {@link prepareReadMessages}. */
const READ_CHUNK = 500

/**
 * The read path of `getMessages`: Kysely builds the query once; better-sqlite3 runs it prepared,
 * returning plain arrays (measured: a 10k-message read takes about half the time of Kysely's
 * per-call compile, prepare and row objects).
 *
 * Rows are read in chunks of {@link READ_CHUNK} (keyset paging on `seq`) inside one read
 * transaction, so the result is one consistent snapshot, and each chunk's raw rows are turned into
 * messages and dropped before the next is read. Holding every raw row of a large session until all
 * are converted kept twice the data alive through garbage collections (measured: a 10k-message
 * read ~25 % faster in chunks of 500).
 */
function prepareReadMessages(
  database: BetterSqlite3.Database,
  kysely: Kysely<Database>,
): (sessionId: string, afterSeq: number, beforeSeq: number, limit: number, fromEnd: boolean) => AnyMessage[] {
  const query = (direction: 'asc' | 'desc') =>
    kysely
      .selectFrom('messages')
      .select(MESSAGE_READ_COLUMNS)
      .where('session_id', '=', '')
      .where('seq', '>', 0)
      .where('seq', '<', 0)
      .orderBy('seq', direction)
      .limit(0)
      .compile()
  const forward = database.prepare(query('asc').sql).raw(true)
  // The last `limit` messages before a seq: read backwards on the (session_id, seq) index.
  const backward = database.prepare(query('desc').sql).raw(true)
  const read = (
    sessionId: string,
    afterSeq: number,
    beforeSeq: number,
    limit: number,
    fromEnd: boolean,
  ): AnyMessage[] => {
    const messages: AnyMessage[] = []
    if (fromEnd && limit >= 0) {
      const rows = backward.all(sessionId, afterSeq, beforeSeq, limit) as MessageReadValues[]
      for (let index = rows.length - 1; index >= 0; index--)
        messages.push(fromMessageValues(rows[index]!, sessionId))
      return messages
    }
    let after = afterSeq
    for (;;) {
      const wanted = limit < 0 ? READ_CHUNK : Math.min(READ_CHUNK, limit - messages.length)
      if (wanted === 0) return messages
      const rows = forward.all(sessionId, after, beforeSeq, wanted) as MessageReadValues[]
      for (let index = 0; index < rows.length; index++)
        messages.push(fromMessageValues(rows[index]!, sessionId))
      if (rows.length < wanted) return messages
      after = rows[rows.length - 1]![1]
    }
  }
  const transaction = database.transaction(read)
  // A nested call (inside a transaction of the caller's own) reads in that transaction.
  return (sessionId, afterSeq, beforeSeq, limit, fromEnd) =>
    database.inTransaction
      ? read(sessionId, afterSeq, beforeSeq, limit, fromEnd)
      : transaction(sessionId, afterSeq, beforeSeq, limit, fromEnd)
}

/** The lease statements of one connection: see {@link prepareLeases}. */
export interface SqliteLeases {
  /** `true` when `owner` now holds the lease, `false` when another owner holds a live one, `undefined` for an unknown session. */
  claim(id: string, owner: string, ttlMs: number): boolean | undefined
  release(id: string, owner: string): void
  /** Marks `active` sessions without a live lease `interrupted`; returns how many. */
  markInterrupted(userId: string | undefined, appName: string | undefined): number
}

/**
 * Leases as single statements. SQLite runs every write under the database's one write lock, so a
 * conditional `UPDATE` is atomic across every connection and process that opens the file: of any
 * number of owners racing for a free session exactly one sees its `WHERE` hold. Time is this
 * machine's clock (`Date.now()`), which every process on one file shares.
 */
function prepareLeases(database: BetterSqlite3.Database): SqliteLeases {
  // Each statement is prepared on its first use: start-up runs only one of them.
  const statements = new Map<string, BetterSqlite3.Statement>()
  const statement = (text: string): BetterSqlite3.Statement => {
    let prepared = statements.get(text)
    if (prepared === undefined) {
      prepared = database.prepare(text)
      statements.set(text, prepared)
    }
    return prepared
  }
  const claim = `update sessions set lease_owner = @owner, lease_expires_at = @now + @ttl
where id = @id and (lease_owner is null or lease_owner = @owner or lease_expires_at <= @now) returning 1`
  return {
    claim(id, owner, ttlMs) {
      const now = Date.now()
      if (statement(claim).get({ owner, id, now, ttl: ttlMs }) !== undefined) return true
      return statement('select 1 from sessions where id = ?').get(id) === undefined ? undefined : false
    },
    release(id, owner) {
      statement(
        'update sessions set lease_owner = null, lease_expires_at = null where id = ? and lease_owner = ?',
      ).run(id, owner)
    },
    markInterrupted(userId, appName) {
      const scope = [
        userId === undefined ? '' : ' and user_id = ?',
        appName === undefined ? '' : ' and app_name = ?',
      ]
      const text = `update sessions set state = 'interrupted' where state = 'active' and (lease_owner is null or lease_expires_at <= ?)${scope.join('')}`
      const values = [
        Date.now(),
        ...(userId === undefined ? [] : [userId]),
        ...(appName === undefined ? [] : [appName]),
      ]
      return statement(text).run(...values).changes
    },
  }
}

/** Session writes and reads as cached prepared statements, compiled by Kysely once (lazily). */
function prepareSessionStatements(
  database: BetterSqlite3.Database,
  kysely: Kysely<Database>,
): Pick<SqliteConnection, 'upsertSession' | 'selectSession' | 'deleteMessages' | 'all'> {
  const cache = new Map<string, BetterSqlite3.Statement>()
  const statement = (text: string): BetterSqlite3.Statement => {
    let prepared = cache.get(text)
    if (prepared === undefined) {
      prepared = database.prepare(text)
      cache.set(text, prepared)
    }
    return prepared
  }
  let upsert: { text: string; columns: readonly (keyof SessionRow)[] } | undefined
  let select: string | undefined
  return {
    upsertSession(row) {
      // Compiled from the first row: every row has the same columns, in the same order.
      upsert ??= (() => {
        const columns = Object.keys(row) as (keyof SessionRow)[]
        const text = kysely
          .insertInto('sessions')
          .values(row)
          .onConflict((conflict) =>
            conflict.column('id').doUpdateSet((eb) => {
              const set: Record<string, unknown> = {}
              for (const column of columns) if (column !== 'id') set[column] = eb.ref(`excluded.${column}`)
              return set as Partial<SessionRow>
            }),
          )
          .compile().sql
        return { text, columns }
      })()
      statement(upsert.text).run(...upsert.columns.map((column) => row[column]))
    },
    selectSession(id) {
      select ??= kysely.selectFrom('sessions').select(SESSION_READ_COLUMNS).where('id', '=', id).compile().sql
      return statement(select).get(id) as SessionReadRow | undefined
    },
    deleteMessages(sessionId) {
      statement('delete from messages where session_id = ?').run(sessionId)
    },
    all<Row>(query: CompiledQuery): Row[] {
      return statement(query.sql).all(...(query.parameters as unknown[])) as Row[]
    },
  }
}
