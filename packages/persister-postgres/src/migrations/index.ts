import { initialSchema } from './001-initial-schema.js'
import { storageV2 } from './002-storage-v2.js'
import { listingIndexes } from './003-listing-indexes.js'
import type { PostgresMigration } from './postgres-migration.js'

/** Every migration of the PostgreSQL schema, in version order. */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [initialSchema, storageV2, listingIndexes]

/** The schema version this package creates and reads. */
export const POSTGRES_SCHEMA_VERSION: number = POSTGRES_MIGRATIONS.length
