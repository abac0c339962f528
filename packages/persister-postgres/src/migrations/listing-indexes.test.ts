import { readFileSync } from 'node:fs'
import type { AnyMessage, ListSessionsQuery, SessionData } from '@agentx/core'
import { InMemoryPersister } from '@agentx/core'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { runChild } from '../../test/child-process.js'
import { adminPool, freshSchema, TEST_DATABASE_URL } from '../../test/test-database.js'
import { createPostgresPersister, POSTGRES_MIGRATIONS, type PostgresPersister } from '../index.js'

interface Snapshot {
  sessions: SessionData[]
  messages: Record<string, AnyMessage[]>
}

const fixtures = {
  v1: { folder: new URL('../__fixtures__/v1/', import.meta.url), schema: 'agentx_v1_fixture' },
  v2: { folder: new URL('../__fixtures__/v2/', import.meta.url), schema: 'agentx_v2_fixture' },
}

function expectedOf(version: keyof typeof fixtures): Snapshot {
  return JSON.parse(readFileSync(new URL('expected.json', fixtures[version].folder), 'utf8')) as Snapshot
}

const admin = adminPool()
const persisters: PostgresPersister[] = []
afterAll(async () => {
  await Promise.all(persisters.map((persister) => persister.close()))
  await admin.end()
})

/** A new schema holding a committed dump (its schema name replaced). */
async function restore(version: keyof typeof fixtures): Promise<string> {
  const { folder, schema: dumped } = fixtures[version]
  const dump = readFileSync(new URL('schema-and-data.sql', folder), 'utf8')
  const schema = freshSchema()
  // A client of its own: the dump resets search_path for its session.
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await client.connect()
  try {
    await client.query(dump.replaceAll(dumped, schema))
  } finally {
    await client.end()
  }
  return schema
}

function persisterOn(schema: string): PostgresPersister {
  const persister = createPostgresPersister({ connectionString: TEST_DATABASE_URL, schema, poolSize: 2 })
  persisters.push(persister)
  return persister
}

async function snapshot(persister: PostgresPersister): Promise<Snapshot> {
  const sessions = await persister.listSessions({ includeChildren: true })
  const messages: Record<string, AnyMessage[]> = {}
  for (const session of sessions) messages[session.id] = await persister.getMessages(session.id)
  return { sessions, messages }
}

async function versions(schema: string): Promise<number[]> {
  const { rows } = await admin.query(
    `select version from "${schema}".agentx_schema_migrations order by version`,
  )
  return rows.map((row: { version: number }) => row.version)
}

/** The indexes of the sessions table, by name, with their definitions (schema name left out). */
async function sessionIndexes(schema: string): Promise<Record<string, string>> {
  const { rows } = await admin.query(
    `select indexname, indexdef from pg_indexes where schemaname = $1 and tablename = 'sessions' order by indexname`,
    [schema],
  )
  return Object.fromEntries(
    rows.map((row: { indexname: string; indexdef: string }) => [
      row.indexname,
      row.indexdef.replaceAll(`"${schema}".`, '').replaceAll(`${schema}.`, ''),
    ]),
  )
}

/** Every top-level metadata value of `sessions` as a filter, its other-typed twin, and scoped listings. */
function filtersOf(sessions: readonly SessionData[]): ListSessionsQuery[] {
  const queries: ListSessionsQuery[] = []
  for (const session of sessions) {
    for (const [key, value] of Object.entries(session.metadata ?? {})) {
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') continue
      queries.push({ metadata: { key, value } }, { metadata: { key, value }, includeChildren: true })
      queries.push({
        metadata: { key, value: typeof value === 'string' ? 1 : String(value) },
        includeChildren: true,
      })
    }
  }
  queries.push({}, { limit: 3, offset: 2 }, { userId: 'user-1' }, { userId: 'user-1', includeChildren: true })
  queries.push({ metadata: { key: 'list', value: 1 }, includeChildren: true })
  queries.push({ metadata: { key: 'nested', value: 1 }, includeChildren: true })
  queries.push({ metadata: { key: 'nothing', value: 'null' }, includeChildren: true })
  return queries
}

