import type BetterSqlite3 from 'better-sqlite3'
import type { CompiledQuery, SchemaModule } from 'kysely'

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
  migrateData?(database: BetterSqlite3.Database): void
}
