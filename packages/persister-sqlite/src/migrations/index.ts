import { initialSchema } from './001-initial-schema.js'
import { storageV2 } from './002-storage-v2.js'
import { listingIndexes } from './003-listing-indexes.js'
import type { SqliteMigration } from './sqlite-migration.js'

/** Every migration of the SQLite schema, in version order. */
export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [initialSchema, storageV2, listingIndexes]

/** The schema version this package creates and reads. */
export const SQLITE_SCHEMA_VERSION: number = SQLITE_MIGRATIONS.length
