import type { Logger } from '@agentx/core'
import type { PostgresPool, PostgresPoolClient } from 'kysely'
import pg from 'pg'
import type { PgPool, PgPoolClient } from './pg-pool.js'
import type { PipelineClient } from './write-connection.js'

/** What {@link openPostgresPool} needs. */
export interface OpenPostgresPoolOptions {
  connectionString?: string | undefined
  pool?: PgPool | undefined
  poolSize: number
  connectTimeoutMs: number
  statementTimeoutMs: number | undefined
  applicationName: string
  logger: Logger | undefined
}

/** A pool for Kysely's `PostgresDialect`, and what the persister needs to know about it. */
export interface PostgresPoolHandle {
  /** Hands out clients whose connection errors are caught and that are discarded when broken. */
  readonly dialectPool: PostgresPool
  /** Whether the persister created the pool (and so ends it on close). */
  readonly owned: boolean
  /** The server as `host:port/database`, never with credentials, for error messages. */
  readonly server: string
  /**
   * Creates a client in pg's pipeline mode with the settings of the pool, for the persister's write
   * connection; only when the persister created the pool (a pool passed in is the application's to
   * configure, and the persister opens no connection outside it).
   */
  readonly createWriteClient: (() => PipelineClient) | undefined
}

/**
 * Wraps a `pg.Pool` — the given one, or a new one over `connectionString` — for Kysely.
 *
 * pg emits `error` on a checked-out client whose connection dies (a server restart, an
 * administrator terminating the backend); without a listener that event would crash the process.
 * Each client handed out here has a listener while it is checked out and is released with the
 * error, so pg-pool discards it instead of reusing a dead connection. A pool created here also
 * gets a pool-level listener for idle clients; a pool passed in is left as the application
 * configured it, and ending it stays the application's job.
 */
export function openPostgresPool(options: OpenPostgresPoolOptions): PostgresPoolHandle {
  const given = options.pool
  const clientConfig = {
    connectionString: options.connectionString,
    connectionTimeoutMillis: options.connectTimeoutMs,
    application_name: options.applicationName,
    ...(options.statementTimeoutMs === undefined ? {} : { statement_timeout: options.statementTimeoutMs }),
  }
  const created =
    given === undefined
      ? // Idle connections do not keep the process alive: a script whose agent has closed exits
        // even if it never closes the persister it created (a statement in flight still does).
        new pg.Pool({ Client: GuardedClient, max: options.poolSize, allowExitOnIdle: true, ...clientConfig })
      : undefined
  const owned = created !== undefined
  const pool: PgPool = created ?? given!
  if (created) {
    created.on('error', (error) => {
      options.logger?.warn('An idle PostgreSQL connection failed; the pool replaces it.', {
        error: error.message,
      })
    })
  }
  const dialectPool: PostgresPool = {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect()
      let failure: Error | undefined
      const onError = (error: Error): void => {
        failure = error
      }
      client.on('error', onError)
      guardAgainstLateErrors(client)
      return {
        query: client.query.bind(client) as PostgresPoolClient['query'],
        release(): void {
          client.off('error', onError)
          client.release(failure)
        },
      }
    },
    async end(): Promise<void> {
      await created?.end()
    },
  }
  return {
    dialectPool,
    owned,
    server: describeServer(options.connectionString, pool),
    createWriteClient: owned
      ? () => new GuardedClient({ ...clientConfig, pipeline: true }) as unknown as PipelineClient
      : undefined,
  }
}

/**
 * A pg client that always has an `error` listener. pg-pool removes its idle listener when it hands
 * a new client out, and a termination notice that arrives in the same socket read as the
 * connection's first ReadyForQuery (a server restarting) is emitted before the caller can attach
 * its own: without this listener that is an uncaught exception. The client is then not queryable,
 * so its first query fails and the write is retried on a new connection.
 */
class GuardedClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config)
    this.on('error', () => undefined)
  }

  /**
   * Idle clients are unref'd (the pool's `allowExitOnIdle`, the idle write connection), so that
   * they never keep the process alive; ending one refs it again, so that `await persister.close()`
   * settles instead of the process exiting under it.
   */
  override end(): Promise<void>
  override end(callback: (error: Error) => void): void
  override end(callback?: (error: Error) => void): Promise<void> | void {
    const client = this as unknown as { ref(): void } // pg's Client has ref(); its types do not
    client.ref()
    return callback === undefined ? super.end() : super.end(callback)
  }
}

const guarded = new WeakSet<object>()

/**
 * A discarded client is ended by pg-pool without any `error` listener; a termination notice that
 * arrives while it closes (a server restart) would otherwise be an uncaught exception. The
 * connection is already being thrown away, so the late error carries nothing to act on.
 */
function guardAgainstLateErrors(client: PgPoolClient): void {
  if (guarded.has(client)) return
  guarded.add(client)
  client.on('error', () => undefined)
}

/** `host:port/database` of a connection string or pool, without user or password. */
function describeServer(connectionString: string | undefined, pool: PgPool): string {
  const fromPool = pool.options as {
    host?: unknown
    port?: unknown
    database?: unknown
    connectionString?: unknown
  }
  const url =
    connectionString ??
    (typeof fromPool.connectionString === 'string' ? fromPool.connectionString : undefined)
  if (url !== undefined) {
    try {
      const parsed = new URL(url)
      const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''))
      return `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}/${database}`
    } catch {
      return 'the configured server'
    }
  }
  const host = typeof fromPool.host === 'string' ? fromPool.host : (process.env.PGHOST ?? 'localhost')
  const port = fromPool.port ?? process.env.PGPORT ?? 5432
  const database = typeof fromPool.database === 'string' ? fromPool.database : (process.env.PGDATABASE ?? '')
  return `${host}:${String(port)}/${database}`
}
