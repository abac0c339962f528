import pg from 'pg'
import { inject } from 'vitest'
import {
  createPostgresPersister,
  type PostgresPersister,
  type PostgresPersisterOptions,
} from '../src/index.js'

/** The server of the tests: `AGENTX_PG_URL`, by default the local trust-auth server. */
export const TEST_DATABASE_URL: string =
  process.env.AGENTX_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** `host:port/database` of a URL, without credentials. */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`
  } catch {
    return 'an unparsable URL'
  }
}

let schemaCount = 0

/** A new schema name of this test run (dropped by the global teardown, and by {@link dropSchema}). */
export function freshSchema(): string {
  return `${inject('schemaPrefix')}_${process.pid}_${schemaCount++}`
}

/** A persister over a new schema of the test server. */
export function testPersister(options: Partial<PostgresPersisterOptions> = {}): PostgresPersister {
  return createPostgresPersister({
    ...(options.pool ? {} : { connectionString: TEST_DATABASE_URL }),
    schema: freshSchema(),
    ...options,
  })
}

/** A separate pool on the test server, for inspecting what the persister wrote. */
export function adminPool(): pg.Pool {
  const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 })
  pool.on('error', () => undefined)
  return pool
}

/** Drops `schema` and everything in it. */
export async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`drop schema if exists "${schema}" cascade`)
}
