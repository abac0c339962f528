/**
 * The part of a `pg.Pool` that {@link PostgresPersister} uses, so that this package's types do not
 * require `@types/pg`: a `pg.Pool` fits it as is.
 */
export interface PgPool {
  /** Checks a client out of the pool. */
  connect(): Promise<PgPoolClient>
  /** The pool's configuration; host, port and database name appear in error messages. */
  readonly options?: object
}

/** A client checked out of a {@link PgPool}: the part of a `pg.PoolClient` the persister uses. */
export interface PgPoolClient {
  query(text: string, values: unknown[]): Promise<unknown>
  /** Returns the client to the pool; with an error (or `true`) the pool discards it. */
  release(error?: Error | boolean): void
  on(event: 'error', listener: (error: Error) => void): unknown
  off(event: 'error', listener: (error: Error) => void): unknown
}
