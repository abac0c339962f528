import { readFileSync } from 'node:fs'
import type { AnyMessage, SessionData } from '@agentx/core'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { runChild } from '../../test/child-process.js'
import { adminPool, freshSchema, TEST_DATABASE_URL } from '../../test/test-database.js'
import { createPostgresPersister, POSTGRES_MIGRATIONS, type PostgresPersister } from '../index.js'

interface Snapshot {
  sessions: SessionData[]
  messages: Record<string, AnyMessage[]>
}

const dump = readFileSync(new URL('../__fixtures__/v1/schema-and-data.sql', import.meta.url), 'utf8')
const expected = JSON.parse(
  readFileSync(new URL('../__fixtures__/v1/expected.json', import.meta.url), 'utf8'),
) as Snapshot

const admin = adminPool()
const persisters: PostgresPersister[] = []
afterAll(async () => {
  await Promise.all(persisters.map((persister) => persister.close()))
  await admin.end()
})

/** A new schema holding the committed v1 dump (its schema name replaced). */
async function restoreV1(): Promise<string> {
  const schema = freshSchema()
  // A client of its own: the dump resets search_path for its session.
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await client.connect()
  try {
    await client.query(dump.replaceAll('agentx_v1_fixture', schema))
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

describe('PostgreSQL migration 2 (storage v2) of a schema made by release 0.1.0', () => {
  it('restores a real v1 schema: version 1 without the new columns', async () => {
    const schema = await restoreV1()
    expect(await versions(schema)).toEqual([1])
    const { rows } = await admin.query(
      `select column_name from information_schema.columns where table_schema = $1 and table_name = 'sessions'`,
      [schema],
    )
    expect(rows.map((row: { column_name: string }) => row.column_name)).not.toContain('parent_session_id')
  })

  it('upgrades in place: every old row reads back deep-equal to what release 0.1.0 read', async () => {
    const schema = await restoreV1()
    const persister = persisterOn(schema)
    expect(await snapshot(persister)).toEqual(expected)
    for (const session of expected.sessions) expect(await persister.getSession(session.id)).toEqual(session)
    expect(await versions(schema)).toEqual(POSTGRES_MIGRATIONS.map((migration) => migration.version))
  })

  it('moves the v2 fields that release 0.1.0 kept in `extra` into their columns', async () => {
    const schema = await restoreV1()
    await persisterOn(schema).getSession('fixture-plain')
    const { rows: sessions } = await admin.query(
      `select active_agent, parent_session_id, parent_tool_use_id, forked_from, extra from "${schema}".sessions where id = $1`,
      ['fixture-v2-fields-in-v1'],
    )
    expect(sessions).toEqual([
      {
        active_agent: 'billing',
        parent_session_id: 'fixture-full',
        parent_tool_use_id: 'toolu_01',
        forked_from: { sessionId: 'fixture-plain', seq: 1 },
        extra: null,
      },
    ])
    const { rows: messages } = await admin.query(
      `select id, agent_name, compaction, extra from "${schema}".messages where id like 'm-v2-%' order by id`,
    )
    expect(messages).toEqual([
      { id: 'm-v2-0', agent_name: 'billing', compaction: null, extra: null },
      { id: 'm-v2-1', agent_name: null, compaction: { throughSeq: 0 }, extra: null },
    ])
  })

  it('makes old rows visible to the v2 queries: children left out of listings, deleted with their parent', async () => {
    const persister = persisterOn(await restoreV1())
    const listed = (await persister.listSessions({})).map((session) => session.id)
    expect(listed).not.toContain('fixture-v2-fields-in-v1')
    expect(listed).toHaveLength(expected.sessions.length - 1)
    await persister.deleteSession('fixture-full')
    expect(await persister.getSession('fixture-v2-fields-in-v1')).toBeNull()
    expect(await persister.getMessages('fixture-v2-fields-in-v1')).toEqual([])
  })

  it('is idempotent: a second persister migrates nothing and changes nothing', async () => {
    const schema = await restoreV1()
    const before = await snapshot(persisterOn(schema))
    const { rows: applied } = await admin.query(`select * from "${schema}".agentx_schema_migrations`)
    expect(await snapshot(persisterOn(schema))).toEqual(before)
    const { rows: again } = await admin.query(`select * from "${schema}".agentx_schema_migrations`)
    expect(again).toEqual(applied)
  })

  it('is migrated exactly once when ten processes open the v1 schema at the same moment', async () => {
    const schema = await restoreV1()
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        runChild<Snapshot>('./postgres-worker.mjs', ['read', TEST_DATABASE_URL, schema]),
      ),
    )
    for (const result of results) expect(result).toEqual(expected)
    expect(await versions(schema)).toEqual(POSTGRES_MIGRATIONS.map((migration) => migration.version))
  }, 60_000)
})
