import { PersistenceError } from '@agentx/core'
import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { Database } from '../postgres-schema.js'
import type { PostgresMigration } from './postgres-migration.js'

/** The first key of every advisory lock this package takes ('agtx'). */
const LOCK_CLASS = 0x61677478

/**
 * Brings `schema` up to the newest of `migrations`, creating the schema if it does not exist.
 *
 * An up-to-date schema is only read (no lock taken). Otherwise everything happens in one
 * transaction that first takes a transaction-scoped advisory lock keyed on the schema name: of
 * several processes starting at once, one migrates and the others wait for its commit, then find
 * nothing left to do. A schema newer than this package knows is refused.
 */
export async function runMigrations(
  kysely: Kysely<Database>,
  schema: string,
  migrations: readonly PostgresMigration[],
): Promise<void> {
  const latest = migrations.at(-1)?.version ?? 0
  if ((await currentVersion(kysely, schema)) === latest) return
  await kysely.transaction().execute(async (transaction) => {
    await sql`select pg_advisory_xact_lock(${LOCK_CLASS}::int4, hashtext(${schema}))`.execute(transaction)
    // CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege on the database even when the
    // schema exists, so only create it when it is missing.
    const { rows } = await sql<{
      missing: boolean
    }>`select to_regnamespace(${quoteIdentifier(schema)}) is null as missing`.execute(transaction)
    if (rows[0]?.missing) await sql`create schema ${sql.id(schema)}`.execute(transaction)
    const scoped = transaction.withSchema(schema)
    await scoped.schema
      .createTable('agentx_schema_migrations')
      .ifNotExists()
      .addColumn('version', 'integer', (column) => column.primaryKey())
      .addColumn('name', 'text', (column) => column.notNull())
      .addColumn('applied_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
      .execute()
    const current = await currentVersion(transaction, schema)
    if (current > latest) {
      throw new PersistenceError(
        `The PostgreSQL schema "${schema}" has AgentX schema version ${current}, newer than the ${latest} this version of @agentx/persister-postgres supports. Upgrade @agentx/persister-postgres.`,
        { retryable: false },
      )
    }
    for (const migration of migrations) {
      if (migration.version <= current) continue
      const context = {
        table: (name: string) => sql.id(schema, name),
        compile: (query: RawBuilder<unknown>) => query.compile(transaction),
      }
      for (const query of migration.up(scoped.schema, context)) await transaction.executeQuery(query)
      await scoped
        .insertInto('agentx_schema_migrations')
        .values({ version: migration.version, name: migration.name })
        .execute()
    }
  })
}

/** The newest applied migration of `schema`, `0` when it has none (or does not exist). */
export async function currentVersion(kysely: Kysely<Database>, schema: string): Promise<number> {
  const table = `${quoteIdentifier(schema)}.agentx_schema_migrations`
  const { rows } = await sql<{ exists: boolean }>`select to_regclass(${table}) is not null as exists`.execute(
    kysely,
  )
  if (!rows[0]?.exists) return 0
  const row = await kysely
    .withSchema(schema)
    .selectFrom('agentx_schema_migrations')
    .select((eb) => eb.fn.max('version').as('version'))
    .executeTakeFirst()
  return row?.version ?? 0
}

/** `name` as a quoted SQL identifier (for `to_regclass` and friends, which parse their argument). */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}
