import type {
  AgentError,
  AgentPersister,
  AnyMessage,
  DeleteSessionsQuery,
  GetMessagesQuery,
  ListSessionsQuery,
  SessionData,
  SessionScope,
} from '@agentx/core'
import {
  checkMessage,
  ConfigurationError,
  rejectUnknownOptions,
  NotFoundError,
  PersistenceError,
  validateClaimArguments,
  validateDeleteSessionsQuery,
  validateListQuery,
  validateMessagesQuery,
  validateReleaseArguments,
  validateSessionData,
} from '@agentx/core'
import type { Kysely } from 'kysely'
import { mapSqliteError, sqliteCode } from './map-sqlite-error.js'
import { type MessageRow, toMessageRow } from './message-row.js'
import { openSqliteDatabase, type SqliteConnection } from './open-sqlite-database.js'
import { fromSessionRow, SESSION_READ_COLUMNS, type SessionReadRow, toSessionRow } from './session-row.js'
import type { Database } from './sqlite-schema.js'
import { deleteSessionTrees } from './delete-session-trees.js'
import { keyText } from './text-fields.js'

/** Options of {@link SqlitePersister}. */
/** The options {@link SqlitePersister} knows (the compiler checks the list is whole); any other key is refused. */
const OPTION_KEYS = Object.keys({
  filename: true,
  busyTimeoutMs: true,
  synchronous: true,
  maxBatchSize: true,
} satisfies Record<keyof SqlitePersisterOptions, true>)

export interface SqlitePersisterOptions {
  /**
   * The database file, or `':memory:'` for a private in-memory database. Missing parent folders
   * are created. The agent's default is `<workspace>/.agentx/data/agent.db`.
   */
  filename: string
  /**
   * How long a write waits for another connection's lock before it rejects with code `BUSY`
   * (retryable). The wait blocks this thread, as every better-sqlite3 call does. Default is `5000`.
   */
  busyTimeoutMs?: number
  /**
   * SQLite's `synchronous` setting. `'normal'` (with WAL) never loses a committed write when the
   * process crashes, only possibly the last ones on power loss; `'full'` also survives power loss at
   * the cost of an fsync per transaction. Default is `'normal'`.
   */
  synchronous?: 'normal' | 'full'
  /**
   * Most `saveMessage` calls written in one transaction. Larger batches save little per message
   * and keep more serialised rows alive at once (measured with ~1 KB messages: 250 used ~8 % less
   * CPU than 1000). Default is `250`.
   */
  maxBatchSize?: number
}

type Job =
  | { kind: 'message'; row: MessageRow; resolve: () => void; reject: (error: AgentError) => void }
  | {
      kind: 'task'
      action: string
      run: (connection: SqliteConnection) => unknown
      resolve: (value: unknown) => void
      reject: (error: AgentError) => void
    }

/**
 * The default {@link AgentPersister} of AgentX: sessions and messages in a SQLite file, through
 * Kysely and better-sqlite3.
 *
 * Constructing it does no I/O: the file (and its missing folders) is opened and migrated on first
 * use. Every call joins one queue that runs in call order, so a read sees every write issued
 * before it, even unawaited ones. `saveMessage` calls that arrive together — the kernel's
 * fire-and-forget writes — are written in one transaction, and each call still settles on its
 * own: one bad message does not fail the others.
 *
 * @example
 * ```ts
 * const persister = createSqlitePersister({ filename: './agent.db' })
 * const agent = createAgent({ model: 'claude-sonnet-5-5' }, { persister })
 * ```
 */
export class SqlitePersister implements AgentPersister {
  readonly specificationVersion = 'v1' as const
  /** The database file, as given. */
  readonly filename: string
  readonly #busyTimeoutMs: number
  readonly #synchronous: 'normal' | 'full'
  readonly #maxBatchSize: number
  #connection: SqliteConnection | undefined
  #queue: Job[] = []
  #draining: Promise<void> | undefined
  #closing: Promise<void> | undefined

