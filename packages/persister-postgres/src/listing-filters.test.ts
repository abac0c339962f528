import type { ListSessionsQuery, SessionData } from '@agentx/core'
import { InMemoryPersister } from '@agentx/core'
import pg from 'pg'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { adminPool, dropSchema, testPersister } from '../test/test-database.js'
import type { PostgresPersister } from './index.js'

const admin = adminPool()
const open: PostgresPersister[] = []
afterEach(async () => {
  vi.restoreAllMocks()
  for (const persister of open.splice(0)) {
    await persister.close()
    await dropSchema(admin, persister.schema)
  }
})
afterAll(() => admin.end())

function persister(): PostgresPersister {
  const created = testPersister({ poolSize: 2 })
  open.push(created)
  return created
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

/** Runs `listSessions(query)` and returns the listing statement it sent, with its parameters. */
async function listingStatement(
  store: PostgresPersister,
  query: ListSessionsQuery,
): Promise<{ text: string; values: unknown[] }> {
  const statements: Array<{ text: string; values: unknown[] }> = []
  const send = pg.Client.prototype.query
  const spy = vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (
    this: pg.Client,
    ...args: unknown[]
  ) {
    if (typeof args[0] === 'string' && Array.isArray(args[1]))
      statements.push({ text: args[0], values: args[1] })
    return (send as (...a: unknown[]) => unknown).apply(this, args)
  } as typeof send)
  await store.listSessions(query)
  spy.mockRestore()
  const listing = statements.find(({ text }) => text.includes('order by last_activity desc'))
  if (listing === undefined) throw new Error(`no listing statement was sent for ${JSON.stringify(query)}`)
  return listing
}

/** The plan PostgreSQL picks for the statement `listSessions(query)` sends, with the table's statistics. */
async function planOf(store: PostgresPersister, query: ListSessionsQuery): Promise<string> {
  const { text, values } = await listingStatement(store, query)
  const { rows } = await admin.query(`explain ${text}`, values)
  return rows.map((row: { 'QUERY PLAN': string }) => row['QUERY PLAN']).join('\n')
}

/**
 * 20 000 sessions of 1 000 users and 3 apps, four in five of them children, one in ten active, written straight into
 * the table (the persister's upsert has no other effect on it; `id_order` is the ASCII id as
 * UTF-16BE), then analysed. Metadata: a common
 * value (`team`), a unique one (`ticket`) and a boolean.
 */
async function populated(): Promise<PostgresPersister> {
  const store = persister()
  await store.listSessions({ limit: 0 })
  await admin.query(
    `insert into "${store.schema}".sessions (id, id_order, summary, created_at, last_activity, state, token_usage,
  user_id, app_name, metadata, parent_session_id)
select 's' || i, decode(regexp_replace(encode(convert_to('s' || i, 'UTF8'), 'hex'), '(..)', '00\\1', 'g'), 'hex'), '', '2026-01-01T00:00:00.000Z',
  to_char(timestamp '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  case when i % 10 = 0 then 'active' else 'idle' end,
  '{"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}', 'u' || (i % 1000), 'a' || (i % 3),
  jsonb_build_object('team', 't' || (i % 4), 'ticket', i, 'open', i % 2 = 0),
  case when i % 5 = 0 then null else 's' || (i - i % 5) end
from generate_series(0, 19999) as i`,
  )
  await admin.query(`analyze "${store.schema}".sessions`)
  return store
}

