import type { CompiledQuery, SchemaModule } from 'kysely'

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
  /** The statements of this step, built with Kysely's schema builder (already scoped to the schema). */
  up(schema: SchemaModule): CompiledQuery[]
}
