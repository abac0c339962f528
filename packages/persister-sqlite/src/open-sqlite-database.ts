import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { AnyMessage } from '@agentx/core'
import { PersistenceError } from '@agentx/core'
import BetterSqlite3 from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { checkNodeApi } from './check-node-api.js'
import { mapSqliteError } from './map-sqlite-error.js'
import {
  fromMessageValues,
  MESSAGE_COLUMNS,
  MESSAGE_READ_COLUMNS,
  type MessageReadValues,
  type MessageRow,
} from './message-row.js'
import { SQLITE_MIGRATIONS } from './migrations/index.js'
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
    if (!memory) database.pragma('journal_mode = WAL')
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
    return {
      database,
      kysely,
      writeMessages: prepareWriteMessages(database, kysely),
      readMessages: prepareReadMessages(database, kysely),
      leases: prepareLeases(database),
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
  // Compile with a marker per column, then read back which parameter binds which column.
  const markers = Object.fromEntries(MESSAGE_COLUMNS.map((column) => [column, `\u0000${column}`]))
  const compiled = kysely
    .insertInto('messages')
    .values(markers as unknown as MessageRow)
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
    const column = MESSAGE_COLUMNS.find((name) => markers[name] === marker)
    if (column === undefined) throw new Error(`Unexpected parameter ${String(marker)} in the message upsert.`)
    return column
  })
  const upsert = database.prepare(compiled.sql)
  const parameters: unknown[] = new Array(order.length)
  const transaction = database.transaction((rows: readonly MessageRow[]): unknown[] => {
    const failures: unknown[] = new Array(rows.length)
    for (let index = 0; index < rows.length; index++) {
      const row = rows[index]!
      for (let column = 0; column < order.length; column++) parameters[column] = row[order[column]!]
      try {
        upsert.run(parameters)
      } catch (error) {
        if (!database.inTransaction) throw error
        failures[index] = error
      }
    }
    return failures
  })
  return (rows) => transaction.immediate(rows)
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
  const claim = database.prepare(
    `update sessions set lease_owner = @owner, lease_expires_at = @now + @ttl
where id = @id and (lease_owner is null or lease_owner = @owner or lease_expires_at <= @now) returning 1`,
  )
  const exists = database.prepare('select 1 from sessions where id = ?').pluck(true)
  const release = database.prepare(
    'update sessions set lease_owner = null, lease_expires_at = null where id = ? and lease_owner = ?',
  )
  const interrupt = (scope: string) =>
    database.prepare(
      `update sessions set state = 'interrupted' where state = 'active' and (lease_owner is null or lease_expires_at <= ?)${scope}`,
    )
  const interruptAll = interrupt('')
  const interruptUser = interrupt(' and user_id = ?')
  const interruptApp = interrupt(' and app_name = ?')
  const interruptUserApp = interrupt(' and user_id = ? and app_name = ?')
  return {
    claim(id, owner, ttlMs) {
      const now = Date.now()
      if (claim.get({ owner, id, now, ttl: ttlMs }) !== undefined) return true
      return exists.get(id) === undefined ? undefined : false
    },
    release(id, owner) {
      release.run(id, owner)
    },
    markInterrupted(userId, appName) {
      const now = Date.now()
      const statement =
        userId === undefined
          ? appName === undefined
            ? interruptAll.run(now)
            : interruptApp.run(now, appName)
          : appName === undefined
            ? interruptUser.run(now, userId)
            : interruptUserApp.run(now, userId, appName)
      return statement.changes
    },
  }
}
