import type {
  AgentError,
  AgentPersister,
  AnyMessage,
  DeleteSessionsQuery,
  GetMessagesQuery,
  ListSessionsQuery,
  Logger,
  RetryOptions,
  SessionData,
  SessionScope,
} from '@agentx/core'
import {
  backoffDelay,
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
import { type CompiledQuery, Kysely, PostgresDialect } from 'kysely'
import { isRowError, isTransientError, mapPostgresError, postgresCode } from './map-postgres-error.js'
import { fromMessageRow, type MessageRow, toMessageRow } from './message-row.js'
import { POSTGRES_MIGRATIONS } from './migrations/index.js'
import { runMigrations } from './migrations/run-migrations.js'
import { openPostgresPool } from './open-postgres-pool.js'
import type { PgPool } from './pg-pool.js'
import type { Database } from './postgres-schema.js'
import { PostgresStatements, type SessionFilters } from './postgres-statements.js'
import { fromSessionRow, toSessionRow } from './session-row.js'
import { encodeJson, keyText } from './text-fields.js'
import { WriteConnection } from './write-connection.js'
import {
  dependsOnSessionOf,
  joinStep,
  planWriteStep,
  RunningFootprint,
  type Settle,
  type WriteJob,
  type WriteStep,
} from './write-step.js'

/** Options of {@link PostgresPersister}. Give exactly one of `connectionString` and `pool`. */
/** The options {@link PostgresPersister} knows (the compiler checks the list is whole); any other key is refused. */
const OPTION_KEYS = Object.keys({
  connectionString: true,
  pool: true,
  schema: true,
  poolSize: true,
  connectTimeoutMs: true,
  statementTimeoutMs: true,
  applicationName: true,
  retry: true,
  maxBatchSize: true,
  writeConcurrency: true,
  logger: true,
} satisfies Record<keyof PostgresPersisterOptions, true>)

export interface PostgresPersisterOptions {
  /**
   * A libpq-style URL, e.g. `postgres://user:password@127.0.0.1:5432/app`. The persister creates
   * its own `pg.Pool` and ends it on `close()`. Credentials never appear in its errors or logs.
   */
  connectionString?: string | undefined
  /**
   * An existing `pg.Pool` to share with the application. The persister never ends it (`close()`
   * only stops using it) and does not change its configuration: attach a `pool.on('error', …)`
   * listener yourself, as pg requires.
   */
  pool?: PgPool
  /**
   * The PostgreSQL schema of AgentX's tables, created on first use if missing; one per tenant for
   * multi-tenant installs. 1 to 63 ASCII letters, digits, `_`, `$` or `-`, not starting with
   * `pg_`; always quoted in SQL, so it is case-sensitive. Default is `'public'`.
   */
  schema?: string
  /** Most connections of the pool the persister creates. Ignored with `pool`. Default is `10`. */
  poolSize?: number
  /** How long connecting may take before it fails, in ms (pool created by the persister only). Default is `10000`. */
  connectTimeoutMs?: number
  /**
   * PostgreSQL's `statement_timeout` for the connections of the pool the persister creates: a
   * statement running longer is cancelled and the call rejects with a retryable
   * `PersistenceError` of code `BUSY`. Not allowed with `pool` (configure your pool instead).
   * Default is none.
   */
  statementTimeoutMs?: number
  /** `application_name` of the connections the persister creates (shown in `pg_stat_activity`). Default is `'agentx'`. */
  applicationName?: string
  /**
   * Retries of a statement whose connection failed or was lost (server restart, failover,
   * terminated backend) or that lost a deadlock: exponential backoff with jitter, on a new
   * connection. Every statement is an idempotent upsert, delete or read, so a retry never
   * duplicates anything. `maxRetries: 0` disables retries. Default is
   * `{ maxRetries: 8, initialDelayMs: 100, maxDelayMs: 2000 }` (about ten seconds in all).
   */
  retry?: RetryOptions
  /** Most `saveMessage` calls written in one statement. Default is `1000`. */
  maxBatchSize?: number
  /**
   * How many write statements the server runs at once. With a `connectionString`, the number of
   * write connections the persister opens beside its pool, each pipelined (see
   * {@link PostgresPersister}); with a `pool`, the most statements in flight on its connections,
   * each on its own. Batches run beside each other only when they touch different rows, so every
   * call keeps the outcome it has in call order. Default is `2`.
   */
  writeConcurrency?: number
  /** Receives a warning for each retried statement. Default is none. */
  logger?: Logger
}

type Outcome = { job: WriteJob; error?: AgentError; value?: unknown }

/** The step at the head of the queue, planned up to `end` (exclusive). */
interface PlannedStep {
  head: number
  end: number
  /** No later call can join it: it is full, a task, or a call after it did not fit. */
  complete: boolean
  step: WriteStep
}

/** A step being written. */
interface RunningStep extends WriteStep {
  /** The write connection it was sent on (an index of the persister's lanes), or `-1` for the pool. */
  readonly lane: number
  /** Steps sent before it on its lane that upsert a session it writes messages into. */
  readonly after: readonly RunningStep[]
  /** Resolves when the step has finished and its calls have settled. */
  readonly finished: Promise<void>
  readonly finish: () => void
}

/**
 * Most statements in flight at once on one write connection. They are written to the socket when
 * sent, so this bounds what a burst keeps in the connections' buffers (at the default batch size
 * of 1,000 messages of ~1 KB: 4 MB per connection) beside the rows still queued.
 */
const PIPELINE_DEPTH = 4

/** 1–63 ASCII letters, digits, `_`, `$` or `-`; always quoted in SQL, so case and `-` are kept. */
const SCHEMA_NAME = /^[A-Za-z0-9_$-]{1,63}$/
const DEFAULT_RETRY: Required<RetryOptions> = { maxRetries: 8, initialDelayMs: 100, maxDelayMs: 2000 }

/**
 * An {@link AgentPersister} over PostgreSQL (pg + Kysely), safe for many application processes
 * sharing one database.
 *
 * Constructing it does no I/O. On first use it brings its schema up to date with versioned
 * migrations, in one transaction under an advisory lock, so processes starting together migrate
 * once. Writes are upserts keyed by id (`(session_id, id)` for messages, with `(session_id, seq)`
 * unique), so processes never duplicate each other's rows.
 *
 * Writes run in call order. `saveMessage` calls that arrive together — the kernel's
 * fire-and-forget writes — are written as one multi-row upsert, and each call still settles on
 * its own: one bad message does not fail the others. A read waits for the writes issued before
 * it, so it sees them, and runs beside later writes on another connection. A statement whose
 * connection is lost is retried on a new one (see {@link PostgresPersisterOptions.retry}).
 *
 * With a `connectionString`, upserts go over connections of their own (`writeConcurrency` of them,
 * beside the `poolSize` of the pool) in pg's pipeline mode: a batch is sent as soon as no later
 * call can join it — also in the middle of a burst issued in one synchronous loop, so that the
 * server works while the application is still encoding — and up to 4 statements are in flight on
 * each, which the server runs in order without a round trip in between. Deletes, reads and leases
 * use the pool. A persister given a `pool` writes through that pool only.
 *
 * @example
 * ```ts
 * const persister = createPostgresPersister({ connectionString: process.env.DATABASE_URL })
 * const agent = createAgent({ model: 'claude-sonnet-5-5' }, { persister })
 * ```
 */
export class PostgresPersister implements AgentPersister {
  readonly specificationVersion = 'v1' as const
  /** The schema holding AgentX's tables. */
  readonly schema: string
  /** The server as `host:port/database`, without credentials. */
  readonly server: string
  readonly #kysely: Kysely<Database>
  readonly #statements: PostgresStatements
  readonly #retry: Required<RetryOptions>
  readonly #maxBatchSize: number
  readonly #logger: Logger | undefined
  #migrated: Promise<void> | undefined
  /** Whether the schema is migrated (so steps may start synchronously). */
  #isReady = false
  readonly #writeConcurrency: number
  /** The write connections (lanes); none for a pool passed in. */
  readonly #lanes: readonly WriteConnection[]
  /** Steps in flight on each lane. */
  readonly #laneLoad: number[]
  /** Queued write calls in call order; `#queue[#head]` is the oldest not yet started. */
  #queue: WriteJob[] = []
  #head = 0
  /** The step planned from the head of the queue (see `#planHead`). */
  #planned: PlannedStep | undefined
  /** The steps being written, oldest first. */
  readonly #running: RunningStep[] = []
  readonly #footprint = new RunningFootprint()
  /** Steps in flight on the pool. */
  #onPool = 0
  /** Resolves when nothing is queued or running; `undefined` while idle. */
  #idle: { promise: Promise<void>; resolve: () => void } | undefined
  #kickScheduled = false
  /** The `index` the next write call gets. */
  #nextIndex = 0
  /** Reads waiting for the writes issued before them: they run once no write below `before` is pending. */
  #waitingReads: Array<{ before: number; start: () => void }> = []
  readonly #reads = new Set<Promise<unknown>>()
  #closing: Promise<void> | undefined

  constructor(options: PostgresPersisterOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new ConfigurationError('PostgresPersister needs options: { connectionString } or { pool }.')
    }
    rejectUnknownOptions(options, OPTION_KEYS, 'PostgresPersister')
    const { connectionString, pool } = options
    if ((connectionString === undefined) === (pool === undefined)) {
      throw new ConfigurationError(
        'connectionString' in options && connectionString === undefined && pool === undefined
          ? 'PostgresPersister: options.connectionString is undefined (is the environment variable it is read from set?); give a connection string or a pool.'
          : 'PostgresPersister needs exactly one of options.connectionString and options.pool.',
      )
    }
    if (
      connectionString !== undefined &&
      (typeof connectionString !== 'string' || connectionString.length === 0)
    ) {
      throw new ConfigurationError('PostgresPersister options.connectionString must be a non-empty string.')
    }
    if (
      pool !== undefined &&
      (typeof pool !== 'object' || pool === null || typeof pool.connect !== 'function')
    ) {
      throw new ConfigurationError('PostgresPersister options.pool must be a pg.Pool.')
    }
    const schema = options.schema ?? 'public'
    if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema) || /^pg_/i.test(schema)) {
      throw new ConfigurationError(
        `PostgresPersister options.schema must be 1 to 63 ASCII letters, digits, _, $ or - and not start with pg_ (reserved by PostgreSQL), got ${JSON.stringify(schema)}.`,
      )
    }
    if (pool !== undefined && options.statementTimeoutMs !== undefined) {
      throw new ConfigurationError(
        'PostgresPersister options.statementTimeoutMs applies to a pool the persister creates; set statement_timeout in the config of the pool you pass instead.',
      )
    }
    this.schema = schema
    this.#maxBatchSize = integerOption(options.maxBatchSize, 'maxBatchSize', 1000, 1)
    this.#writeConcurrency = integerOption(options.writeConcurrency, 'writeConcurrency', 2, 1)
    this.#retry = retryOptions(options.retry)
    this.#logger = options.logger
    const handle = openPostgresPool({
      connectionString,
      pool,
      poolSize: integerOption(options.poolSize, 'poolSize', 10, 1),
      connectTimeoutMs: integerOption(options.connectTimeoutMs, 'connectTimeoutMs', 10_000, 0),
      statementTimeoutMs:
        options.statementTimeoutMs === undefined
          ? undefined
          : integerOption(options.statementTimeoutMs, 'statementTimeoutMs', 0, 1),
      applicationName: typeof options.applicationName === 'string' ? options.applicationName : 'agentx',
      logger: options.logger,
    })
    this.server = `${handle.server}, schema ${schema}`
    const createWriteClient = handle.createWriteClient
    this.#lanes =
      createWriteClient === undefined
        ? []
        : Array.from(
            { length: this.#writeConcurrency },
            () => new WriteConnection(createWriteClient, this.server, this.#logger),
          )
    this.#laneLoad = this.#lanes.map(() => 0)
    this.#kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: handle.dialectPool }) })
    this.#statements = new PostgresStatements(this.#kysely, schema)
  }

  saveSession(session: SessionData): Promise<void> {
    return this.#write('save a session', (settle) => ({
      kind: 'session',
      row: toSessionRow(validateSessionData(session)),
      ...settle,
    }))
  }

  getSession(id: string): Promise<SessionData | null> {
    return this.#read('read a session', () => {
      const key = keyText(id, 'id')
      return async (statements) => {
        const [row] = await statements.selectSessions({ id: key }, 1, 0)
        return row === undefined ? null : fromSessionRow(row)
      }
    })
  }

  /** Every session, children included, newest activity first. */
  getAllSessions(): Promise<SessionData[]> {
    return this.listSessions({ includeChildren: true })
  }

  listSessions(query: ListSessionsQuery = {}): Promise<SessionData[]> {
    return this.#read('list sessions', () => {
      const states = validateListQuery(query)
      const filters: SessionFilters = { withoutChildren: query.includeChildren !== true }
      if (query.userId !== undefined) filters.userId = keyText(query.userId, 'query.userId')
      if (query.appName !== undefined) filters.appName = keyText(query.appName, 'query.appName')
      if (states !== undefined) filters.states = states.map((state) => keyText(state, 'query.state'))
      if (query.metadata !== undefined) {
        filters.metadata = metadataContainment(
          keyText(query.metadata.key, 'query.metadata.key'),
          query.metadata.value,
        )
      }
      const { limit, offset } = query
      return async (statements) => {
        if (limit === 0 || states?.length === 0) return []
        const rows = await statements.selectSessions(filters, limit ?? null, offset ?? 0)
        return rows.map(fromSessionRow)
      }
    })
  }

  deleteSession(id: string): Promise<void> {
    return this.#write('delete a session', (settle) => {
      const key = keyText(id, 'id')
      return {
        kind: 'task',
        action: 'delete a session',
        // Child sessions go with their parent.
        run: async (statements) => {
          await statements.deleteSessionTrees({ id: key })
        },
        ...settle,
      }
    })
  }

  saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
    return this.#write('save a message', (settle) => {
      // Checked without a deep copy: the row built now is the copy (serialised before this returns).
      const row = toMessageRow(checkMessage(sessionId, message), sessionId)
      return { kind: 'message', row, ...settle }
    })
  }

  getMessages(sessionId: string, query: GetMessagesQuery = {}): Promise<AnyMessage[]> {
    return this.#read('read messages', () => {
      const key = keyText(sessionId, 'sessionId')
      validateMessagesQuery(query)
      const { afterSeq, beforeSeq, limit } = query
      return async (statements) => {
        if (limit === 0) return []
        // Every stored seq is a safe integer >= 0: seq > 2.5 is seq > 2, seq < 2.5 is seq < 3, and
        // the bounds are clamped to what a bigint parameter holds.
        const after =
          afterSeq === undefined ? -1 : Math.min(MAX_SEQ_BOUND, Math.max(-1, Math.floor(afterSeq)))
        const before =
          beforeSeq === undefined ? MAX_SEQ_BOUND : Math.max(0, Math.min(MAX_SEQ_BOUND, Math.ceil(beforeSeq)))
        if (after >= before - 1) return []
        const rows = await statements.selectMessages(
          key,
          after,
          before,
          limit ?? null,
          beforeSeq !== undefined,
        )
        const messages: AnyMessage[] = new Array(rows.length)
        for (let index = 0; index < rows.length; index++)
          messages[index] = fromMessageRow(rows[index]!, sessionId)
        return messages
      }
    })
  }

  deleteMessages(sessionId: string): Promise<void> {
    return this.#write('delete messages', (settle) => {
      const key = keyText(sessionId, 'sessionId')
      return {
        kind: 'task',
        action: 'delete messages',
        run: (statements) => statements.deleteMessages(key),
        ...settle,
      }
    })
  }

  /**
   * Claims the lease on a session (capability `leases`): one conditional `UPDATE … RETURNING` on
   * the server's clock, so processes on several machines agree on when a lease ends, and no lock
   * is held between statements. It runs at once on a pool connection rather than behind queued
   * writes, so a renewal never waits for a burst of messages; a claim that finds no session while
   * writes are pending waits for them (one may create it) and tries again. A lost connection is
   * retried like any statement: claiming again is harmless for the same owner.
   */
  claimSession(id: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.#lease('claim a session', () => {
      validateClaimArguments(id, owner, ttlMs)
      const key = keyText(id, 'id')
      const holder = keyText(owner, 'owner')
      const pendingBefore = this.#nextIndex
      // Writes made before this call (the session's own saveSession among them) may still be on
      // their way: a miss is only final once they have settled. Checked now, not after the miss:
      // one that finished in between must not turn into NOT_FOUND.
      const writesPending = this.#lowestPendingWrite() < pendingBefore
      return async (statements) => {
        const claimed = await statements.claimLease(key, holder, ttlMs)
        if (claimed !== undefined) return claimed
        if (writesPending) {
          await this.#writesBefore(pendingBefore)
          const again = await this.#withRetry('claim a session', () =>
            statements.claimLease(key, holder, ttlMs),
          )
          if (again !== undefined) return again
        }
        throw new NotFoundError(`Cannot claim session ${id}: it does not exist.`)
      }
    })
  }

  /** Releases `owner`'s lease on a session; anything else is a no-op (capability `leases`). */
  releaseSession(id: string, owner: string): Promise<void> {
    return this.#lease('release a session', () => {
      validateReleaseArguments(id, owner)
      const key = keyText(id, 'id')
      const holder = keyText(owner, 'owner')
      return (statements) => statements.releaseLease(key, holder)
    })
  }

  /**
   * Marks `interrupted` every `active` session of the scope without a live lease, in one
   * statement (capability `leases`); resolves to how many. Runs in call order with the writes.
   */
  markInterrupted(scope: SessionScope = {}): Promise<number> {
    return this.#write<number>('mark interrupted sessions', (settle) => {
      validateListQuery(scope)
      const userId = scope.userId === undefined ? undefined : keyText(scope.userId, 'scope.userId')
      const appName = scope.appName === undefined ? undefined : keyText(scope.appName, 'scope.appName')
      return {
        kind: 'task',
        action: 'mark interrupted sessions',
        run: (statements) => statements.markInterrupted(userId, appName),
        ...settle,
      }
    })
  }

  /**
   * Deletes the sessions retention selects, with their messages and child sessions (capability
   * `retention`), at most 500 selected sessions per statement; resolves to how many sessions were
   * removed. Runs in call order with the writes.
   */
  deleteSessions(query: DeleteSessionsQuery): Promise<number> {
    return this.#write<number>('delete sessions', (settle) => {
      const { lastActivityBefore, states, userId, appName } = validateDeleteSessionsQuery(query)
      const roots = {
        lastActivityBefore,
        ...(states === undefined ? {} : { states: states.map((state) => keyText(state, 'states')) }),
        ...(userId === undefined ? {} : { userId: keyText(userId, 'query.userId') }),
        ...(appName === undefined ? {} : { appName: keyText(appName, 'query.appName') }),
      }
      return {
        kind: 'task',
        action: 'delete sessions',
        run: async (statements) => (states?.length === 0 ? 0 : statements.deleteSessionTrees(roots)),
        ...settle,
      }
    })
  }

  /**
   * The Kysely instance over this persister's pool (schema migrated, queries scoped to
   * {@link PostgresPersister.schema}), for read queries of your own, e.g. over the `tool_name`
   * column. Writes through it bypass the persister's ordering.
   */
  getKysely(): Promise<Kysely<Database>> {
    return this.#read('open the database', () => async () => this.#kysely.withSchema(this.schema))
  }

  /**
   * Waits for every call already made (batched writes included), then ends the pool if the
   * persister created it. Idempotent; any call made after `close()` rejects with code `CLOSED`.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      while (this.#idle) await this.#idle.promise
      while (this.#reads.size > 0) await Promise.allSettled([...this.#reads])
      await Promise.all(this.#lanes.map((lane) => lane.close()))
      await this.#kysely.destroy()
    })()
    return this.#closing
  }

  /**
   * Starts a read. `prepare` runs now (validation, so bad input rejects at once); the function it
   * returns runs once the writes issued before this call have settled and the schema is ready.
   */
  #read<T>(action: string, prepare: () => (statements: PostgresStatements) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      try {
        this.#assertOpen()
        const run = prepare()
        const after = this.#writesBefore(this.#nextIndex)
        const read = (async () => {
          await after
          await this.#ready()
          return this.#withRetry(action, () => run(this.#statements))
        })()
        this.#reads.add(read)
        read.then(resolve, (error: unknown) => reject(mapPostgresError(error, action, this.server)))
        read.then(
          () => this.#reads.delete(read),
          () => this.#reads.delete(read),
        )
      } catch (error) {
        reject(mapPostgresError(error, action, this.server))
      }
    })
  }

  /**
   * Runs a lease statement at once (after the schema is ready), beside the write queue.
   * `prepare` validates now, so bad input rejects at once.
   */
  #lease<T>(action: string, prepare: () => (statements: PostgresStatements) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      try {
        this.#assertOpen()
        const run = prepare()
        const call = (async () => {
          await this.#ready()
          return this.#withRetry(action, () => run(this.#statements))
        })()
        this.#reads.add(call)
        call.then(resolve, (error: unknown) => reject(mapPostgresError(error, action, this.server)))
        call.then(
          () => this.#reads.delete(call),
          () => this.#reads.delete(call),
        )
      } catch (error) {
        reject(mapPostgresError(error, action, this.server))
      }
    })
  }

  /**
   * Queues a write built (validated and copied) now by `build`. Resolves to what a task's `run`
   * resolved to, `undefined` for upserts.
   */
  #write<T = void>(action: string, build: (settle: Settle & { index: number }) => WriteJob): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      try {
        this.#assertOpen()
        // `resolve` as is: a queued call keeps no closure of its own beyond the promise's.
        const job = build({ resolve: resolve as (value: unknown) => void, reject, index: this.#nextIndex })
        this.#queue.push(job)
        this.#nextIndex++
        this.#idle ??= withResolvers()
        // A step that no later call can join (full, or followed by a call that does not fit) is
        // sent now rather than at the next turn of the event loop: in a burst issued in one
        // synchronous loop the server then works on it while the loop encodes the rest.
        // Planning is incremental, so this costs one look-up per call.
        if (this.#isReady && this.#planHead().complete) this.#pump(true)
        // setImmediate (not a microtask): calls made anywhere in this turn of the event loop, across
        // any number of promise chains, join the same batch.
        if (!this.#kickScheduled) {
          this.#kickScheduled = true
          setImmediate(() => {
            this.#kickScheduled = false
            void this.#kick()
          })
        }
      } catch (error) {
        reject(mapPostgresError(error, action, this.server))
      }
    })
  }

  /** Makes sure the schema is ready, then starts every queued step that can start. */
  async #kick(): Promise<void> {
    if (!this.#isReady) {
      try {
        await this.#ready()
      } catch (error) {
        const failure = mapPostgresError(error, 'prepare the schema', this.server)
        const failed = this.#queue.slice(this.#head)
        this.#queue = []
        this.#head = 0
        this.#planned = undefined
        for (const job of failed) job.reject(failure)
        this.#wakeReads()
        this.#settleIfIdle()
        return
      }
    }
    for (const lane of this.#lanes) if (!lane.isOpen) void lane.open()
    this.#pump(false)
  }

  /**
   * Starts queued steps in call order while they can start: an upsert step on the open write
   * connection with the fewest statements in flight (fewer than `PIPELINE_DEPTH`) that admits it,
   * or — a task, or while no write connection is open — on the pool (fewer than
   * `writeConcurrency`), and only if it can run beside every running step (see
   * {@link RunningFootprint}). With `completeOnly`, only a step that no later call can join is
   * started (the rest of a burst may still be being issued).
   */
  #pump(completeOnly: boolean): void {
    if (!this.#isReady) return
    while (this.#head < this.#queue.length) {
      // Where the head may go, and whether there is room there, before planning it.
      const lanes = this.#queue[this.#head]!.kind === 'task' ? [] : this.#lanesWithRoom()
      if (lanes === undefined || (lanes.length === 0 && this.#onPool >= this.#writeConcurrency)) break
      const planned = this.#planHead()
      if (completeOnly && !planned.complete) break
      const { step } = planned
      const lane =
        lanes.length === 0
          ? this.#footprint.admits(step, -1)
            ? -1
            : undefined
          : lanes.find((candidate) => this.#footprint.admits(step, candidate))
      if (lane === undefined) break
      this.#head += step.jobs.length
      this.#planned = undefined
      const { promise: finished, resolve: finish } = withResolvers()
      const running: RunningStep = {
        ...step,
        lane,
        after:
          lane < 0
            ? []
            : this.#running.filter((earlier) => earlier.lane === lane && dependsOnSessionOf(step, earlier)),
        finished,
        finish,
      }
      this.#running.push(running)
      this.#footprint.add(running, lane)
      if (lane < 0) this.#onPool++
      else this.#laneLoad[lane]!++
      void this.#runStep(running).then(
        (outcomes) => this.#finishStep(running, outcomes),
        (error: unknown) => {
          const failure = mapPostgresError(error, 'save', this.server)
          this.#finishStep(
            running,
            running.jobs.map((job) => ({ job, error: failure })),
          )
        },
      )
    }
    // Drop started calls from the front now and then, so the queue does not keep them.
    if (this.#head === this.#queue.length) {
      this.#queue = []
      this.#head = 0
      this.#planned = undefined
    } else if (this.#head > 4096 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head)
      this.#head = 0
      this.#planned = undefined
    }
  }

  /**
   * The open write connections with room for a statement, least loaded first; `[]` when none is
   * open (then the pool is used), `undefined` when some are open but all are full.
   */
  #lanesWithRoom(): number[] | undefined {
    const open: number[] = []
    let full = false
    for (let lane = 0; lane < this.#lanes.length; lane++) {
      if (!this.#lanes[lane]!.isOpen) continue
      if (this.#laneLoad[lane]! < PIPELINE_DEPTH) open.push(lane)
      else full = true
    }
    if (open.length === 0) return full ? undefined : []
    return open.sort((a, b) => this.#laneLoad[a]! - this.#laneLoad[b]!)
  }

  /**
   * The step at the head of the queue, planned incrementally: calls queued since it was planned
   * are added to it until one does not fit, which completes it.
   */
  #planHead(): PlannedStep {
    let planned = this.#planned
    if (planned === undefined || planned.head !== this.#head) {
      planned = {
        head: this.#head,
        end: this.#head,
        complete: false,
        step: planWriteStep(this.#queue, this.#head, 0),
      }
      this.#planned = planned
    }
    while (!planned.complete && planned.end < this.#queue.length) {
      if (joinStep(planned.step, this.#queue[planned.end]!, this.#maxBatchSize)) planned.end++
      else planned.complete = true
    }
    if (planned.step.jobs.length === this.#maxBatchSize || planned.step.isTask) planned.complete = true
    return planned
  }

  /** Resolves once every write call numbered below `index` has settled. */
  #writesBefore(index: number): Promise<void> {
    if (this.#lowestPendingWrite() >= index) return Promise.resolve()
    return new Promise((start) => this.#waitingReads.push({ before: index, start }))
  }

  #lowestPendingWrite(): number {
    return Math.min(
      this.#running[0]?.jobs[0]?.index ?? Number.POSITIVE_INFINITY,
      this.#queue[this.#head]?.index ?? Number.POSITIVE_INFINITY,
    )
  }

  #wakeReads(): void {
    if (this.#waitingReads.length === 0) return
    const lowest = this.#lowestPendingWrite()
    const waiting = this.#waitingReads
    this.#waitingReads = []
    for (const read of waiting) {
      if (lowest >= read.before) read.start()
      else this.#waitingReads.push(read)
    }
  }

  #finishStep(step: RunningStep, outcomes: Outcome[]): void {
    this.#running.splice(this.#running.indexOf(step), 1)
    this.#footprint.remove(step, step.lane)
    if (step.lane < 0) this.#onPool--
    else this.#laneLoad[step.lane]!--
    // Jobs settle together once the whole step is done, so a read issued after any of them also
    // sees the others.
    for (const { job, error, value } of outcomes) {
      if (error === undefined) job.resolve(value)
      else job.reject(error)
    }
    step.finish()
    this.#wakeReads()
    this.#pump(false)
    this.#settleIfIdle()
  }

  #settleIfIdle(): void {
    if (this.#head < this.#queue.length || this.#running.length > 0) return
    const idle = this.#idle
    this.#idle = undefined
    idle?.resolve()
  }

  /** Runs `query` on the step's write connection while it is open, else on the pool. */
  #execute(step: RunningStep, query: CompiledQuery): Promise<unknown> {
    const lane = step.lane < 0 ? undefined : this.#lanes[step.lane]
    if (lane?.isOpen) return lane.submit(query)
    return this.#statements.execute(query)
  }

  /**
   * Writes a step. Its first statement is sent before this returns (on the write connection it is
   * then on its way to the server); the rest follows as the statements finish.
   */
  async #runStep(step: RunningStep): Promise<Outcome[]> {
    const head = step.jobs[0]!
    if (head.kind === 'task') {
      try {
        const value = await this.#withRetry(head.action, () => head.run(this.#statements))
        return [{ job: head, value }]
      } catch (error) {
        return [{ job: head, error: mapPostgresError(error, head.action, this.server) }]
      }
    }
    const messages = step.jobs.filter((job) => job.kind === 'message')
    const sessions = step.jobs.filter((job) => job.kind === 'session')
    const outcomes: Outcome[] = []
    if (messages.length > 0) {
      const upsertMessages = () =>
        this.#upsertEach(
          messages,
          (rows) => this.#execute(step, this.#statements.upsertMessages(rows)),
          (row, error) => this.#messageError(row, error),
        )
      let written = await upsertMessages()
      // Sent behind the upsert of its session, which failed (or was lost and is being retried):
      // once that has settled, the messages get the outcome they have in call order.
      if (step.after.length > 0 && written.some(({ error }) => error?.code === 'NOT_FOUND')) {
        await Promise.all(step.after.map((earlier) => earlier.finished))
        written = await upsertMessages()
      }
      outcomes.push(...written)
    }
    if (sessions.length > 0) {
      outcomes.push(
        ...(await this.#upsertEach(
          sessions,
          (rows) => this.#execute(step, this.#statements.upsertSessions(rows)),
          (row, error) => mapPostgresError(error, `save session ${row.id}`, this.server),
        )),
      )
    }
    return outcomes
  }

  /**
   * Upserts the rows of `jobs` in one statement. When that fails for a reason of one row (an
   * unknown session, a taken seq, a too-large value), each row is written alone so that only the
   * bad ones fail.
   */
  async #upsertEach<Row>(
    jobs: Array<WriteJob & { row: Row }>,
    upsert: (rows: Row[]) => Promise<unknown>,
    describe: (row: Row, error: unknown) => AgentError,
  ): Promise<Outcome[]> {
    try {
      await this.#withRetry(`save ${jobs.length} row(s)`, () => upsert(jobs.map((job) => job.row)))
      return jobs.map((job) => ({ job }))
    } catch (error) {
      if (jobs.length === 1 || !isRowError(error)) {
        return jobs.map((job) => ({ job, error: describe(job.row, error) }))
      }
    }
    const outcomes: Outcome[] = []
    for (const job of jobs) {
      try {
        await this.#withRetry('save a row', () => upsert([job.row]))
        outcomes.push({ job })
      } catch (error) {
        outcomes.push({ job, error: describe(job.row, error) })
      }
    }
    return outcomes
  }

  #messageError(row: MessageRow, error: unknown): AgentError {
    const code = postgresCode(error)
    if (code === '23503') {
      return new NotFoundError(`Cannot save message ${row.id}: session ${row.session_id} does not exist.`, {
        cause: error,
      })
    }
    if (code === '23505') {
      return new PersistenceError(
        `Cannot save message ${row.id}: session ${row.session_id} already has another message at seq ${row.seq}.`,
        { code: 'CONFLICT', cause: error },
      )
    }
    return mapPostgresError(error, `save message ${row.id}`, this.server)
  }

  /** Runs `statement`, retrying it on a new connection while it fails transiently. */
  async #withRetry<T>(action: string, statement: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await statement()
      } catch (error) {
        if (attempt > this.#retry.maxRetries || !isTransientError(error)) throw error
        const delayMs = backoffDelay(attempt, this.#retry)
        this.#logger?.warn(`PostgreSQL: could not ${action}; retrying.`, {
          attempt,
          delayMs,
          server: this.server,
          error: error instanceof Error ? error.message : String(error),
        })
        await new Promise((resolve) => setTimeout(resolve, delayMs))
      }
    }
  }

  /**
   * Migrates the schema once and opens the write connection (a failure to open it only means
   * writing through the pool); a failure to migrate is not kept, so the next call tries again.
   */
  #ready(): Promise<void> {
    this.#migrated ??= this.#withRetry('prepare the schema', () =>
      runMigrations(this.#kysely, this.schema, POSTGRES_MIGRATIONS),
    ).then(
      async () => {
        await Promise.all(this.#lanes.map((lane) => lane.open()))
        this.#isReady = true
      },
      (error: unknown) => {
        this.#migrated = undefined
        throw error
      },
    )
    return this.#migrated
  }

  #assertOpen(): void {
    if (this.#closing) {
      throw new PersistenceError(`This PostgresPersister (${this.server}) is closed.`, { code: 'CLOSED' })
    }
  }
}

