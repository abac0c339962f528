import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ListSessionsQuery, SessionData } from '@agentx/core'
import { InMemoryPersister } from '@agentx/core'
import BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { createSqlitePersister, type SqlitePersister } from './index.js'

const folder = mkdtempSync(join(tmpdir(), 'agentx-sqlite-listing-'))
afterAll(() => rmSync(folder, { recursive: true, force: true }))

let fileCount = 0
const open: Array<{ close(): unknown }> = []
afterEach(async () => {
  vi.restoreAllMocks()
  for (const handle of open.splice(0).reverse()) await handle.close()
})

function newFile(): string {
  return join(folder, `listing-${fileCount++}.db`)
}

function persisterAt(filename: string): SqlitePersister {
  const persister = createSqlitePersister({ filename })
  open.push(persister)
  return persister
}

function readOnly(filename: string): BetterSqlite3.Database {
  const database = new BetterSqlite3(filename, { readonly: true })
  open.push(database)
  return database
}

function session(id: string, overrides: Partial<SessionData> = {}): SessionData {
  return {
    id,
    summary: '',
    createdAt: '2026-01-01T00:00:00.000Z',
    lastActivity: '2026-01-01T00:00:00.000Z',
    state: 'idle',
    tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    ...overrides,
  }
}

/** A metadata object with a `__proto__` key as plain data, as JSON.parse would make it. */
function withProtoKey(value: unknown, rest: Record<string, unknown> = {}): Record<string, unknown> {
  const metadata: Record<string, unknown> = { ...rest }
  Object.defineProperty(metadata, '__proto__', {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  })
  return metadata
}

/** The rows of session_metadata, sorted, as `[session_id, key, value_type, value]`. */
function sideRows(filename: string): Array<[string, string, string, unknown]> {
  return (
    readOnly(filename)
      .prepare('select session_id, key, value_type, value from session_metadata order by session_id, key')
      .raw(true)
      .all() as Array<[string, string, string, unknown]>
  ).map((row) => [...row])
}

/**
 * Runs `listSessions(query)` and returns the SQL of the listing statement it prepared (the
 * statement cache is per SQL text, so each query shape is prepared once per connection).
 */
async function listingStatement(persister: SqlitePersister, query: ListSessionsQuery): Promise<string> {
  const statements: string[] = []
  const prepare = BetterSqlite3.prototype.prepare
  const spy = vi.spyOn(BetterSqlite3.prototype, 'prepare').mockImplementation(function (
    this: BetterSqlite3.Database,
    text,
  ) {
    statements.push(text)
    return prepare.call(this, text)
  } as typeof prepare)
  await persister.listSessions(query)
  spy.mockRestore()
  const listing = statements.find(
    (text) =>
      text.startsWith('select') &&
      (text.includes('from "sessions"') || text.includes('from "session_metadata"')),
  )
  if (listing === undefined) throw new Error(`no listing statement was prepared for ${JSON.stringify(query)}`)
  return listing
}

function queryPlan(filename: string, statement: string): string {
  const parameters = (statement.match(/\?/g) ?? []).map(() => null)
  return (
    readOnly(filename)
      .prepare(`explain query plan ${statement}`)
      .all(...parameters) as Array<{ detail: string }>
  )
    .map((row) => row.detail)
    .join(' | ')
}

/**
 * 2 000 sessions of 20 users and 3 apps, four in five of them children, one in ten active; metadata
 * with a common value (`team`), a rare one (`ticket`) and a boolean.
 */
