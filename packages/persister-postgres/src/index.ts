// The public API of @agentx/persister-postgres.
export { POSTGRES_MIGRATIONS, POSTGRES_SCHEMA_VERSION } from './migrations/index.js'
export type { PostgresMigration } from './migrations/postgres-migration.js'
export type { PgPool, PgPoolClient } from './pg-pool.js'
export { createPostgresPersister, PostgresPersister } from './postgres-persister.js'
export type { PostgresPersisterOptions } from './postgres-persister.js'
export type {
  Database,
  JsonbColumn,
  MessagesTable,
  SchemaMigrationsTable,
  SessionsTable,
} from './postgres-schema.js'