describe('PostgreSQL listing filters on indexes (schema 3)', () => {
  it('reads a page of top-level sessions from a partial index, with or without a scope, never filtering children row by row', async () => {
    const store = await populated()
    const unscoped = await planOf(store, { limit: 20, offset: 20 })
    expect(unscoped).toMatch(/Index Scan Backward using sessions_top_activity/)
    expect(unscoped).not.toMatch(/Sort|Seq Scan|Filter/)
    for (const query of [
      { userId: 'u5', limit: 20 },
      { appName: 'a1', limit: 20 },
      { userId: 'u5', appName: 'a2', limit: 20 },
      { state: 'active', limit: 20 },
    ] satisfies ListSessionsQuery[]) {
      const plan = await planOf(store, query)
      // The planner picks among the partial indexes by cost (a bitmap scan of the few sessions of one
      // user, then a sort, is one choice); never the full indexes or the table.
      expect(plan, JSON.stringify(query)).toMatch(
        /(Index (Only )?Scan( Backward)? using|Bitmap Index Scan on) sessions_top_\w+/,
      )
      expect(plan, JSON.stringify(query)).not.toMatch(/sessions_(user_|app_|user_app_)?activity/)
      expect(plan, JSON.stringify(query)).not.toMatch(/Seq Scan|Filter: .*parent_session_id/)
    }
    const page = await store.listSessions({ userId: 'u5', limit: 3 })
    expect(page.map((s) => s.id)).toEqual(['s19005', 's18005', 's17005'])
    expect(page.every((s) => s.parentSessionId === undefined)).toBe(true)
    const all = await planOf(store, { includeChildren: true, limit: 20 })
    expect(all).toMatch(/Index Scan Backward using sessions_activity/)
    expect(all).not.toMatch(/Sort/)
  })

  it('answers a selective metadata filter from the GIN index, children left out or not', async () => {
    const store = await populated()
    for (const query of [
      { metadata: { key: 'ticket', value: 12345 }, limit: 20 },
      { metadata: { key: 'ticket', value: 12346 }, includeChildren: true },
    ] satisfies ListSessionsQuery[]) {
      const plan = await planOf(store, query)
      expect(plan, JSON.stringify(query)).toMatch(/Bitmap Index Scan on sessions_metadata/)
      expect(plan, JSON.stringify(query)).toMatch(
        /Index Cond: \(metadata @> '\{"ticket": 1234[56]\}'::jsonb\)/,
      )
      expect(plan, JSON.stringify(query)).not.toMatch(/Seq Scan/)
    }
    expect(
      (await store.listSessions({ metadata: { key: 'ticket', value: 12346 } })).map((s) => s.id),
    ).toEqual([])
    expect(
      (await store.listSessions({ metadata: { key: 'ticket', value: 12346 }, includeChildren: true })).map(
        (s) => s.id,
      ),
    ).toEqual(['s12346'])
    const page = await store.listSessions({ metadata: { key: 'team', value: 't2' }, limit: 3, offset: 1 })
    expect(page.map((s) => s.id)).toEqual(['s19970', 's19950', 's19930'])
  })

  it('compares the exact JSON value: 1, "1", true, 1.5, arrays, objects, null, NUL, lone surrogates and hostile keys', async () => {
    const store = persister()
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
      session('null', {
        lastActivity: '2026-01-01T00:00:00.000Z',
        metadata: { v: null, nul: 'a\u0000b', dle: 'a\u0010b', lone: 'x\ud800', 'key\udc00': 'y' },
      }),
      session('proto', {
        lastActivity: '2025-12-31T00:00:00.000Z',
        metadata: withProtoKey('x', { '': 'empty key' }),
      }),
      session('none', { lastActivity: '2026-01-07T00:00:00.000Z' }),
    ]
    for (const data of sessions) {
      await store.saveSession(data)
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
      ['nul', 'a\u00100b'],
      ['dle', 'a\u0010b'],
      ['lone', 'x\ud800'],
      ['lone', 'x\ufffd'],
      ['key\udc00', 'y'],
      ['key\ufffd', 'y'],
      ['__proto__', 'x'],
      ['', 'empty key'],
      ['missing', 1],
    ]
    for (const [key, value] of filters) {
      const expected = (await reference.listSessions({ metadata: { key, value } })).map((s) => s.id)
      const actual = (await store.listSessions({ metadata: { key, value } })).map((s) => s.id)
      expect(actual, `${JSON.stringify(key)} = ${JSON.stringify(value)}`).toEqual(expected)
    }
    expect((await store.listSessions({ metadata: { key: 'v', value: 1 } })).map((s) => s.id)).toEqual(['one'])
    expect(
      (await store.listSessions({ metadata: { key: 'lone', value: 'x\ud800' } })).map((s) => s.id),
    ).toEqual(['null'])
  })
})
