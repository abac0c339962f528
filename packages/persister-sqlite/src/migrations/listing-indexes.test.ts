import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AnyMessage, ListSessionsQuery, SessionData } from '@agentx/core'
import { InMemoryPersister } from '@agentx/core'
import BetterSqlite3 from 'better-sqlite3'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { runChild } from '../../test/child-process.js'
import { createSqlitePersister, SQLITE_MIGRATIONS, type SqlitePersister } from '../index.js'

interface Snapshot {
  sessions: SessionData[]
  messages: Record<string, AnyMessage[]>
}

const fixtures = {
  v1: new URL('../__fixtures__/v1/', import.meta.url),
  v2: new URL('../__fixtures__/v2/', import.meta.url),
}

function expectedOf(version: keyof typeof fixtures): Snapshot {
  return JSON.parse(readFileSync(new URL('expected.json', fixtures[version]), 'utf8')) as Snapshot
}

const folder = mkdtempSync(join(tmpdir(), 'agentx-sqlite-v3-'))
afterAll(() => rmSync(folder, { recursive: true, force: true }))
const open: Array<{ close(): unknown }> = []
afterEach(async () => {
  for (const handle of open.splice(0).reverse()) await handle.close()
})

let copies = 0
/** A fresh copy of a committed fixture file. */
function copyOf(version: keyof typeof fixtures): string {
  const filename = join(folder, `${version}-${copies++}.db`)
  copyFileSync(new URL('agent.db', fixtures[version]), filename)
  return filename
}

function persisterAt(filename: string): SqlitePersister {
  const persister = createSqlitePersister({ filename })
  open.push(persister)
  return persister
}

function raw(filename: string): BetterSqlite3.Database {
  const database = new BetterSqlite3(filename, { readonly: true })
  open.push(database)
  return database
}

async function snapshot(persister: SqlitePersister): Promise<Snapshot> {
  const sessions = await persister.listSessions({ includeChildren: true })
  const messages: Record<string, AnyMessage[]> = {}
  for (const session of sessions) messages[session.id] = await persister.getMessages(session.id)
  return { sessions, messages }
}

function versions(filename: string): number[] {
  return raw(filename)
    .prepare('select version from schema_migrations order by version')
    .pluck()
    .all() as number[]
}

type SideRow = [sessionId: string, key: string, type: string, value: unknown]

const isWellFormed = (text: string) => (text as string & { isWellFormed(): boolean }).isWellFormed()

/**
 * The session_metadata rows that `sessions` call for: one per top-level string, number or boolean.
 * Keys and values with lone surrogates are left out: SQLite's JSON functions turn them into bytes
 * that do not read back as the same string (see the test of them below).
 */
function sideRowsFor(sessions: readonly SessionData[]): SideRow[] {
  const rows: SideRow[] = []
  for (const session of sessions) {
    for (const [key, value] of Object.entries(session.metadata ?? {})) {
      if (!isWellFormed(key) || (typeof value === 'string' && !isWellFormed(value))) continue
      if (typeof value === 'string') rows.push([session.id, key, 'string', value])
      else if (typeof value === 'number') rows.push([session.id, key, 'number', value])
      else if (typeof value === 'boolean') rows.push([session.id, key, 'boolean', value ? 1 : 0])
    }
  }
  return rows.sort(compareRows)
}

function compareRows(a: SideRow, b: SideRow): number {
  const left = JSON.stringify(a.slice(0, 2))
  const right = JSON.stringify(b.slice(0, 2))
  return left < right ? -1 : left > right ? 1 : 0
}

function sideRows(filename: string): SideRow[] {
  const rows = raw(filename)
    .prepare('select session_id, key, value_type, value from session_metadata')
    .raw(true)
    .all() as SideRow[]
  // A lone surrogate comes back as U+FFFD characters.
  const decoded = (text: string) => !text.includes('\uFFFD')
  return rows
    .filter(([, key, , value]) => decoded(key) && (typeof value !== 'string' || decoded(value)))
    .sort(compareRows)
}

