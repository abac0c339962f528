import type { Logger } from '@agentx/core'
import type { CompiledQuery } from 'kysely'
import { isConnectionError } from './map-postgres-error.js'

/** The part of a `pg.Client` that {@link WriteConnection} uses. */
export interface PipelineClient {
  /** `true` when the client was created with `pipeline: true` and supports it. */
  readonly pipeline?: boolean
  connect(): Promise<unknown>
  query(text: string, values: unknown[]): Promise<unknown>
  end(): Promise<unknown>
  on(event: 'error' | 'end', listener: (error?: Error) => void): unknown
  /** Lets the socket keep the process alive (pg's `Client#ref`). */
  ref?(): void
  /** Lets the process exit while the socket is open (pg's `Client#unref`). */
  unref?(): void
}

/** How long after a failed attempt to open the connection the next one is made, in ms. */
const REOPEN_DELAY_MS = 1000

/**
 * The write queue's own connection, in pg's pipeline mode: {@link WriteConnection.submit} writes a
 * statement to the socket at once, without waiting for the statements before it to finish, and
 * the server runs them one after another in that order, each in its own implicit transaction (an
 * error ends only its own statement).
 *
 * That lets the persister hand a batch of messages to the server while the application is still
 * issuing the rest of a burst in the same synchronous loop, so that encoding overlaps with the
 * server's work, and keeps the server busy without a round trip between batches.
 *
 * The connection is an accelerator, never a requirement: when it cannot be opened or breaks, the
 * persister writes through its pool and reopens this connection later. A connection error fails
 * the statements in flight on it, which the persister retries like any lost statement.
 */
export class WriteConnection {
  readonly #create: () => PipelineClient
  readonly #logger: Logger | undefined
  readonly #server: string
  #client: PipelineClient | undefined
  #opening: Promise<void> | undefined
  #nextAttemptAt = 0
  #closed = false
  /** Statements submitted on each client and not yet settled: while none, its socket is unref'd. */
  readonly #inFlight = new WeakMap<PipelineClient, number>()

  constructor(create: () => PipelineClient, server: string, logger: Logger | undefined) {
    this.#create = create
    this.#server = server
    this.#logger = logger
  }

  /** Whether {@link WriteConnection.submit} can be called now. */
  get isOpen(): boolean {
    return this.#client !== undefined
  }

  /**
   * Opens the connection unless it is open, opening, closed or failed less than a second ago.
   * Never rejects: a failure is logged and the persister keeps using its pool.
   */
  open(): Promise<void> {
    if (this.#client !== undefined || this.#closed) return Promise.resolve()
    if (this.#opening !== undefined) return this.#opening
    if (Date.now() < this.#nextAttemptAt) return Promise.resolve()
    const client = this.#create()
    if (client.pipeline !== true) {
      // A pg without pipeline mode: never try again.
      this.#closed = true
      return Promise.resolve()
    }
    this.#opening = (async () => {
      const drop = (error?: Error) => this.#drop(client, error)
      client.on('error', drop)
      client.on('end', drop)
      try {
        await client.connect()
        if (this.#closed) {
          await client.end().catch(() => undefined)
          return
        }
        this.#client = client
        // An idle write connection does not keep the process alive (see `submit`).
        client.unref?.()
      } catch (error) {
        this.#nextAttemptAt = Date.now() + REOPEN_DELAY_MS
        this.#logger?.warn('PostgreSQL: could not open the write connection; writing through the pool.', {
          server: this.#server,
          error: error instanceof Error ? error.message : String(error),
        })
        await client.end().catch(() => undefined)
      } finally {
        this.#opening = undefined
      }
    })()
    return this.#opening
  }

  /**
   * Writes `query` to the connection now (the caller checked {@link WriteConnection.isOpen}) and
   * resolves when the server has run it.
   */
  submit(query: CompiledQuery): Promise<unknown> {
    const client = this.#client!
    // The socket keeps the process alive only while a statement is in flight, so a script that
    // never closes the persister still exits once its writes are done.
    const inFlight = this.#inFlight.get(client) ?? 0
    this.#inFlight.set(client, inFlight + 1)
    if (inFlight === 0) client.ref?.()
    const settled = (): void => {
      const left = (this.#inFlight.get(client) as number) - 1
      this.#inFlight.set(client, left)
      if (left === 0) client.unref?.()
    }
    return client.query(query.sql, query.parameters as unknown[]).then(
      (result) => {
        settled()
        return result
      },
      (error: unknown) => {
        settled()
        // A terminated backend fails the statement in flight before the socket reports anything:
        // stop sending on this connection at once, so that the retry goes elsewhere.
        if (isConnectionError(error)) this.#drop(client, error as Error)
        throw error
      },
    )
  }

  /** Ends the connection once the statements in flight have finished. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true
    await this.#opening
    const client = this.#client
    this.#client = undefined
    await client?.end().catch(() => undefined)
  }

  /** Forgets a client whose connection failed or ended; the next {@link WriteConnection.open} replaces it. */
  #drop(client: PipelineClient, error?: Error): void {
    if (this.#client !== client) return
    this.#client = undefined
    if (error !== undefined && !this.#closed) {
      this.#logger?.warn('PostgreSQL: the write connection failed; it is reopened for the next writes.', {
        server: this.#server,
        error: error.message,
      })
    }
    client.end().catch(() => undefined)
  }
}
