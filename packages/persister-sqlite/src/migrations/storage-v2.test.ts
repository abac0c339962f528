import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AnyMessage, SessionData } from '@agentx/core'
import BetterSqlite3 from 'better-sqlite3'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { runChild } from '../../test/child-process.js'
import { createSqlitePersister, SQLITE_MIGRATIONS, type SqlitePersister } from '../index.js'

interface Snapshot {
  sessions: SessionData[]
  messages: Record<string, AnyMessage[]>
}

const fixture = new URL('../__fixtures__/v1/agent.db', import.meta.url)
const expected = JSON.parse(
  readFileSync(new URL('../__fixtures__/v1/expected.json', import.meta.url), 'utf8'),
) as Snapshot

const folder = mkdtempSync(join(tmpdir(), 'agentx-sqlite-v1-'))
afterAll(() => rmSync(folder, { recursive: true, force: true }))
const open: Array<{ close(): unknown }> = []
afterEach(async () => {
  for (const handle of open.splice(0).reverse()) await handle.close()
})

let copies = 0
/** A fresh copy of the committed v1 database file. */
function v1Copy(): string {
  const filename = join(folder, `v1-${copies++}.db`)
  copyFileSync(fixture, filename)
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

describe('SQLite migration 2 (storage v2) of a database made by release 0.1.0', () => {
  it('is a real v1 file: schema version 1 without the new columns', () => {
    const database = raw(v1Copy())
    expect(database.prepare('select version from schema_migrations').pluck().all()).toEqual([1])
    const columns = (database.pragma('table_info(sessions)') as Array<{ name: string }>).map((c) => c.name)
    expect(columns).not.toContain('parent_session_id')
    expect(columns).toContain('extra')
  })

  it('upgrades in place: every old row reads back deep-equal to what release 0.1.0 read', async () => {
    const filename = v1Copy()
    const persister = persisterAt(filename)
    expect(await snapshot(persister)).toEqual(expected)
    for (const session of expected.sessions) expect(await persister.getSession(session.id)).toEqual(session)
    const database = raw(filename)
    expect(database.prepare('select version from schema_migrations order by version').pluck().all()).toEqual(
      SQLITE_MIGRATIONS.map((migration) => migration.version),
    )
  })

  it('moves the v2 fields that release 0.1.0 kept in `extra` into their columns, and nothing else', async () => {
    const filename = v1Copy()
    await persisterAt(filename).getSession('fixture-plain')
    const database = raw(filename)
    expect(
      database
        .prepare(
          'select active_agent, parent_session_id, parent_tool_use_id, forked_from, extra from sessions where id = ?',
        )
        .get('fixture-v2-fields-in-v1'),
    ).toEqual({
      active_agent: 'billing',
      parent_session_id: 'fixture-full',
      parent_tool_use_id: 'toolu_01',
      forked_from: '{"sessionId":"fixture-plain","seq":1}',
      extra: null,
    })
    const messages = database
      .prepare("select id, agent_name, compaction, extra from messages where id like 'm-v2-%' order by id")
      .all()
    expect(messages).toEqual([
      { id: 'm-v2-0', agent_name: 'billing', compaction: null, extra: null },
      { id: 'm-v2-1', agent_name: null, compaction: '{"throughSeq":0}', extra: null },
    ])
    // A lone surrogate still lives in `extra`, as in v1.
    expect(
      database.prepare('select extra from sessions where id = ?').pluck().get('fixture-lone-surrogate'),
    ).toBe('{"summary":"broken \\ud800 text"}')
  })

  it('makes old rows visible to the v2 queries: children left out of listings, deleted with their parent', async () => {
    const persister = persisterAt(v1Copy())
    const listed = (await persister.listSessions({})).map((session) => session.id)
    expect(listed).not.toContain('fixture-v2-fields-in-v1')
    expect(listed).toHaveLength(expected.sessions.length - 1)
    await persister.deleteSession('fixture-full')
    expect(await persister.getSession('fixture-v2-fields-in-v1')).toBeNull()
    expect(await persister.getMessages('fixture-v2-fields-in-v1')).toEqual([])
  })

  it('is idempotent: a second open migrates nothing and changes nothing', async () => {
    const filename = v1Copy()
    const first = persisterAt(filename)
    const before = await snapshot(first)
    await first.close()
    const applied = raw(filename).prepare('select * from schema_migrations').all()
    const second = persisterAt(filename)
    expect(await snapshot(second)).toEqual(before)
    expect(raw(filename).prepare('select * from schema_migrations').all()).toEqual(applied)
  })

  it('is migrated exactly once when ten processes open the v1 file at the same moment', async () => {
    const filename = v1Copy()
    const results = await Promise.all(
      Array.from({ length: 10 }, () => runChild<Snapshot>('./sqlite-worker.mjs', ['read', filename])),
    )
    for (const result of results) expect(result).toEqual(expected)
    const database = raw(filename)
    expect(database.prepare('select version from schema_migrations order by version').pluck().all()).toEqual(
      SQLITE_MIGRATIONS.map((migration) => migration.version),
    )
    expect(database.pragma('integrity_check', { simple: true })).toBe('ok')
  }, 60_000)
})
