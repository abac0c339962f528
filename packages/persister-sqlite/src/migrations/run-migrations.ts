import { PersistenceError } from '@agentx/core'
import type BetterSqlite3 from 'better-sqlite3'
import { type CompiledQuery, type Kysely, sql } from 'kysely'
import type { Database } from '../sqlite-schema.js'
import type { SqliteMigration } from './sqlite-migration.js'

/**
 * Brings the schema of an open database up to the newest of `migrations`.
 *
 * Runs synchronously on the better-sqlite3 connection. An up-to-date file is only read (no write
 * lock taken); otherwise the pending migrations and their `schema_migrations` rows are written in
 * one `BEGIN IMMEDIATE` transaction, so several connections opening a new file at once migrate it
 * exactly once. A file whose schema is newer than this package knows is refused.
 */
export function runMigrations(
  database: BetterSqlite3.Database,
  kysely: Kysely<Database>,
  migrations: readonly SqliteMigration[],
  filename: string,
): void {
  const latest = migrations.at(-1)?.version ?? 0
  if (currentVersion(database, kysely) === latest) return
  const run = (query: CompiledQuery): void => {
    database.prepare(query.sql).run(query.parameters as unknown[])
  }
  database
    .transaction(() => {
      run(
        kysely.schema
          .createTable('schema_migrations')
          .ifNotExists()
          .addColumn('version', 'integer', (column) => column.primaryKey().notNull())
          .addColumn('name', 'text', (column) => column.notNull())
          .addColumn('applied_at', 'text', (column) => column.notNull())
          .modifyEnd(sql`strict`)
          .compile(),
      )
      const current = currentVersion(database, kysely)
      if (current > latest) {
        throw new PersistenceError(
          `The SQLite database ${filename} has schema version ${current}, newer than the ${latest} this version of @agentx/persister-sqlite supports. Upgrade @agentx/persister-sqlite.`,
          { retryable: false },
        )
      }
      for (const migration of migrations) {
        if (migration.version <= current) continue
        for (const query of migration.up(kysely.schema)) run(query)
        migration.migrateData?.(database)
        run(
          kysely
            .insertInto('schema_migrations')
            .values({
              version: migration.version,
              name: migration.name,
              applied_at: new Date().toISOString(),
            })
            .compile(),
        )
      }
    })
    .immediate()
}

/** The newest applied migration, `0` for a database without `schema_migrations`. */
function currentVersion(database: BetterSqlite3.Database, kysely: Kysely<Database>): number {
  const table =
    sql`select name from sqlite_master where type = 'table' and name = ${'schema_migrations'}`.compile(kysely)
  if (database.prepare(table.sql).get(table.parameters as unknown[]) === undefined) return 0
  const version = kysely
    .selectFrom('schema_migrations')
    .select((eb) => eb.fn.max('version').as('version'))
    .compile()
  const row = database.prepare(version.sql).get(version.parameters as unknown[]) as { version: number | null }
  return row.version ?? 0
}
