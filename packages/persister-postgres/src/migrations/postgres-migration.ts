import type { CompiledQuery, RawBuilder, SchemaModule } from 'kysely'

/**
 * One versioned step of the PostgreSQL schema.
 *
 * Migrations run in ascending `version` order, all pending ones in one transaction together with
 * the `agentx_schema_migrations` rows that record them, under a transaction-scoped advisory lock
 * of the schema: when several processes start at once, one migrates and the others wait, then
 * find the schema up to date. A released migration MUST NOT change: add a new one instead.
 */
export interface PostgresMigration {
  /** 1, 2, 3 … without gaps. */
  readonly version: number
  /** A short description, stored in `agentx_schema_migrations.name`. */
  readonly name: string
  /**
   * The statements of this step, built with Kysely's schema builder (already scoped to the schema)
   * or as raw SQL with `context` (for statements that move data).
   */
  up(schema: SchemaModule, context: PostgresMigrationContext): CompiledQuery[]
}

/** What a {@link PostgresMigration} may use beside the schema builder. */
export interface PostgresMigrationContext {
  /** A table of the migrated schema as a quoted, qualified identifier for raw SQL. */
  table(name: string): RawBuilder<unknown>
  /** Compiles raw SQL for this database. */
  compile(query: RawBuilder<unknown>): CompiledQuery
}