async function populated(): Promise<{ filename: string; persister: SqlitePersister }> {
  const filename = newFile()
  const persister = persisterAt(filename)
  const saves: Array<Promise<void>> = []
  for (let index = 0; index < 2000; index++) {
    saves.push(
      persister.saveSession(
        session(`s${index}`, {
          lastActivity: new Date(Date.UTC(2026, 0, 1) + index * 1000).toISOString(),
          state: index % 10 === 0 ? 'active' : 'idle',
          userId: `u${index % 20}`,
          appName: `a${index % 3}`,
          metadata: { team: `t${index % 4}`, ticket: index, open: index % 2 === 0 },
          ...(index % 5 === 0 ? {} : { parentSessionId: `s${index - (index % 5)}` }),
        }),
      ),
    )
  }
  await Promise.all(saves)
  return { filename, persister }
}

describe('SQLite listing filters on indexes (schema 3)', () => {
  it('reads a page of top-level sessions from a partial index, in order, without a sort, with or without a scope', async () => {
    const { filename, persister } = await populated()
    for (const [query, index] of [
      [{ limit: 20 }, 'sessions_top_activity'],
      [{ userId: 'u5', limit: 20, offset: 20 }, 'sessions_top_user_activity'],
      [{ appName: 'a1', limit: 20 }, 'sessions_top_app_activity'],
      [{ userId: 'u5', appName: 'a1', limit: 20 }, 'sessions_top_user_app_activity'],
      [{ state: 'active', limit: 20 }, 'sessions_top_state_activity'],
    ] as const) {
      const plan = queryPlan(filename, await listingStatement(persister, query))
      expect(plan, JSON.stringify(query)).toMatch(new RegExp(`USING (COVERING )?INDEX ${index}\\b`))
      expect(plan, JSON.stringify(query)).not.toMatch(/TEMP B-TREE/)
    }
    // The page holds top-level sessions only, newest first.
    const page = await persister.listSessions({ userId: 'u5', limit: 3 })
    expect(page.map((s) => s.id)).toEqual(['s1985', 's1965', 's1945'])
    expect(page.every((s) => s.parentSessionId === undefined)).toBe(true)
    // Children are still listed in order from the full index.
    const all = queryPlan(filename, await listingStatement(persister, { includeChildren: true, limit: 20 }))
    expect(all).toMatch(/USING (COVERING )?INDEX sessions_activity\b/)
    expect(all).not.toMatch(/TEMP B-TREE/)
  })

  it('answers a metadata filter from the session_metadata index in listing order: no scan, no sort, with or without a scope', async () => {
    const { filename, persister } = await populated()
    for (const query of [
      { metadata: { key: 'ticket', value: 1234 }, limit: 20 },
      { metadata: { key: 'team', value: 't1' }, includeChildren: true, limit: 20, offset: 40 },
      { metadata: { key: 'open', value: true }, includeChildren: true },
      { metadata: { key: 'open', value: false }, userId: 'u5', limit: 5 },
      { metadata: { key: 'team', value: 't1' }, state: ['idle', 'active'], appName: 'a1', limit: 5 },
    ] satisfies ListSessionsQuery[]) {
      const plan = queryPlan(filename, await listingStatement(persister, query))
      expect(plan, JSON.stringify(query)).toMatch(
        /^SEARCH m USING COVERING INDEX session_metadata_lookup \(key=\? AND value_type=\? AND value=\?\) \| SEARCH sessions USING INDEX sqlite_autoindex_sessions_1 \(id=\?\)$/,
      )
    }
    expect(
      (await persister.listSessions({ userId: 'u5', metadata: { key: 'open', value: false }, limit: 2 })).map(
        (s) => s.id,
      ),
    ).toEqual(['s1985', 's1965'])
    expect(
      (await persister.listSessions({ metadata: { key: 'ticket', value: 1236 } })).map((s) => s.id),
    ).toEqual([])
    expect(
      (await persister.listSessions({ metadata: { key: 'ticket', value: 1236 }, includeChildren: true })).map(
        (s) => s.id,
      ),
    ).toEqual(['s1236'])
    const page = await persister.listSessions({ metadata: { key: 'team', value: 't2' }, limit: 3, offset: 1 })
    expect(page.map((s) => s.id)).toEqual(['s1970', 's1950', 's1930'])
  })

  it('compares the exact JSON value: 1, "1", true, 1.5, arrays, objects, null, NUL and hostile keys', async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    const reference = new InMemoryPersister()
    const sessions = [
      session('one', {
        lastActivity: '2026-01-06T00:00:00.000Z',
        metadata: { v: 1, 'a.b': 'x', big: 2 ** 53 - 1 },
      }),
      session('text-one', { lastActivity: '2026-01-05T00:00:00.000Z', metadata: { v: '1', 'say "hi"': '' } }),
      session('true', {
        lastActivity: '2026-01-04T00:00:00.000Z',
        metadata: { v: true, $gt: false, zero: 0 },
      }),
      session('decimal', { lastActivity: '2026-01-03T00:00:00.000Z', metadata: { v: 1.5, neg: -1 } }),
      session('list', { lastActivity: '2026-01-02T00:00:00.000Z', metadata: { v: [1], nested: { v: 1 } } }),
      session('null', { lastActivity: '2026-01-01T00:00:00.000Z', metadata: { v: null, nul: 'a\u0000b' } }),
      session('proto', {
        lastActivity: '2025-12-31T00:00:00.000Z',
        metadata: withProtoKey('x', { '': 'empty key' }),
      }),
      session('none', { lastActivity: '2026-01-07T00:00:00.000Z' }),
    ]
    for (const data of sessions) {
      await persister.saveSession(data)
      await reference.saveSession(data)
    }
    const filters: Array<[string, string | number | boolean]> = [
      ['v', 1],
      ['v', '1'],
      ['v', true],
      ['v', 1.5],
      ['v', 1.0],
      ['v', 'true'],
      ['v', 0],
      ['v', false],
      ['nested', 1],
      ['a.b', 'x'],
      ['a', 'x'],
      ['say "hi"', ''],
      ['$gt', false],
      ['$gt', 0],
      ['zero', 0],
      ['zero', -0],
      ['zero', false],
      ['neg', -1],
      ['big', 2 ** 53 - 1],
      ['big', 2 ** 53 - 2],
      ['nul', 'a\u0000b'],
      ['nul', 'a'],
      ['__proto__', 'x'],
      ['', 'empty key'],
      ['missing', 1],
    ]
    for (const [key, value] of filters) {
      const expected = (await reference.listSessions({ metadata: { key, value } })).map((s) => s.id)
      const actual = (await persister.listSessions({ metadata: { key, value } })).map((s) => s.id)
      expect(actual, `${JSON.stringify(key)} = ${JSON.stringify(value)}`).toEqual(expected)
    }
    expect((await persister.listSessions({ metadata: { key: 'v', value: 1 } })).map((s) => s.id)).toEqual([
      'one',
    ])
    expect(
      (await persister.listSessions({ metadata: { key: 'nul', value: 'a\u0000b' } })).map((s) => s.id),
    ).toEqual(['null'])
  })

  it('keeps session_metadata equal to the metadata column through saves, updates, deletes and retention', async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    await persister.saveSession(
      session('a', { metadata: { team: 'red', n: 1, ok: true, list: [1], nil: null } }),
    )
    await persister.saveSession(session('child', { parentSessionId: 'a', metadata: { team: 'red' } }))
    await persister.saveSession(
      session('b', { lastActivity: '2025-01-01T00:00:00.000Z', metadata: { n: 2.5 } }),
    )
    expect(sideRows(filename)).toEqual([
      ['a', 'n', 'number', 1],
      ['a', 'ok', 'boolean', 1],
      ['a', 'team', 'string', 'red'],
      ['b', 'n', 'number', 2.5],
      ['child', 'team', 'string', 'red'],
    ])
    // A changed value, a removed key, a key of another type.
    await persister.saveSession(session('a', { metadata: { team: 'blue', ok: '1' } }))
    expect(sideRows(filename).filter(([id]) => id === 'a')).toEqual([
      ['a', 'ok', 'string', '1'],
      ['a', 'team', 'string', 'blue'],
    ])
    expect(await persister.listSessions({ metadata: { key: 'team', value: 'red' } })).toEqual([])
    expect((await persister.listSessions({ metadata: { key: 'ok', value: '1' } })).map((s) => s.id)).toEqual([
      'a',
    ])
    // Saved again without metadata: its rows go.
    await persister.saveSession(session('b', { lastActivity: '2025-01-01T00:00:00.000Z' }))
    expect(sideRows(filename).filter(([id]) => id === 'b')).toEqual([])
    await persister.saveSession(
      session('b', { lastActivity: '2025-01-01T00:00:00.000Z', metadata: { n: 3 } }),
    )
    // deleteSession takes the child's rows too; retention removes its sessions' rows.
    await persister.deleteSession('a')
    expect(sideRows(filename)).toEqual([['b', 'n', 'number', 3]])
    expect(await persister.deleteSessions({ lastActivityBefore: '2026-01-01T00:00:00.000Z' })).toBe(1)
    expect(sideRows(filename)).toEqual([])
  })

  it('keeps the listing order of session_metadata equal to the sessions: a new activity moves a session to the front', async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    for (const [index, id] of ['a', 'b', 'c'].entries()) {
      await persister.saveSession(
        session(id, { lastActivity: `2026-01-0${index + 1}T00:00:00.000Z`, metadata: { team: 'red' } }),
      )
    }
    const red = async () =>
      (await persister.listSessions({ metadata: { key: 'team', value: 'red' } })).map((s) => s.id)
    expect(await red()).toEqual(['c', 'b', 'a'])
    await persister.saveSession(
      session('a', { lastActivity: '2026-02-01T00:00:00.000Z', metadata: { team: 'red' } }),
    )
    expect(await red()).toEqual(['a', 'c', 'b'])
    // Ties on lastActivity: by id, descending (UTF-16 order), as listSessions always sorts.
    await persister.saveSession(
      session('b', { lastActivity: '2026-02-01T00:00:00.000Z', metadata: { team: 'red' } }),
    )
    expect(await red()).toEqual(['b', 'a', 'c'])
    const mismatched = readOnly(filename)
      .prepare(
        `select count(*) from session_metadata as m join sessions as s on s.id = m.session_id
where m.last_activity is not s.last_activity or m.id_order is not s.id_order`,
      )
      .pluck()
      .get()
    expect(mismatched).toBe(0)
  })

  it('does not rewrite session_metadata when a session is saved with the metadata it has', async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    await persister.saveSession(session('a', { metadata: { team: 'red', n: 1 } }))
    // total_changes() counts the rows this connection changed, those of triggers included: read it
    // on the persister's own connection.
    const kysely = await persister.getKysely()
    const changes = async () =>
      (await sql<{ changes: number }>`select total_changes() as changes`.execute(kysely)).rows[0]!.changes
    const start = await changes()
    await persister.saveSession(session('a', { state: 'active', metadata: { team: 'red', n: 1 } }))
    expect((await changes()) - start).toBe(1)
    // A new activity updates the two rows in place.
    await persister.saveSession(
      session('a', {
        state: 'idle',
        lastActivity: '2026-03-01T00:00:00.000Z',
        metadata: { team: 'red', n: 1 },
      }),
    )
    expect((await changes()) - start).toBe(1 + 1 + 2)
    await persister.saveSession(
      session('a', {
        state: 'idle',
        lastActivity: '2026-03-01T00:00:00.000Z',
        metadata: { team: 'blue', n: 1 },
      }),
    )
    // The session row, then the trigger: two rows deleted, two inserted.
    expect((await changes()) - start).toBe(1 + 1 + 2 + 1 + 4)
    expect(sideRows(filename)).toEqual([
      ['a', 'n', 'number', 1],
      ['a', 'team', 'string', 'blue'],
    ])
  })
})
