// The public API of @agentx/persister-sqlite.
export { SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION } from './migrations/index.js'
export type { SqliteConnection, SqliteMigration } from './migrations/sqlite-migration.js'
export { createSqlitePersister, SqlitePersister } from './sqlite-persister.js'
export type { SqlitePersisterOptions } from './sqlite-persister.js'
export type {
  Database,
  MessagesTable,
  SchemaMigrationsTable,
  SessionMetadataTable,
  SessionsTable,
} from './sqlite-schema.js'
