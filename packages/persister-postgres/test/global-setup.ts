import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { describeUrl, TEST_DATABASE_URL } from './test-database.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** Prefix of every schema this test run creates; all are dropped when the run ends. */
    schemaPrefix: string
  }
}

/**
 * Checks that the PostgreSQL server of the tests is reachable before any test runs, and drops
 * every schema the run created when it ends. An unreachable server fails the run — in CI and
 * locally — with the command that starts one.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 5000 })
  try {
    await client.connect()
    await client.query('select 1')
  } catch (error) {
    await client.end().catch(() => undefined)
    const reason = error instanceof Error ? error.message : String(error)
    const hint =
      process.env.CI === 'true'
        ? 'CI must provide a PostgreSQL server for these tests.'
        : 'Start one with `pg_ctlcluster --skip-systemctl-redirect 15 main start` (or `docker run -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:15`), or point AGENTX_PG_URL at a server.'
    throw new Error(
      `The PostgreSQL tests need a server at ${describeUrl(TEST_DATABASE_URL)} (AGENTX_PG_URL), which is unreachable: ${reason}. ${hint}`,
    )
  }
  const prefix = `agentx_test_${randomBytes(4).toString('hex')}`
  project.provide('schemaPrefix', prefix)
  await client.end()
  return async () => {
    const cleanup = new pg.Client({ connectionString: TEST_DATABASE_URL })
    await cleanup.connect()
    try {
      const { rows } = await cleanup.query<{ name: string }>(
        'select nspname as name from pg_namespace where starts_with(nspname, $1)',
        [prefix],
      )
      for (const { name } of rows) await cleanup.query(`drop schema "${name}" cascade`)
    } finally {
      await cleanup.end()
    }
  }
}
