import type { CompiledQuery, SchemaModule } from 'kysely'

/**
 * What a migration's `migrateData` gets: the better-sqlite3 connection, described by the calls it
 * may make, so that this package's types do not require `@types/better-sqlite3`.
 */
export interface SqliteConnection {
  prepare(sql: string): {
    all(...parameters: unknown[]): unknown[]
    run(...parameters: unknown[]): unknown
  }
}

/**
 * One versioned step of the SQLite schema.
 *
 * Migrations run in ascending `version` order, each inside the same `BEGIN IMMEDIATE` transaction
 * as the `schema_migrations` row that records it, the first time a persister opens a file whose
 * schema is older. A released migration MUST NOT change: add a new one instead.
 */
export interface SqliteMigration {
  /** 1, 2, 3 … without gaps. */
  readonly version: number
  /** A short description, stored in `schema_migrations.name`. */
  readonly name: string
  /** The statements of this step, built with Kysely's schema builder. */
  up(schema: SchemaModule): CompiledQuery[]
  /**
   * Rewrites existing rows after `up` (in the same transaction), for a step that moves data.
   * Default is none.
   */
  migrateData?(database: SqliteConnection): void
}
