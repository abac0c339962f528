import type { AnyMessage, SessionData } from '@agentx/core'
import { afterAll, describe, expect, it } from 'vitest'
import { adminPool, testPersister } from '../test/test-database.js'
import type { PostgresPersister } from './index.js'

const admin = adminPool()
const persisters: PostgresPersister[] = []
afterAll(async () => {
  await Promise.all(persisters.map((persister) => persister.close()))
  await admin.end()
})

function persister(): PostgresPersister {
  const created = testPersister({ poolSize: 3 })
  persisters.push(created)
  return created
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

/** The plan of `statement` with sequential scans disabled: shows which index can answer it. */
async function plan(schema: string, statement: string): Promise<string> {
  const client = await admin.connect()
  try {
    await client.query('begin')
    await client.query('set local enable_seqscan = off')
    const { rows } = await client.query(`explain ${statement.replaceAll('$schema', `"${schema}"`)}`)
    await client.query('rollback')
    return rows.map((row: { 'QUERY PLAN': string }) => row['QUERY PLAN']).join('\n')
  } finally {
    client.release()
  }
}

describe('PostgresPersister storage v2', () => {
  it('stores the v2 fields in their columns and reads them back exactly; absent stays NULL', async () => {
    const store = persister()
    const child = session('child', {
      activeAgent: 'billing',
      parentSessionId: 'parent\u0000',
      parentToolUseId: 'toolu_1',
      forkedFrom: { sessionId: 'origin', seq: 4 },
    })
    await store.saveSession(child)
    await store.saveSession(session('plain'))
    const summary = message('child', 0, {
      type: 'system',
      agentName: 'agent \ud800',
      compaction: { throughSeq: 12 },
    })
    await store.saveMessage('child', summary)
    await store.saveMessage('child', message('child', 1))
    expect(await store.getSession('child')).toEqual(child)
    expect(await store.getSession('plain')).toEqual(session('plain'))
    expect(await store.getMessages('child')).toEqual([summary, message('child', 1)])
    const { rows } = await admin.query(
      `select id, active_agent, parent_session_id, forked_from, extra from "${store.schema}".sessions order by id`,
    )
    expect(rows).toEqual([
      {
        id: 'child',
        active_agent: 'billing',
        parent_session_id: 'parent\u00100',
        forked_from: { sessionId: 'origin', seq: 4 },
        extra: null,
      },
      { id: 'plain', active_agent: null, parent_session_id: null, forked_from: null, extra: null },
    ])
    const { rows: messages } = await admin.query(
      `select agent_name, compaction, extra from "${store.schema}".messages order by seq`,
    )
    expect(messages).toEqual([
      { agent_name: 'agent \u0010ud800', compaction: { throughSeq: 12 }, extra: null },
      { agent_name: null, compaction: null, extra: null },
    ])
  })

  it('pages backwards with beforeSeq, each message exactly once, in seq order, up to MAX_SAFE_INTEGER', async () => {
    const store = persister()
    await store.saveSession(session('s'))
    const count = 1203
    await Promise.all(Array.from({ length: count }, (_, seq) => store.saveMessage('s', message('s', seq))))
    const seen: number[] = []
    let before = Number.MAX_SAFE_INTEGER
    for (;;) {
      const page = await store.getMessages('s', { limit: 100, beforeSeq: before })
      if (page.length === 0) break
      const seqs = page.map((m) => m.seq)
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
      seen.unshift(...seqs)
      before = seqs[0]!
    }
    expect(seen).toEqual(Array.from({ length: count }, (_, seq) => seq))
    expect(
      (await store.getMessages('s', { afterSeq: 10, beforeSeq: 14, limit: 2 })).map((m) => m.seq),
    ).toEqual([12, 13])
    expect((await store.getMessages('s', { beforeSeq: 2.5 })).map((m) => m.seq)).toEqual([0, 1, 2])
    expect(await store.getMessages('s', { afterSeq: 5, beforeSeq: 6 })).toEqual([])
    const last = message('s', Number.MAX_SAFE_INTEGER, { id: 'last' })
    await store.saveMessage('s', last)
    expect(await store.getMessages('s', { beforeSeq: Number.MAX_SAFE_INTEGER + 2, limit: 1 })).toEqual([last])
    expect(await store.getMessages('s', { beforeSeq: Number.POSITIVE_INFINITY, limit: 1 })).toEqual([last])
  })

  it('reads a page before a seq backwards on the (session_id, seq) index', async () => {
    const store = persister()
    await store.saveSession(session('s'))
    const text = await plan(
      store.schema,
      `select id from $schema.messages as m where m.session_id = 's' and m.seq > -1 and m.seq < 50 order by m.seq desc limit 20`,
    )
    expect(text).toMatch(/Index Scan Backward using messages_session_seq/)
    expect(text).not.toMatch(/Sort/)
  })

  it('filters listings by several states, one metadata value of any key, and children', async () => {
    const store = persister()
    const keys = { 'a.b': 'dotted', 'say "hi"': 1, $gt: true, 'nul\u0000key': 'x\u0000y' }
    await store.saveSession(session('a', { lastActivity: '2026-01-03T00:00:00.000Z', metadata: keys }))
    await store.saveSession(
      session('b', {
        lastActivity: '2026-01-02T00:00:00.000Z',
        state: 'error',
        metadata: { 'say "hi"': '1' },
      }),
    )
    await store.saveSession(
      session('c', {
        lastActivity: '2026-01-04T00:00:00.000Z',
        state: 'active',
        parentSessionId: 'a',
        metadata: { 'a.b': 'dotted' },
      }),
    )
    const ids = async (query: object) => (await store.listSessions(query)).map((data) => data.id)
    expect(await ids({})).toEqual(['a', 'b'])
    expect(await ids({ includeChildren: true })).toEqual(['c', 'a', 'b'])
    expect(await ids({ state: ['error', 'active'], includeChildren: true })).toEqual(['c', 'b'])
    expect(await ids({ state: 'error' })).toEqual(['b'])
    expect(await ids({ state: [] })).toEqual([])
    expect(await ids({ metadata: { key: 'a.b', value: 'dotted' }, includeChildren: true })).toEqual([
      'c',
      'a',
    ])
    expect(await ids({ metadata: { key: 'say "hi"', value: 1 } })).toEqual(['a'])
    expect(await ids({ metadata: { key: 'say "hi"', value: 1.0 } })).toEqual(['a'])
    expect(await ids({ metadata: { key: 'say "hi"', value: '1' } })).toEqual(['b'])
    expect(await ids({ metadata: { key: '$gt', value: true } })).toEqual(['a'])
    expect(await ids({ metadata: { key: '$gt', value: 1 } })).toEqual([])
    expect(await ids({ metadata: { key: 'nul\u0000key', value: 'x\u0000y' } })).toEqual(['a'])
  })

  it('retention deletes more than one chunk of roots, with children, messages, states and scope', async () => {
    const store = persister()
    const old = '2025-01-01T00:00:00.000Z'
    for (let index = 0; index < 1200; index++) {
      void store.saveSession(session(`old-${index}`, { lastActivity: old, userId: 'u' }))
    }
    await store.saveSession(session('child', { parentSessionId: 'old-7', userId: 'u' }))
    await store.saveSession(session('grandchild', { parentSessionId: 'child', userId: 'x' }))
    await store.saveSession(session('running', { lastActivity: old, userId: 'u', state: 'active' }))
    await store.saveSession(session('other-user', { lastActivity: old, userId: 'v' }))
    await store.saveSession(session('recent', { userId: 'u' }))
    await store.saveMessage('grandchild', message('grandchild', 0))
    const removed = await store.deleteSessions({
      lastActivityBefore: '2025-06-01T00:00:00.000Z',
      userId: 'u',
      states: ['idle'],
    })
    expect(removed).toBe(1202)
    expect((await store.listSessions({ includeChildren: true })).map((data) => data.id).sort()).toEqual([
      'other-user',
      'recent',
      'running',
    ])
    const { rows } = await admin.query(`select count(*)::int as count from "${store.schema}".messages`)
    expect(rows).toEqual([{ count: 0 }])
  })

  it('selects retention roots by an index range on last_activity and children by the parent index', async () => {
    const store = persister()
    await store.saveSession(session('s'))
    const text = await plan(
      store.schema,
      `with recursive doomed(id) as ((select id from $schema.sessions where last_activity < '2026' and user_id = 'u' limit 500)
union select child.id from $schema.sessions as child join doomed on child.parent_session_id = doomed.id)
delete from $schema.sessions where id in (select id from doomed)`,
    )
    // A range of one of the (user_id, …, last_activity) indexes, whichever the planner picks.
    expect(text).toMatch(
      /Index (Only )?Scan using sessions_user_\w*activity[^\n]*\n\s*Index Cond: \(\(user_id = 'u'::text\) AND \(last_activity < /,
    )
    expect(text).toMatch(/(Bitmap )?Index Scan (using|on) sessions_parent/)
  })

  it('deleteSession removes the whole tree of child sessions, also with a cycle of parent ids', async () => {
    const store = persister()
    await store.saveSession(session('root'))
    await store.saveSession(session('a', { parentSessionId: 'root' }))
    await store.saveSession(session('b', { parentSessionId: 'a' }))
    await store.saveSession(session('x', { parentSessionId: 'y' }))
    await store.saveSession(session('y', { parentSessionId: 'x' }))
    await store.saveSession(session('keep'))
    await store.deleteSession('root')
    await store.deleteSession('x')
    expect((await store.listSessions({ includeChildren: true })).map((data) => data.id)).toEqual(['keep'])
  })
})