  constructor(options: SqlitePersisterOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new ConfigurationError('SqlitePersister needs options: { filename }.')
    }
    rejectUnknownOptions(options, OPTION_KEYS, 'SqlitePersister')
    if (typeof options.filename !== 'string' || options.filename.length === 0) {
      throw new ConfigurationError("SqlitePersister options.filename must be a file path or ':memory:'.")
    }
    this.filename = options.filename
    this.#busyTimeoutMs = positiveInteger(options.busyTimeoutMs, 'busyTimeoutMs', 5000, true)
    this.#maxBatchSize = positiveInteger(options.maxBatchSize, 'maxBatchSize', 250, false)
    const synchronous = options.synchronous ?? 'normal'
    if (synchronous !== 'normal' && synchronous !== 'full') {
      throw new ConfigurationError("SqlitePersister options.synchronous must be 'normal' or 'full'.")
    }
    this.#synchronous = synchronous
  }

  saveSession(session: SessionData): Promise<void> {
    return this.#task('save a session', () => {
      const row = toSessionRow(validateSessionData(session))
      return (connection) => {
        connection.upsertSession(row)
      }
    }) as Promise<void>
  }

  getSession(id: string): Promise<SessionData | null> {
    return this.#task('read a session', () => {
      const key = keyText(id, 'id')
      return (connection) => {
        const row = connection.selectSession(key)
        return row === undefined ? null : fromSessionRow(row)
      }
    }) as Promise<SessionData | null>
  }

  /** Every session, children included, newest activity first. */
  getAllSessions(): Promise<SessionData[]> {
    return this.listSessions({ includeChildren: true })
  }

  listSessions(query: ListSessionsQuery = {}): Promise<SessionData[]> {
    return this.#task('list sessions', () => {
      const states = validateListQuery(query)
      const userId = query.userId === undefined ? undefined : keyText(query.userId, 'query.userId')
      const appName = query.appName === undefined ? undefined : keyText(query.appName, 'query.appName')
      const metadata =
        query.metadata === undefined
          ? undefined
          : { key: keyText(query.metadata.key, 'query.metadata.key'), value: query.metadata.value }
      if (typeof metadata?.value === 'string') keyText(metadata.value, 'query.metadata.value')
      const { limit, offset, includeChildren } = query
      return (connection) => {
        if (limit === 0 || states?.length === 0) return []
        const filters = { userId, appName, states, topLevelOnly: includeChildren !== true }
        const select =
          metadata === undefined
            ? listingQuery(connection.kysely, filters)
            : metadataListingQuery(connection.kysely, filters, metadata.key, metadata.value)
        return connection.all<SessionReadRow>(page(select, limit, offset).compile()).map(fromSessionRow)
      }
    }) as Promise<SessionData[]>
  }

  deleteSession(id: string): Promise<void> {
    return this.#task('delete a session', () => {
      const key = keyText(id, 'id')
      return (connection) => {
        // Child sessions go with their parent; the foreign key's ON DELETE CASCADE removes the
        // messages in the same statement.
        deleteSessionTrees(connection.database, { id: key })
      }
    }) as Promise<void>
  }

  saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      try {
        this.#assertOpen()
        const row = toMessageRow(sessionId, checkMessage(sessionId, message))
        this.#enqueue({ kind: 'message', row, resolve, reject })
      } catch (error) {
        reject(mapSqliteError(error, 'save a message', this.filename))
      }
    })
  }

  getMessages(sessionId: string, query: GetMessagesQuery = {}): Promise<AnyMessage[]> {
    return this.#task('read messages', () => {
      const key = keyText(sessionId, 'sessionId')
      validateMessagesQuery(query)
      const { afterSeq, beforeSeq, limit } = query
      return (connection) => {
        if (limit === 0) return []
        // Every stored seq is a safe integer >= 0: -1 means "from the start", 2^53 "to the end";
        // LIMIT -1 means "no limit".
        return connection.readMessages(
          key,
          Math.max(-1, afterSeq ?? -1),
          Math.min(MAX_SEQ_BOUND, beforeSeq ?? MAX_SEQ_BOUND),
          limit ?? -1,
          beforeSeq !== undefined,
        )
      }
    }) as Promise<AnyMessage[]>
  }

  deleteMessages(sessionId: string): Promise<void> {
    return this.#task('delete messages', () => {
      const key = keyText(sessionId, 'sessionId')
      return (connection) => {
        connection.deleteMessages(key)
      }
    }) as Promise<void>
  }

  /**
   * Claims the lease on a session (capability `leases`): one conditional `UPDATE`, atomic across
   * every process that opens the file. It runs at once, after the calls already queued (at most
   * one batch: a full batch is written as soon as it is queued), so a renewal never waits for a
   * burst of messages and a claim sees a session whose `saveSession` was called before it.
   */
  claimSession(id: string, owner: string, ttlMs: number): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      try {
        this.#assertOpen()
        validateClaimArguments(id, owner, ttlMs)
        const key = keyText(id, 'id')
        const holder = keyText(owner, 'owner')
        this.#run()
        const claimed = this.#open().leases.claim(key, holder, ttlMs)
        if (claimed === undefined) reject(new NotFoundError(`Cannot claim session ${id}: it does not exist.`))
        else resolve(claimed)
      } catch (error) {
        reject(mapSqliteError(error, 'claim a session', this.filename))
      }
    })
  }

  /** Releases `owner`'s lease on a session; anything else is a no-op (capability `leases`). */
  releaseSession(id: string, owner: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      try {
        this.#assertOpen()
        validateReleaseArguments(id, owner)
        this.#open().leases.release(keyText(id, 'id'), keyText(owner, 'owner'))
        resolve()
      } catch (error) {
        reject(mapSqliteError(error, 'release a session', this.filename))
      }
    })
  }

  /**
   * Marks `interrupted` every `active` session of the scope without a live lease, in one
   * statement (capability `leases`); resolves to how many.
   */
  markInterrupted(scope: SessionScope = {}): Promise<number> {
    return this.#task('mark interrupted sessions', () => {
      validateListQuery(scope)
      const userId = scope.userId === undefined ? undefined : keyText(scope.userId, 'scope.userId')
      const appName = scope.appName === undefined ? undefined : keyText(scope.appName, 'scope.appName')
      return (connection) => connection.leases.markInterrupted(userId, appName)
    }) as Promise<number>
  }

  /**
   * Deletes the sessions retention selects, with their messages and child sessions (capability
   * `retention`), in chunks of at most 500 sessions per transaction so that other processes get
   * the write lock in between. Resolves to how many sessions were removed.
   */
  deleteSessions(query: DeleteSessionsQuery): Promise<number> {
    return this.#task('delete sessions', () => {
      const { lastActivityBefore, states, userId, appName } = validateDeleteSessionsQuery(query)
      const filters = {
        lastActivityBefore,
        ...(states === undefined ? {} : { states: states.map((state) => keyText(state, 'states')) }),
        ...(userId === undefined ? {} : { userId: keyText(userId, 'query.userId') }),
        ...(appName === undefined ? {} : { appName: keyText(appName, 'query.appName') }),
      }
      return (connection) => (states?.length === 0 ? 0 : deleteSessionTrees(connection.database, filters))
    }) as Promise<number>
  }

  /**
   * The Kysely instance over this persister's database (opened and migrated), for read queries of
   * your own, e.g. over the `tool_name` column. Do not hold a transaction open across awaits on
   * it: the persister shares the connection.
   */
  getKysely(): Promise<Kysely<Database>> {
    return this.#task('open the database', () => (connection) => connection.kysely) as Promise<
      Kysely<Database>
    >
  }

  /**
   * Waits for every call already made (batched writes included), then closes the database.
   * Idempotent; any call made after `close()` rejects with code `CLOSED`.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      while (this.#draining) await this.#draining
      this.#run()
      const connection = this.#connection
      this.#connection = undefined
      if (connection) await connection.close()
    })()
    return this.#closing
  }

  /**
   * Queues a call. `prepare` runs now (validation and copying, so a caller that mutates its input
   * afterwards changes nothing); the function it returns runs in queue order on the open database.
   */
  #task(action: string, prepare: () => (connection: SqliteConnection) => unknown): Promise<unknown> {
    return new Promise((resolve, reject) => {
      try {
        this.#assertOpen()
        this.#enqueue({ kind: 'task', action, run: prepare(), resolve, reject })
      } catch (error) {
        reject(mapSqliteError(error, action, this.filename))
      }
    })
  }

  #enqueue(job: Job): void {
    this.#queue.push(job)
    if (this.#queue.length >= this.#maxBatchSize) {
      // A full batch is written now, with every call queued before it, rather than at the next
      // drain: a burst of unawaited saves then keeps at most one batch of serialised rows in
      // memory instead of all of them, also behind a queued saveSession or read (measured: a
      // 100k-message burst behind one saveSession held ~260 MiB more). Every call is synchronous
      // on better-sqlite3, so call order is kept.
      this.#run()
    }
    // setImmediate (not a microtask): calls made anywhere in this turn of the event loop, across
    // any number of promise chains, join the same batch.
    this.#draining ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.#draining = undefined
      this.#run()
    })
  }

  /** Runs every queued call, in call order: message batches in one transaction each, tasks alone. */
  #run(): void {
    while (this.#queue.length > 0) {
      const head = this.#queue[0]!
      if (head.kind === 'message') {
        this.#writeMessages()
        continue
      }
      this.#queue.shift()
      try {
        head.resolve(head.run(this.#open()))
      } catch (error) {
        head.reject(mapSqliteError(error, head.action, this.filename))
      }
    }
  }

  /** Writes the batch of messages at the head of the queue in one transaction. */
  #writeMessages(): void {
    const jobs = this.#takeMessageBatch()
    let connection: SqliteConnection
    try {
      connection = this.#open()
    } catch (error) {
      const failure = mapSqliteError(error, 'open the database', this.filename)
      for (const job of jobs) job.reject(failure)
      return
    }
    this.#writeBatch(connection, jobs)
  }

  #takeMessageBatch(): Array<Extract<Job, { kind: 'message' }>> {
    let end = 0
    while (end < this.#queue.length && end < this.#maxBatchSize && this.#queue[end]!.kind === 'message') end++
    return this.#queue.splice(0, end) as Array<Extract<Job, { kind: 'message' }>>
  }

  #writeBatch(connection: SqliteConnection, jobs: Array<Extract<Job, { kind: 'message' }>>): void {
    let failures: unknown[]
    try {
      failures = connection.writeMessages(jobs.map((job) => job.row))
    } catch (error) {
      const failure = mapSqliteError(error, `save ${jobs.length} message(s)`, this.filename)
      for (const job of jobs) job.reject(failure)
      return
    }
    for (let index = 0; index < jobs.length; index++) {
      const job = jobs[index]!
      const error = failures[index]
      if (error === undefined) job.resolve()
      else job.reject(this.#messageError(job.row, error))
    }
  }

  #messageError(row: MessageRow, error: unknown): AgentError {
    const code = sqliteCode(error)
    if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY') {
      return new NotFoundError(`Cannot save message ${row.id}: session ${row.session_id} does not exist.`, {
        cause: error,
      })
    }
    if (code === 'SQLITE_CONSTRAINT_UNIQUE') {
      return new PersistenceError(
        `Cannot save message ${row.id}: session ${row.session_id} already has another message at seq ${row.seq}.`,
        { code: 'CONFLICT', cause: error },
      )
    }
    return mapSqliteError(error, `save message ${row.id}`, this.filename)
  }

  #open(): SqliteConnection {
    this.#connection ??= openSqliteDatabase({
      filename: this.filename,
      busyTimeoutMs: this.#busyTimeoutMs,
      synchronous: this.#synchronous,
    })
    return this.#connection
  }

  #assertOpen(): void {
    if (this.#closing)
      throw new PersistenceError(`This SqlitePersister (${this.filename}) is closed.`, { code: 'CLOSED' })
  }
}

