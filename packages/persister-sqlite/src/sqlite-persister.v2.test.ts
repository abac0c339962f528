import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AnyMessage, SessionData } from '@agentx/core'
import BetterSqlite3 from 'better-sqlite3'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { createSqlitePersister, type SqlitePersister } from './index.js'

const folder = mkdtempSync(join(tmpdir(), 'agentx-sqlite-v2-'))
afterAll(() => rmSync(folder, { recursive: true, force: true }))
const open: Array<{ close(): unknown }> = []
afterEach(async () => {
  vi.restoreAllMocks()
  for (const handle of open.splice(0).reverse()) await handle.close()
})

let files = 0
function persisterAt(): SqlitePersister {
  const persister = createSqlitePersister({ filename: join(folder, `v2-${files++}.db`) })
  open.push(persister)
  return persister
}

function raw(filename: string): BetterSqlite3.Database {
  const database = new BetterSqlite3(filename, { readonly: true })
  open.push(database)
  return database
}

function session(id: string, fields: Partial<SessionData> = {}): SessionData {
  return {
    id,
    summary: id,
    createdAt: '2026-01-01T00:00:00.000Z',
    lastActivity: '2026-01-01T00:00:00.000Z',
    state: 'idle',
    tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    ...fields,
  }
}

function message(sessionId: string, seq: number, fields: Partial<AnyMessage> = {}): AnyMessage {
  return {
    id: `${sessionId}-${seq}`,
    sessionId,
    seq,
    type: 'user',
    content: `message ${seq}`,
    timestamp: '2026-01-01T00:00:00.000Z',
    ...fields,
  }
}

/** Records the SQL of every statement better-sqlite3 prepares from now on. */
function recordStatements(): string[] {
  const statements: string[] = []
  const prepare = BetterSqlite3.prototype.prepare
  vi.spyOn(BetterSqlite3.prototype, 'prepare').mockImplementation(function (
    this: BetterSqlite3.Database,
    text,
  ) {
    statements.push(text)
    return prepare.call(this, text)
  } as typeof prepare)
  return statements
}

function plan(filename: string, statement: string, parameters: unknown): string {
  const rows = raw(filename)
    .prepare(`explain query plan ${statement}`)
    .all(parameters as never) as Array<{ detail: string }>
  return rows.map((row) => row.detail).join(' | ')
}