/**
 * The JSON text of `{ [key]: value }` for `metadata @> $1::jsonb`, `key` already encoded. For a
 * string, number or boolean, containment is exact equality of the value at that key: the JSON type
 * must match (`1`, `'1'` and `true` differ), and an array or object at the key never matches.
 * `validateListQuery` has checked that a number is finite. Written by hand so that a key such as `__proto__` stays a plain key.
 */
function metadataContainment(key: string, value: string | number | boolean): string {
  return `{${JSON.stringify(key)}:${encodeJson(value)}}`
}

/** Above every stored seq (they are safe integers), and still a bigint parameter. */
const MAX_SEQ_BOUND = 2 ** 53

/** Creates a {@link PostgresPersister}. */
export function createPostgresPersister(options: PostgresPersisterOptions): PostgresPersister {
  return new PostgresPersister(options)
}

function withResolvers(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((done) => {
    resolve = done
  })
  return { promise, resolve }
}

function integerOption(value: number | undefined, name: string, fallback: number, minimum: number): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < minimum) {
    throw new ConfigurationError(
      `PostgresPersister options.${name} must be an integer of at least ${minimum}.`,
    )
  }
  return value
}

function retryOptions(retry: RetryOptions | undefined): Required<RetryOptions> {
  if (retry === undefined) return DEFAULT_RETRY
  if (typeof retry !== 'object' || retry === null) {
    throw new ConfigurationError('PostgresPersister options.retry must be an object.')
  }
  return {
    maxRetries: integerOption(retry.maxRetries, 'retry.maxRetries', DEFAULT_RETRY.maxRetries, 0),
    initialDelayMs: integerOption(
      retry.initialDelayMs,
      'retry.initialDelayMs',
      DEFAULT_RETRY.initialDelayMs,
      0,
    ),
    maxDelayMs: integerOption(retry.maxDelayMs, 'retry.maxDelayMs', DEFAULT_RETRY.maxDelayMs, 0),
  }
}