async function expectListingsLikeReference(
  persister: PostgresPersister,
  sessions: readonly SessionData[],
): Promise<void> {
  const reference = new InMemoryPersister()
  for (const session of sessions) await reference.saveSession(session)
  for (const query of filtersOf(sessions)) {
    expect(await persister.listSessions(query), JSON.stringify(query)).toEqual(
      await reference.listSessions(query),
    )
  }
}

describe('PostgreSQL migration 3 (listing indexes) of schemas made by schema 1 and schema 2', () => {
  it('the v2 fixture is a real schema-2 dump: versions 1 and 2, no listing indexes', async () => {
    const schema = await restore('v2')
    expect(await versions(schema)).toEqual([1, 2])
    const indexes = Object.keys(await sessionIndexes(schema))
    expect(indexes).toContain('sessions_parent')
    expect(indexes).not.toContain('sessions_metadata')
    expect(indexes).not.toContain('sessions_top_activity')
  })

  for (const version of ['v1', 'v2'] as const) {
    it(`upgrades a ${version} schema in place: every old row reads back deep-equal, the indexes are there`, async () => {
      const schema = await restore(version)
      const persister = persisterOn(schema)
      const expected = expectedOf(version)
      expect(await snapshot(persister)).toEqual(expected)
      for (const session of expected.sessions) expect(await persister.getSession(session.id)).toEqual(session)
      expect(await versions(schema)).toEqual(POSTGRES_MIGRATIONS.map((migration) => migration.version))
      const indexes = await sessionIndexes(schema)
      expect(indexes.sessions_metadata).toBe(
        'CREATE INDEX sessions_metadata ON sessions USING gin (metadata jsonb_path_ops) WITH (fastupdate=off)',
      )
      expect(indexes.sessions_top_activity).toBe(
        'CREATE INDEX sessions_top_activity ON sessions USING btree (last_activity, id_order) WHERE (parent_session_id IS NULL)',
      )
      for (const scope of ['user', 'app', 'user_app', 'state']) {
        expect(indexes[`sessions_top_${scope}_activity`]).toMatch(/WHERE \(parent_session_id IS NULL\)$/)
      }
      if (version === 'v2') {
        const { rows } = await admin.query(
          `select id, lease_owner, lease_expires_at from "${schema}".sessions where lease_owner is not null`,
        )
        expect(rows).toEqual([
          {
            id: 'leased',
            lease_owner: 'owner-of-fixture',
            lease_expires_at: new Date('2026-11-24T05:33:53.611Z'),
          },
        ])
      }
    })

    it(`answers every listing filter over the upgraded ${version} rows like the reference persister`, async () => {
      const schema = await restore(version)
      await expectListingsLikeReference(persisterOn(schema), expectedOf(version).sessions)
    })
  }

  it('is idempotent: a second persister migrates nothing and changes nothing', async () => {
    const schema = await restore('v2')
    const before = await snapshot(persisterOn(schema))
    const { rows: applied } = await admin.query(`select * from "${schema}".agentx_schema_migrations`)
    const indexes = await sessionIndexes(schema)
    expect(await snapshot(persisterOn(schema))).toEqual(before)
    const { rows: again } = await admin.query(`select * from "${schema}".agentx_schema_migrations`)
    expect(again).toEqual(applied)
    expect(await sessionIndexes(schema)).toEqual(indexes)
  })

  it('is migrated exactly once when ten processes open the v2 schema at the same moment', async () => {
    const schema = await restore('v2')
    const expected = expectedOf('v2')
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        runChild<Snapshot>('./postgres-worker.mjs', ['read', TEST_DATABASE_URL, schema]),
      ),
    )
    for (const result of results) expect(result).toEqual(expected)
    expect(await versions(schema)).toEqual([1, 2, 3])
    expect(Object.keys(await sessionIndexes(schema))).toContain('sessions_metadata')
  }, 60_000)
})