/** Above every stored seq (they are safe integers): the `beforeSeq` of "no upper bound". */
const MAX_SEQ_BOUND = 2 ** 53

/** The filters of a listing other than metadata, values already checked. */
interface ListingFilters {
  userId: string | undefined
  appName: string | undefined
  states: readonly string[] | undefined
  topLevelOnly: boolean
}

/**
 * The sessions that `filters` select, newest activity first: a range of one of the listing
 * indexes (the partial ones of top-level sessions unless children are asked for).
 */
function listingQuery(kysely: Kysely<Database>, filters: ListingFilters) {
  let select = kysely.selectFrom('sessions').select(SESSION_READ_COLUMNS)
  if (filters.userId !== undefined) select = select.where('user_id', '=', filters.userId)
  if (filters.appName !== undefined) select = select.where('app_name', '=', filters.appName)
  if (filters.states !== undefined) select = select.where('state', 'in', filters.states)
  if (filters.topLevelOnly) select = select.where('parent_session_id', 'is', null)
  return select.orderBy('last_activity', 'desc').orderBy('id_order', 'desc')
}

/**
 * The sessions whose metadata holds exactly `value` at the top-level `key`, and that `filters`
 * select, newest activity first: read from the `session_metadata_lookup` index (schema 3) in
 * listing order, each joined to its session by id, until the page is full. The index holds every
 * top-level string, number and boolean with its JSON type, so `1`, `'1'` and `true` differ and any
 * key works (dots, quotes, `$`).
 */