/** Every top-level metadata value of `sessions` as a filter, plus filters that must match nothing. */
function filtersOf(sessions: readonly SessionData[]): ListSessionsQuery[] {
  const queries: ListSessionsQuery[] = []
  for (const session of sessions) {
    for (const [key, value] of Object.entries(session.metadata ?? {})) {
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') continue
      if (!isWellFormed(key) || (typeof value === 'string' && !isWellFormed(value))) continue
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

/** Whether the listings of `persister` answer `queries` like the reference persister holding `sessions`. */
async function expectListingsLikeReference(
  persister: SqlitePersister,
  sessions: readonly SessionData[],
  queries: readonly ListSessionsQuery[],
): Promise<void> {
  const reference = new InMemoryPersister()
  const parentsFirst = [...sessions].sort(
    (a, b) => Number(a.parentSessionId !== undefined) - Number(b.parentSessionId !== undefined),
  )
  for (const session of parentsFirst) await reference.saveSession(session)
  for (const query of queries) {
    expect(await persister.listSessions(query), JSON.stringify(query)).toEqual(
      await reference.listSessions(query),
    )
  }
}

describe('SQLite migration 3 (listing indexes) of databases made by schema 1 and schema 2', () => {
  it('the v2 fixture is a real schema-2 file: no session_metadata, no top-level indexes', () => {
    const database = raw(copyOf('v2'))
    expect(database.prepare('select version from schema_migrations').pluck().all()).toEqual([1, 2])
    const names = database.prepare('select name from sqlite_master').pluck().all()
    expect(names).not.toContain('session_metadata')
    expect(names).not.toContain('sessions_top_activity')
    expect(names).toContain('sessions_parent')
  })

  for (const version of ['v1', 'v2'] as const) {
    it(`upgrades a ${version} file in place: every old row reads back deep-equal, the lease columns kept`, async () => {
      const filename = copyOf(version)
      const persister = persisterAt(filename)
      const expected = expectedOf(version)
      expect(await snapshot(persister)).toEqual(expected)
      for (const session of expected.sessions) expect(await persister.getSession(session.id)).toEqual(session)
      expect(versions(filename)).toEqual(SQLITE_MIGRATIONS.map((migration) => migration.version))
      if (version === 'v2') {
        expect(
          raw(filename)
            .prepare('select id, lease_owner, lease_expires_at from sessions where lease_owner is not null')
            .all(),
        ).toEqual([{ id: 'leased', lease_owner: 'owner-of-fixture', lease_expires_at: 1795498433137 }])
      }
    })

    it(`fills session_metadata from the metadata of every ${version} session`, async () => {
      const filename = copyOf(version)
      await persisterAt(filename).getSession('fixture-plain')
      const expected = expectedOf(version)
      const rows = sideRows(filename)
      expect(rows).toEqual(sideRowsFor(expected.sessions))
      // v1: `a.b`, `$gt` and `note` (NUL inside); v2 also the sessions made for these filters.
      expect(rows).toHaveLength(version === 'v2' ? 27 : 3)
      // Each row carries its session's listing order.
      const mismatched = raw(filename)
        .prepare(
          `select count(*) from session_metadata as m join sessions as s on s.id = m.session_id
where m.last_activity is not s.last_activity or m.id_order is not s.id_order`,
        )
        .pluck()
        .get()
      expect(mismatched).toBe(0)
    })

    it(`answers every listing filter over the upgraded ${version} rows like the reference persister`, async () => {
      const filename = copyOf(version)
      const persister = persisterAt(filename)
      const { sessions } = expectedOf(version)
      await expectListingsLikeReference(persister, sessions, filtersOf(sessions))
    })
  }

  it('indexes keys and values with lone surrogates as SQLite decodes them, without failing the upgrade', async () => {
    const filename = copyOf('v2')
    const persister = persisterAt(filename)
    const red = await persister.listSessions({
      metadata: { key: 'team', value: 'red' },
      includeChildren: true,
    })
    expect(red.map((session) => session.id)).toEqual([
      'grandchild',
      'child-a',
      'md-string',
      'md-proto',
      'md-surrogate',
      'leased',
    ])
    expect(
      raw(filename)
        .prepare("select count(*) from session_metadata where session_id = 'md-surrogate'")
        .pluck()
        .get(),
    ).toBe(3)
  })

  it('is idempotent: a second open migrates nothing and changes nothing', async () => {
    const filename = copyOf('v2')
    const first = persisterAt(filename)
    const before = await snapshot(first)
    await first.close()
    const schema = raw(filename).prepare('select type, name, sql from sqlite_master order by name').all()
    const applied = raw(filename).prepare('select * from schema_migrations').all()
    const rows = sideRows(filename)
    const second = persisterAt(filename)
    expect(await snapshot(second)).toEqual(before)
    expect(raw(filename).prepare('select type, name, sql from sqlite_master order by name').all()).toEqual(
      schema,
    )
    expect(raw(filename).prepare('select * from schema_migrations').all()).toEqual(applied)
    expect(sideRows(filename)).toEqual(rows)
  })

  it('is migrated exactly once when ten processes open the v2 file at the same moment', async () => {
    const filename = copyOf('v2')
    const expected = expectedOf('v2')
    const results = await Promise.all(
      Array.from({ length: 10 }, () => runChild<Snapshot>('./sqlite-worker.mjs', ['read', filename])),
    )
    for (const result of results) expect(result).toEqual(expected)
    expect(versions(filename)).toEqual([1, 2, 3])
    expect(raw(filename).pragma('integrity_check', { simple: true })).toBe('ok')
    expect(sideRows(filename)).toEqual(sideRowsFor(expected.sessions))
  }, 60_000)
})