describe('SqlitePersister storage v2', () => {
  it('stores the v2 fields in their columns and reads them back exactly; absent stays NULL', async () => {
    const persister = persisterAt()
    const child = session('child', {
      activeAgent: 'billing',
      parentSessionId: 'parent',
      parentToolUseId: 'toolu_1',
      forkedFrom: { sessionId: 'origin', seq: 4 },
    })
    await persister.saveSession(child)
    await persister.saveSession(session('plain'))
    const summary = message('child', 0, {
      type: 'system',
      agentName: 'default',
      compaction: { throughSeq: 12 },
    })
    await persister.saveMessage('child', summary)
    await persister.saveMessage('child', message('child', 1))
    expect(await persister.getSession('child')).toEqual(child)
    expect(await persister.getSession('plain')).toEqual(session('plain'))
    expect(await persister.getMessages('child')).toEqual([summary, message('child', 1)])
    const database = raw(persister.filename)
    expect(
      database
        .prepare(
          'select id, active_agent, parent_session_id, parent_tool_use_id, forked_from, extra from sessions order by id',
        )
        .all(),
    ).toEqual([
      {
        id: 'child',
        active_agent: 'billing',
        parent_session_id: 'parent',
        parent_tool_use_id: 'toolu_1',
        forked_from: '{"sessionId":"origin","seq":4}',
        extra: null,
      },
      {
        id: 'plain',
        active_agent: null,
        parent_session_id: null,
        parent_tool_use_id: null,
        forked_from: null,
        extra: null,
      },
    ])
    expect(database.prepare('select agent_name, compaction, extra from messages order by seq').all()).toEqual(
      [
        { agent_name: 'default', compaction: '{"throughSeq":12}', extra: null },
        { agent_name: null, compaction: null, extra: null },
      ],
    )
  })

  it('rejects a parentSessionId with an unpaired surrogate (an id) and keeps one in agentName exactly', async () => {
    const persister = persisterAt()
    await expect(persister.saveSession(session('s', { parentSessionId: 'p\ud800' }))).rejects.toMatchObject({
      code: 'VALIDATION',
    })
    await persister.saveSession(session('s'))
    const odd = message('s', 0, { agentName: 'agent \udc00' })
    await persister.saveMessage('s', odd)
    expect(await persister.getMessages('s')).toEqual([odd])
  })

  it('pages backwards with beforeSeq through a large session, each message exactly once, in seq order', async () => {
    const persister = persisterAt()
    await persister.saveSession(session('s'))
    const count = 1203
    await Promise.all(
      Array.from({ length: count }, (_, seq) => persister.saveMessage('s', message('s', seq))),
    )
    const seen: number[] = []
    // The latest page first: a beforeSeq above every seq.
    let before = Number.MAX_SAFE_INTEGER
    for (;;) {
      const page = await persister.getMessages('s', { limit: 100, beforeSeq: before })
      if (page.length === 0) break
      const seqs = page.map((m) => m.seq)
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
      seen.unshift(...seqs)
      before = seqs[0]!
    }
    expect(seen).toEqual(Array.from({ length: count }, (_, seq) => seq))
    expect((await persister.getMessages('s', { beforeSeq: 600 })).map((m) => m.seq)).toEqual(
      Array.from({ length: 600 }, (_, seq) => seq),
    )
    expect(
      (await persister.getMessages('s', { afterSeq: 10, beforeSeq: 14, limit: 2 })).map((m) => m.seq),
    ).toEqual([12, 13])
  })

  it('reads a page before a seq backwards on the (session_id, seq) index, without a sort', async () => {
    const statements = recordStatements()
    const persister = persisterAt()
    await persister.saveSession(session('s'))
    await persister.getMessages('s', { beforeSeq: 5, limit: 2 })
    const backward = statements.find((text) => /order by "seq" desc/.test(text))
    expect(backward).toBeDefined()
    const text = plan(persister.filename, backward!, ['s', -1, 5, 2])
    expect(text).toMatch(
      /SEARCH messages USING INDEX sqlite_autoindex_messages_2 \(session_id=\? AND seq>\? AND seq<\?\)/,
    )
    expect(text).not.toMatch(/TEMP B-TREE/)
  })

  it('filters listings by several states, one metadata value of any key, and children', async () => {
    const persister = persisterAt()
    const keys = { 'a.b': 'dotted', 'say "hi"': 1, $gt: true, __proto__x: 'p' }
    await persister.saveSession(session('a', { lastActivity: '2026-01-03T00:00:00.000Z', metadata: keys }))
    await persister.saveSession(
      session('b', {
        lastActivity: '2026-01-02T00:00:00.000Z',
        state: 'error',
        metadata: { 'say "hi"': '1' },
      }),
    )
    await persister.saveSession(
      session('c', {
        lastActivity: '2026-01-04T00:00:00.000Z',
        state: 'active',
        parentSessionId: 'a',
        metadata: { 'a.b': 'dotted' },
      }),
    )
    const ids = async (query: object) => (await persister.listSessions(query)).map((data) => data.id)
    expect(await ids({})).toEqual(['a', 'b'])
    expect(await ids({ includeChildren: true })).toEqual(['c', 'a', 'b'])
    expect(await ids({ state: ['error', 'active'], includeChildren: true })).toEqual(['c', 'b'])
    expect(await ids({ state: [] })).toEqual([])
    expect(await ids({ metadata: { key: 'a.b', value: 'dotted' }, includeChildren: true })).toEqual([
      'c',
      'a',
    ])
    expect(await ids({ metadata: { key: 'say "hi"', value: 1 } })).toEqual(['a'])
    expect(await ids({ metadata: { key: 'say "hi"', value: '1' } })).toEqual(['b'])
    expect(await ids({ metadata: { key: '$gt', value: true } })).toEqual(['a'])
    expect(await ids({ metadata: { key: '$gt', value: 1 } })).toEqual([])
    expect(await ids({ metadata: { key: 'a', value: 'dotted' } })).toEqual([])
    expect(
      await ids({ metadata: { key: 'a.b', value: 'dotted' }, limit: 1, offset: 1, includeChildren: true }),
    ).toEqual(['a'])
  })

  it('deletes retention roots by an index range and their children by the parent index', async () => {
    const statements = recordStatements()
    const persister = persisterAt()
    await persister.deleteSessions({
      lastActivityBefore: '2026-01-01T00:00:00.000Z',
      states: ['idle'],
      userId: 'u',
    })
    const retention = statements.find((text) => text.startsWith('with recursive doomed'))
    expect(retention).toBeDefined()
    const text = plan(persister.filename, retention!, ['2026-01-01T00:00:00.000Z', Date.now(), 'idle', 'u'])
    // A range of one of the (…, last_activity) indexes, whichever the planner picks.
    expect(text).toMatch(/SEARCH sessions USING INDEX sessions_\w+ \(\w+=\? AND last_activity<\?\)/)
    expect(text).toMatch(/SEARCH child USING (COVERING )?INDEX sessions_parent \(parent_session_id=\?\)/)
    expect(text).not.toMatch(/SCAN sessions(?! USING)/)
  })

  it('markInterrupted reads only active sessions from the partial lease index', async () => {
    const statements = recordStatements()
    const persister = persisterAt()
    await persister.markInterrupted()
    const update = statements.find(
      (text) =>
        text.startsWith("update sessions set state = 'interrupted'") && !/user_id|app_name/.test(text),
    )
    expect(plan(persister.filename, update!, [Date.now()])).toMatch(
      /USING INDEX sessions_(active_lease|state_activity)/,
    )
  })

  it('retention deletes more than one chunk of roots, with children, messages, states and scope', async () => {
    const persister = persisterAt()
    const old = '2025-01-01T00:00:00.000Z'
    for (let index = 0; index < 1200; index++)
      await persister.saveSession(session(`old-${index}`, { lastActivity: old, userId: 'u' }))
    await persister.saveSession(session('child', { parentSessionId: 'old-7', userId: 'u' }))
    await persister.saveSession(session('grandchild', { parentSessionId: 'child', userId: 'x' }))
    await persister.saveSession(session('running', { lastActivity: old, userId: 'u', state: 'active' }))
    await persister.saveSession(session('other-user', { lastActivity: old, userId: 'v' }))
    await persister.saveSession(session('recent', { userId: 'u' }))
    await persister.saveMessage('grandchild', message('grandchild', 0))
    const removed = await persister.deleteSessions({
      lastActivityBefore: '2025-06-01T00:00:00.000Z',
      userId: 'u',
      states: ['idle'],
    })
    expect(removed).toBe(1202)
    expect((await persister.listSessions({ includeChildren: true })).map((data) => data.id).sort()).toEqual([
      'other-user',
      'recent',
      'running',
    ])
    expect(raw(persister.filename).prepare('select count(*) from messages').pluck().get()).toBe(0)
  })
})