function metadataListingQuery(
  kysely: Kysely<Database>,
  filters: ListingFilters,
  key: string,
  value: string | number | boolean,
) {
  const [type, stored] =
    typeof value === 'string'
      ? ['string', value]
      : typeof value === 'number'
        ? ['number', value]
        : ['boolean', value ? 1 : 0]
  let select = kysely
    .selectFrom('session_metadata as m')
    .innerJoin('sessions', 'sessions.id', 'm.session_id')
    .select(SESSION_READ_COLUMNS.map((column) => `sessions.${column}` as const))
    .where('m.key', '=', key)
    .where('m.value_type', '=', type)
    .where('m.value', '=', stored)
  if (filters.userId !== undefined) select = select.where('sessions.user_id', '=', filters.userId)
  if (filters.appName !== undefined) select = select.where('sessions.app_name', '=', filters.appName)
  if (filters.states !== undefined) select = select.where('sessions.state', 'in', filters.states)
  if (filters.topLevelOnly) select = select.where('sessions.parent_session_id', 'is', null)
  return select.orderBy('m.last_activity', 'desc').orderBy('m.id_order', 'desc')
}

/** `select` limited to one page. SQLite needs a LIMIT before an OFFSET; -1 means none. */
function page<Select extends { limit(limit: number): Select; offset(offset: number): Select }>(
  select: Select,
  limit: number | undefined,
  offset: number | undefined,
): Select {
  let paged = select
  if (limit !== undefined || offset !== undefined) paged = paged.limit(limit ?? -1)
  if (offset !== undefined) paged = paged.offset(offset)
  return paged
}

/** Creates a {@link SqlitePersister}: the factory `@agentx/core` calls for its default persister. */
export function createSqlitePersister(options: SqlitePersisterOptions): SqlitePersister {
  return new SqlitePersister(options)
}

function positiveInteger(
  value: number | undefined,
  name: string,
  fallback: number,
  allowZero: boolean,
): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < (allowZero ? 0 : 1)) {
    throw new ConfigurationError(
      `SqlitePersister options.${name} must be a ${allowZero ? 'non-negative' : 'positive'} integer.`,
    )
  }
  return value
}
