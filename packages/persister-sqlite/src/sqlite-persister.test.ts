import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AnyMessage, SessionData } from '@agentx/core'
import { isAgentError } from '@agentx/core'
import BetterSqlite3 from 'better-sqlite3'
import { sql } from 'kysely'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { createSqlitePersister, type SqlitePersister } from './index.js'

const folder = mkdtempSync(join(tmpdir(), 'agentx-sqlite-persister-'))
afterAll(() => rmSync(folder, { recursive: true, force: true }))

let fileCount = 0
const open: SqlitePersister[] = []
afterEach(async () => {
  vi.restoreAllMocks()
  await Promise.all(open.splice(0).map((persister) => persister.close()))
})

function newFile(): string {
  return join(folder, `test-${fileCount++}.db`)
}

function persisterAt(filename = newFile(), options: { maxBatchSize?: number } = {}): SqlitePersister {
  const persister = createSqlitePersister({ filename, ...options })
  open.push(persister)
  return persister
}

function rawRows(filename: string, sql: string, ...parameters: unknown[]): Array<Record<string, unknown>> {
  const database = new BetterSqlite3(filename, { readonly: true })
  try {
    return database.prepare(sql).all(...parameters) as Array<Record<string, unknown>>
  } finally {
    database.close()
  }
}

function session(id: string, overrides: Partial<SessionData> = {}): SessionData {
  return {
    id,
    summary: `summary of ${id}`,
    createdAt: '2025-03-01T10:00:00.000Z',
    lastActivity: '2025-03-01T10:00:00.000Z',
    state: 'idle',
    tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    ...overrides,
  }
}

function message(sessionId: string, seq: number, overrides: Partial<AnyMessage> = {}): AnyMessage {
  return {
    id: `${sessionId}-m${seq}`,
    sessionId,
    seq,
    type: 'user',
    content: `message ${seq}`,
    timestamp: '2025-03-01T10:00:00.123Z',
    ...overrides,
  }
}

async function rejection(
  promise: Promise<unknown>,
): Promise<{ code: string; retryable: boolean; cause?: unknown }> {
  try {
    await promise
  } catch (error) {
    expect(isAgentError(error)).toBe(true)
    return error as { code: string; retryable: boolean; cause?: unknown }
  }
  throw new Error('expected a rejection')
}

describe('SqlitePersister sessions', () => {
  it('round-trips every SessionData field and stores absent optional fields as NULL', async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    const full = session('full', {
      cwd: '/home/user/project',
      model: 'claude-sonnet-5-5',
      systemPrompt: 'Be brief.',
      state: 'active',
      providerSessionId: 'resp_123',
      tokenUsage: {
        inputTokens: 10,
        outputTokens: 5,
        cacheReadTokens: 3,
        reasoningTokens: 1,
        totalTokens: 15,
      },
      userId: 'user-1',
      appName: 'app-1',
      metadata: { tags: ['a', 'b'], nested: { n: 0.1, nil: null, no: false } },
    })
    const minimal = session('minimal')
    await persister.saveSession(full)
    await persister.saveSession(minimal)

    expect(await persister.getSession('full')).toEqual(full)
    const readMinimal = await persister.getSession('minimal')
    expect(readMinimal).toEqual(minimal)
    expect(Object.keys(readMinimal!).sort()).toEqual(Object.keys(minimal).sort())

    const [row] = rawRows(filename, 'select * from sessions where id = ?', 'minimal')
    expect(row).toMatchObject({
      cwd: null,
      model: null,
      system_prompt: null,
      provider_session_id: null,
      user_id: null,
      app_name: null,
      metadata: null,
      extra: null,
      token_usage: '{"inputTokens":0,"outputTokens":0,"totalTokens":0}',
      created_at: '2025-03-01T10:00:00.000Z',
    })
  })

  it('upserts: a re-save replaces every field, including one that became absent', async () => {
    const persister = persisterAt()
    await persister.saveSession(session('s', { model: 'a', metadata: { x: 1 } }))
    const replaced = session('s', {
      summary: 'new',
      state: 'completed',
      lastActivity: '2025-03-02T00:00:00.000Z',
    })
    await persister.saveSession(replaced)
    expect(await persister.getSession('s')).toEqual(replaced)
    expect(await persister.getAllSessions()).toEqual([replaced])
  })

  it('returns null for an unknown id and treats ids as opaque, case-sensitive text', async () => {
    const persister = persisterAt()
    const ids = ['A', 'a', ' a ', "x'; DROP TABLE sessions; --", '👩‍👩‍👧 é', 'nul\u0000id', 'x'.repeat(255)]
    for (const id of ids) await persister.saveSession(session(id, { summary: id }))
    for (const id of ids) expect((await persister.getSession(id))?.summary).toBe(id)
    expect(await persister.getSession('b')).toBeNull()
    expect(await persister.getSession('nul')).toBeNull()
  })

  it('lists by lastActivity desc then id desc in JavaScript string order, filtered and paged', async () => {
    const persister = persisterAt()
    const same = '2025-03-05T00:00:00.000Z'
    // '\uFF01' sorts after an astral character in UTF-8 but before it in UTF-16 (JavaScript) order.
    const sessions = [
      session('\uFF01', { lastActivity: same, userId: 'u1', appName: 'x' }),
      session('😀', { lastActivity: same, userId: 'u1', appName: 'y' }),
      session('b', { lastActivity: '2025-03-04T00:00:00.000Z', userId: 'u2', appName: 'x', state: 'active' }),
      session('a', { lastActivity: '2025-03-06T00:00:00.000Z', userId: 'u1', appName: 'x', state: 'active' }),
      session('c', { lastActivity: '1969-12-31T23:59:59.999Z' }),
    ]
    for (const s of sessions) await persister.saveSession(s)
    const ids = (list: SessionData[]): string[] => list.map((s) => s.id)

    expect(ids(await persister.listSessions({}))).toEqual(['a', '\uFF01', '😀', 'b', 'c'])
    expect(ids(await persister.listSessions({ limit: 2, offset: 1 }))).toEqual(['\uFF01', '😀'])
    expect(ids(await persister.listSessions({ offset: 4 }))).toEqual(['c'])
    expect(ids(await persister.listSessions({ limit: 0 }))).toEqual([])
    expect(ids(await persister.listSessions({ userId: 'u1' }))).toEqual(['a', '\uFF01', '😀'])
    expect(ids(await persister.listSessions({ userId: 'u1', appName: 'x' }))).toEqual(['a', '\uFF01'])
    expect(ids(await persister.listSessions({ appName: 'x' }))).toEqual(['a', '\uFF01', 'b'])
    expect(ids(await persister.listSessions({ state: 'active' }))).toEqual(['a', 'b'])
    expect(ids(await persister.listSessions({ userId: 'U1' }))).toEqual([])
    expect((await rejection(persister.listSessions({ limit: -1 }))).code).toBe('VALIDATION')
    expect((await rejection(persister.listSessions({ offset: 1.5 }))).code).toBe('VALIDATION')
  })

  it('answers listing queries from an index, the start-up state query included', async () => {
    const persister = persisterAt()
    const kysely = await persister.getKysely()
    const plans: Array<Array<{ detail: string }>> = []
    for (const where of [
      '',
      "where user_id = 'u'",
      "where app_name = 'a'",
      "where user_id = 'u' and app_name = 'a'",
      "where state = 'active'",
    ]) {
      const { rows } = await sql<{
        detail: string
      }>`explain query plan select id from sessions ${sql.raw(where)} order by last_activity desc, id_order desc limit 50`.execute(
        kysely,
      )
      plans.push(rows)
    }
    for (const plan of plans) {
      const text = plan.map((row) => row.detail).join(' | ')
      expect(text).toMatch(/USING (COVERING )?INDEX sessions_/)
      expect(text).not.toMatch(/TEMP B-TREE/)
    }
  })

  it('deletes a session with its messages; re-creating the id does not bring them back', async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    await persister.saveSession(session('gone'))
    await persister.saveSession(session('kept'))
    await Promise.all([
      persister.saveMessage('gone', message('gone', 0)),
      persister.saveMessage('kept', message('kept', 0)),
    ])
    await persister.deleteSession('gone')
    await persister.deleteSession('gone')
    await persister.deleteSession('never-existed')
    expect(await persister.getSession('gone')).toBeNull()
    expect(await persister.getMessages('gone')).toEqual([])
    expect(rawRows(filename, 'select session_id from messages')).toEqual([{ session_id: 'kept' }])
    await persister.saveSession(session('gone'))
    expect(await persister.getMessages('gone')).toEqual([])
    expect(await persister.getMessages('kept')).toEqual([message('kept', 0)])
  })

  it('copies: mutating an input after the call or a returned value changes nothing stored', async () => {
    const persister = persisterAt()
    const input = session('s', { metadata: { list: [1] } })
    const saved = persister.saveSession(input)
    ;(input.metadata!.list as number[]).push(2)
    input.summary = 'changed'
    await saved
    const read = await persister.getSession('s')
    expect(read).toEqual(session('s', { metadata: { list: [1] } }))
    ;(read!.metadata!.list as number[]).push(3)
    expect((await persister.getSession('s'))!.metadata).toEqual({ list: [1] })
  })
})

describe('SqlitePersister messages', () => {
  it('round-trips messages exactly and leaves absent fields absent', async () => {
    const persister = persisterAt()
    await persister.saveSession(session('s'))
    const full = message('s', 0, {
      type: 'agent',
      content: [
        { type: 'text', text: 'hi', providerMetadata: { claude: { citations: [] } } },
        { type: 'thinking', text: 'hmm', signature: 'sig==' },
        { type: 'tool_use', id: 'tu_1', name: 'search', input: { q: 'x', n: 0, deep: [null, true, -1] } },
        { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
      ],
      usage: { inputTokens: 12, outputTokens: 7, cacheWriteTokens: 2, totalTokens: 19 },
      stopReason: 'tool_use',
      incomplete: false,
      metadata: { '': '', empty: {}, list: [], max: Number.MAX_SAFE_INTEGER, float: 0.1 },
    })
    const plain = message('s', 1, { content: '' })
    await persister.saveMessage('s', full)
    await persister.saveMessage('s', plain)
    const [readFull, readPlain] = await persister.getMessages('s')
    expect(readFull).toEqual(full)
    expect(readFull!.incomplete).toBe(false)
    expect(readPlain).toEqual(plain)
    expect(Object.keys(readPlain!).sort()).toEqual(Object.keys(plain).sort())
  })

  it('stores a message as it was when saveMessage was called, even if the caller mutates it before the write', async () => {
    const persister = persisterAt()
    await persister.saveSession(session('s'))
    const input = message('s', 0, {
      content: [{ type: 'text', text: 'original' }],
      usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      metadata: { tags: ['a'] },
    })
    const expected = structuredClone(input)
    const saved = persister.saveMessage('s', input)
    ;(input.content as Array<{ text: string }>)[0]!.text = 'mutated'
    input.usage!.totalTokens = 99
    ;(input.metadata!.tags as string[]).push('b')
    await saved
    expect(await persister.getMessages('s')).toEqual([expected])
  })

  it('converts values like the JSON copy of core: a Date to its ISO string, undefined in an array to null', async () => {
    const persister = persisterAt()
    await persister.saveSession(session('s'))
    await persister.saveMessage(
      's',
      message('s', 0, {
        content: [{ type: 'tool_use', id: 't', name: 'n', input: { list: [1, undefined] } }],
        metadata: { at: new Date('2025-01-02T03:04:05.006Z'), zero: -0 },
      }),
    )
    const [read] = await persister.getMessages('s')
    expect(read!.content).toEqual([{ type: 'tool_use', id: 't', name: 'n', input: { list: [1, null] } }])
    expect(read!.metadata).toEqual({ at: '2025-01-02T03:04:05.006Z', zero: 0 })
    expect(Object.is(read!.metadata!.zero, 0)).toBe(true)
  })

  it('keeps NUL characters, astral and combining text, and unpaired surrogates byte-exact', async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    const odd = 'a\u0000b \uD800 lone \uDFFF 👩‍👩‍👧 e\u0301 \u202Eשלום \uFEFF'
    await persister.saveSession(session('s', { summary: odd, systemPrompt: odd, metadata: { [odd]: odd } }))
    const m = message('s', 0, {
      content: [{ type: 'text', text: odd }],
      timestamp: '2025-03-01T10:00:00.000Z',
      stopReason: 'other',
      metadata: { odd },
    })
    await persister.saveMessage('s', m)
    await persister.saveMessage('s', message('s', 1, { content: odd }))
    const read = await persister.getSession('s')
    expect(read!.summary).toBe(odd)
    expect(read!.systemPrompt).toBe(odd)
    expect(read!.metadata).toEqual({ [odd]: odd })
    const messages = await persister.getMessages('s')
    expect(messages).toEqual([m, message('s', 1, { content: odd })])
    // The summary column holds a readable copy; the exact text is kept in `extra`.
    const [row] = rawRows(filename, 'select summary, extra from sessions')
    expect(row!.summary).toBe(odd.replace(/\p{Cs}/gu, '\uFFFD'))
    expect(JSON.parse(row!.extra as string)).toEqual({ summary: odd, systemPrompt: odd })
  })

  it('rejects unpaired surrogates in ids, user ids and app names with VALIDATION, writing nothing', async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    await persister.saveSession(session('s'))
    expect((await rejection(persister.saveSession(session('x\uD800')))).code).toBe('VALIDATION')
    expect((await rejection(persister.saveSession(session('y', { userId: '\uDC00' })))).code).toBe(
      'VALIDATION',
    )
    expect((await rejection(persister.saveSession(session('z', { appName: 'a\uD800' })))).code).toBe(
      'VALIDATION',
    )
    expect((await rejection(persister.saveMessage('s', message('s', 0, { id: 'm\uD800' })))).code).toBe(
      'VALIDATION',
    )
    expect((await rejection(persister.getSession('x\uD800'))).code).toBe('VALIDATION')
    expect(rawRows(filename, 'select id from sessions')).toEqual([{ id: 's' }])
    expect(rawRows(filename, 'select count(*) as n from messages')).toEqual([{ n: 0 }])
  })

  it("refuses session metadata nested deeper than SQLite's JSON functions read with VALIDATION, not retryable, writing nothing", async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    await persister.saveSession(session('s', { metadata: { v: 0 } }))
    let deep: unknown = 'x'
    for (let i = 0; i < 1000; i++) deep = [deep]
    const error = await rejection(persister.saveSession(session('s', { metadata: { deep } })))
    // Before, a retryable PERSISTENCE error ("malformed JSON"): the kernel retried it for ever.
    expect([error.code, error.retryable]).toEqual(['VALIDATION', false])
    expect((error as unknown as Error).message).toMatch(/metadata.*deeper than SQLite/)
    expect((await persister.getSession('s'))?.metadata).toEqual({ v: 0 })
  })

  it('keeps hostile keys and unknown fields as plain data', async () => {
    const persister = persisterAt()
    const metadata = JSON.parse('{"__proto__":{"polluted":true},"constructor":1,"$gt":"","a.b":2}') as Record<
      string,
      unknown
    >
    await persister.saveSession({ ...session('s', { metadata }), futureField: { kept: true } } as SessionData)
    await persister.saveMessage('s', {
      ...message('s', 0, { metadata }),
      extraField: [1, 'two'],
    } as AnyMessage)
    const read = await persister.getSession('s')
    expect(read).toEqual({ ...session('s', { metadata }), futureField: { kept: true } })
    expect(Object.getOwnPropertyNames(read!.metadata)).toContain('__proto__')
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    const [m] = await persister.getMessages('s')
    expect(m).toEqual({ ...message('s', 0, { metadata }), extraField: [1, 'two'] })
  })

  it('upserts a message in place by id and keeps ids of different sessions apart', async () => {
    const persister = persisterAt()
    await persister.saveSession(session('a'))
    await persister.saveSession(session('b'))
    for (const seq of [0, 1, 2]) await persister.saveMessage('a', message('a', seq))
    const rewritten = message('a', 1, {
      type: 'agent',
      content: 'final',
      incomplete: false,
      stopReason: 'end_turn',
    })
    await persister.saveMessage('a', message('a', 1, { type: 'agent', content: 'partial', incomplete: true }))
    await persister.saveMessage('a', rewritten)
    await persister.saveMessage('b', { ...message('b', 0), id: 'a-m1', content: 'other session' })
    expect(await persister.getMessages('a')).toEqual([message('a', 0), rewritten, message('a', 2)])
    expect(await persister.getMessages('b')).toEqual([
      { ...message('b', 0), id: 'a-m1', content: 'other session' },
    ])
  })

  it('rejects a message for an unknown session with NOT_FOUND and one whose seq is taken with CONFLICT', async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    await persister.saveSession(session('s'))
    await persister.saveMessage('s', message('s', 0))
    const notFound = await rejection(persister.saveMessage('nope', message('nope', 0)))
    expect(notFound).toMatchObject({ code: 'NOT_FOUND', retryable: false })
    expect((notFound.cause as { code?: string }).code).toBe('SQLITE_CONSTRAINT_FOREIGNKEY')
    const conflict = await rejection(persister.saveMessage('s', message('s', 0, { id: 'other' })))
    expect(conflict).toMatchObject({ code: 'CONFLICT', retryable: false })
    expect(rawRows(filename, 'select session_id, id, seq from messages')).toEqual([
      { session_id: 's', id: 's-m0', seq: 0 },
    ])
  })

  it('pages with afterSeq and limit, ordered by seq whatever the timestamps or save order', async () => {
    const persister = persisterAt()
    await persister.saveSession(session('s'))
    await Promise.all([4, 0, 3, 1, 2].map((seq) => persister.saveMessage('s', message('s', seq))))
    const seqs = (messages: AnyMessage[]): number[] => messages.map((m) => m.seq)
    expect(seqs(await persister.getMessages('s'))).toEqual([0, 1, 2, 3, 4])
    expect(seqs(await persister.getMessages('s', { afterSeq: 1 }))).toEqual([2, 3, 4])
    expect(seqs(await persister.getMessages('s', { afterSeq: 1, limit: 2 }))).toEqual([2, 3])
    expect(seqs(await persister.getMessages('s', { afterSeq: 4 }))).toEqual([])
    expect(await persister.getMessages('s', { limit: 0 })).toEqual([])
    expect(await persister.getMessages('unknown')).toEqual([])
    expect((await rejection(persister.getMessages('s', { limit: -1 }))).code).toBe('VALIDATION')
    expect((await rejection(persister.getMessages('s', { limit: 1.5 }))).code).toBe('VALIDATION')
  })

  it('reads sessions larger than one read chunk completely, in order, with afterSeq and limit across chunks', async () => {
    const persister = persisterAt()
    await persister.saveSession(session('s'))
    const count = 1203
    await Promise.all(
      Array.from({ length: count }, (_, seq) => persister.saveMessage('s', message('s', seq))),
    )
    const seqs = (messages: AnyMessage[]) => messages.map((m) => m.seq)
    const range = (from: number, to: number) => Array.from({ length: to - from }, (_, index) => from + index)

    const all = await persister.getMessages('s')
    expect(seqs(all)).toEqual(range(0, count))
    expect(all[1000]).toEqual(message('s', 1000))
    expect(seqs(await persister.getMessages('s', { limit: 501 }))).toEqual(range(0, 501))
    expect(seqs(await persister.getMessages('s', { afterSeq: 499, limit: 600 }))).toEqual(range(500, 1100))
    expect(seqs(await persister.getMessages('s', { afterSeq: 999 }))).toEqual(range(1000, count))
    expect(seqs(await persister.getMessages('s', { afterSeq: 1000.5, limit: 2 }))).toEqual([1001, 1002])
  })

  it('deleteMessages empties one session, keeps it, and later saves order correctly', async () => {
    const persister = persisterAt()
    await persister.saveSession(session('a'))
    await persister.saveSession(session('b'))
    await Promise.all([
      persister.saveMessage('a', message('a', 0)),
      persister.saveMessage('b', message('b', 0)),
    ])
    await persister.deleteMessages('a')
    expect(await persister.getSession('a')).toEqual(session('a'))
    expect(await persister.getMessages('a')).toEqual([])
    expect(await persister.getMessages('b')).toEqual([message('b', 0)])
    await persister.saveMessage('a', message('a', 1))
    await persister.saveMessage('a', message('a', 0))
    expect((await persister.getMessages('a')).map((m) => m.seq)).toEqual([0, 1])
  })

  it('fills the query-only tool columns from the content', async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    await persister.saveSession(session('s'))
    await persister.saveMessage(
      's',
      message('s', 0, {
        type: 'agent',
        content: [
          { type: 'text', text: 'let me look' },
          { type: 'tool_use', id: 'tu_1', name: 'search', input: { q: 'sqlite' } },
          { type: 'tool_use', id: 'tu_2', name: 'fetch', input: {} },
        ],
      }),
    )
    await persister.saveMessage(
      's',
      message('s', 1, {
        type: 'tool',
        content: [{ type: 'tool_result', toolUseId: 'tu_1', content: 'found', isError: false }],
      }),
    )
    await persister.saveMessage('s', message('s', 2))
    expect(
      rawRows(
        filename,
        'select seq, is_tool_use, tool_name, tool_input, tool_id, tool_result from messages order by seq',
      ),
    ).toEqual([
      {
        seq: 0,
        is_tool_use: 1,
        tool_name: 'search',
        tool_input: '{"q":"sqlite"}',
        tool_id: 'tu_1',
        tool_result: null,
      },
      { seq: 1, is_tool_use: 0, tool_name: null, tool_input: null, tool_id: 'tu_1', tool_result: '"found"' },
      { seq: 2, is_tool_use: 0, tool_name: null, tool_input: null, tool_id: null, tool_result: null },
    ])
  })

  it('re-saving a message rewrites every column, from a plain row to each richer kind and back', async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    await persister.saveSession(session('s'))
    const plain = message('s', 0, { type: 'agent', content: [{ type: 'text', text: 'plain' }] })
    const columns =
      'select is_tool_use, tool_name, tool_input, tool_id, tool_result, extra, agent_name, compaction from messages'
    const empty: Record<string, string | number | null> = {
      is_tool_use: 0,
      tool_name: null,
      tool_input: null,
      tool_id: null,
      tool_result: null,
      extra: null,
      agent_name: null,
      compaction: null,
    }
    // Each variant sets one group of the columns a plain row leaves empty.
    const variants: Array<[AnyMessage, typeof empty]> = [
      [{ ...plain, agentName: 'planner' }, { agent_name: 'planner' }],
      [{ ...plain, compaction: { throughSeq: 0 } }, { compaction: '{"throughSeq":0}' }],
      [
        { ...plain, vendorField: { kept: true } } as unknown as AnyMessage,
        { extra: '{"vendorField":{"kept":true}}' },
      ],
      [
        { ...plain, content: [{ type: 'tool_use', id: 'tu_1', name: 'search', input: { q: 1 } }] },
        { is_tool_use: 1, tool_name: 'search', tool_input: '{"q":1}', tool_id: 'tu_1' },
      ],
      [
        {
          ...plain,
          type: 'tool',
          content: [{ type: 'tool_result', toolUseId: 'tu_1', content: 'ok', isError: false }],
        },
        { tool_id: 'tu_1', tool_result: '"ok"' },
      ],
    ]
    await persister.saveMessage('s', plain)
    expect(rawRows(filename, columns)).toEqual([empty])
    for (const [variant, set] of variants) {
      await persister.saveMessage('s', variant)
      expect(rawRows(filename, columns)).toEqual([{ ...empty, ...set }])
      expect(await persister.getMessages('s')).toEqual([variant])
      await persister.saveMessage('s', plain)
      expect(rawRows(filename, columns)).toEqual([empty])
      expect(await persister.getMessages('s')).toEqual([plain])
    }
  })

  it('rejects invalid input with VALIDATION before anything is written', async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    await persister.saveSession(session('s'))
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    const cases: Array<Promise<unknown>> = [
      persister.saveSession(session('')),
      persister.saveSession(session('t', { createdAt: 'yesterday' })),
      persister.saveMessage('', message('s', 0)),
      persister.saveMessage('s', message('s', 0, { sessionId: 'other' })),
      persister.saveMessage('s', message('s', -1)),
      persister.saveMessage('s', message('s', 0, { metadata: cyclic })),
      persister.saveMessage('s', message('s', 0, { metadata: { f: () => 1 } })),
      persister.saveMessage('s', message('s', 0, { incomplete: 'yes' as unknown as boolean })),
      persister.saveMessage('s', message('s', 0, { stopReason: 5 as unknown as 'other' })),
      persister.getMessages('s', { afterSeq: Number.NaN }),
    ]
    for (const pending of cases) expect((await rejection(pending)).code).toBe('VALIDATION')
    expect(rawRows(filename, 'select count(*) as n from messages')).toEqual([{ n: 0 }])
    expect(rawRows(filename, 'select id from sessions')).toEqual([{ id: 's' }])
  })
})

describe('SqlitePersister batching and ordering', () => {
  it('writes unawaited saveMessage calls of one tick in one transaction, settling each call on its own', async () => {
    const filename = newFile()
    const persister = persisterAt(filename, { maxBatchSize: 1000 })
    await persister.saveSession(session('s'))
    const probe = new BetterSqlite3(':memory:')
    const statementPrototype = Object.getPrototypeOf(probe.prepare('select 1')) as {
      run: (...args: unknown[]) => unknown
    }
    probe.close()
    const begins: string[] = []
    const run = statementPrototype.run
    vi.spyOn(statementPrototype, 'run').mockImplementation(function (
      this: { source: string },
      ...args: unknown[]
    ) {
      if (this.source.startsWith('BEGIN')) begins.push(this.source)
      return run.apply(this, args)
    })

    const calls: Array<Promise<void>> = []
    for (let seq = 0; seq < 300; seq++) {
      if (seq === 100) calls.push(persister.saveMessage('missing', message('missing', 0)))
      if (seq === 200) calls.push(persister.saveMessage('s', message('s', 150, { id: 'duplicate-seq' })))
      calls.push(persister.saveMessage('s', message('s', seq)))
    }
    const outcomes = await Promise.allSettled(calls)

    expect(begins).toEqual(['BEGIN IMMEDIATE'])
    const rejected = outcomes.flatMap((outcome, index) =>
      outcome.status === 'rejected' ? [{ index, code: (outcome.reason as { code: string }).code }] : [],
    )
    expect(rejected).toEqual([
      { index: 100, code: 'NOT_FOUND' },
      { index: 201, code: 'CONFLICT' },
    ])
    const stored = await persister.getMessages('s')
    expect(stored.map((m) => m.seq)).toEqual(Array.from({ length: 300 }, (_, seq) => seq))
    expect(stored.every((m) => m.id === `s-m${m.seq}`)).toBe(true)
  })

  it('splits very large bursts into transactions of maxBatchSize', async () => {
    const persister = persisterAt(newFile(), { maxBatchSize: 40 })
    await persister.saveSession(session('s'))
    const probe = new BetterSqlite3(':memory:')
    const statementPrototype = Object.getPrototypeOf(probe.prepare('select 1')) as {
      run: (...args: unknown[]) => unknown
    }
    probe.close()
    let begins = 0
    const run = statementPrototype.run
    vi.spyOn(statementPrototype, 'run').mockImplementation(function (
      this: { source: string },
      ...args: unknown[]
    ) {
      if (this.source.startsWith('BEGIN')) begins++
      return run.apply(this, args)
    })
    await Promise.all(Array.from({ length: 100 }, (_, seq) => persister.saveMessage('s', message('s', seq))))
    expect(begins).toBe(3)
    expect(await persister.getMessages('s')).toHaveLength(100)
  })

  it('writes a full batch while the burst is still being issued, also behind a queued saveSession, never ahead of it', async () => {
    const filename = newFile()
    const persister = persisterAt(filename, { maxBatchSize: 10 })
    await persister.saveSession(session('s'))
    const count = (id: string) =>
      rawRows(filename, 'select count(*) as n from messages where session_id = ?', id)[0]

    const first = Array.from({ length: 10 }, (_, seq) => persister.saveMessage('s', message('s', seq)))
    // The tenth call completed a batch with nothing queued ahead of it: it is already on disk.
    expect(count('s')).toEqual({ n: 10 })
    const rest = Array.from({ length: 5 }, (_, seq) => persister.saveMessage('s', message('s', 10 + seq)))
    expect(count('s')).toEqual({ n: 10 })
    await Promise.all([...first, ...rest])
    expect(count('s')).toEqual({ n: 15 })

    // A session save queued first is written first, then the burst behind it, batch by batch: at
    // most one batch of the burst is still held in memory when the burst has been issued.
    const created = persister.saveSession(session('t'))
    const burst = Array.from({ length: 25 }, (_, seq) => persister.saveMessage('t', message('t', seq)))
    expect(rawRows(filename, 'select id from sessions where id = ?', 't')).toEqual([{ id: 't' }])
    expect(count('t')!.n).toBeGreaterThanOrEqual(25 - 10)
    await Promise.all([created, ...burst])
    expect((await persister.getMessages('t')).map((m) => m.seq)).toEqual(
      Array.from({ length: 25 }, (_, seq) => seq),
    )
  })

  it('runs calls in call order: unawaited writes are visible to a later read, and delete wins over earlier saves', async () => {
    const persister = persisterAt()
    const saveSession = persister.saveSession(session('s'))
    const saves = [0, 1, 2].map((seq) => persister.saveMessage('s', message('s', seq)))
    const read = persister.getMessages('s')
    const removed = persister.deleteSession('s')
    const afterDelete = persister.getMessages('s')
    const late = persister.saveMessage('s', message('s', 3))
    await Promise.all([saveSession, ...saves, removed])
    expect((await read).map((m) => m.seq)).toEqual([0, 1, 2])
    expect(await afterDelete).toEqual([])
    expect((await rejection(late)).code).toBe('NOT_FOUND')
  })

  it('keeps exactly one row for 20 parallel saves of one id, equal to one of the versions', async () => {
    const persister = persisterAt()
    await persister.saveSession(session('s'))
    const versions = Array.from({ length: 20 }, (_, index) =>
      message('s', 0, { id: 'same', content: `v${index}` }),
    )
    await Promise.all(versions.map((version) => persister.saveMessage('s', version)))
    const stored = await persister.getMessages('s')
    expect(stored).toHaveLength(1)
    expect(versions).toContainEqual(stored[0])
  })
})

describe('SqlitePersister lifecycle', () => {
  it('never throws synchronously, even for nonsense arguments', async () => {
    const persister = persisterAt()
    const calls = [
      () => persister.saveSession(null as unknown as SessionData),
      () => persister.saveMessage('s', undefined as unknown as AnyMessage),
      () => persister.getMessages('s', null as unknown as { limit: number }),
      () => persister.listSessions(5 as unknown as object),
      () => persister.getSession(42 as unknown as string),
    ]
    for (const call of calls) {
      const result = call()
      expect(result).toBeInstanceOf(Promise)
      expect((await rejection(result)).code).toBe('VALIDATION')
    }
  })

  it('close waits for pending batched writes, is idempotent, and later calls reject with CLOSED', async () => {
    const filename = newFile()
    const persister = createSqlitePersister({ filename })
    await persister.saveSession(session('s'))
    const pending = Array.from({ length: 50 }, (_, seq) => persister.saveMessage('s', message('s', seq)))
    const closed = persister.close()
    expect(persister.close()).toBe(closed)
    await closed
    await expect(Promise.all(pending)).resolves.toHaveLength(50)
    expect(rawRows(filename, 'select count(*) as n from messages')).toEqual([{ n: 50 }])
    for (const call of [
      persister.getSession('s'),
      persister.saveMessage('s', message('s', 60)),
      persister.listSessions({}),
      persister.deleteMessages('s'),
    ]) {
      expect(await rejection(call)).toMatchObject({ code: 'CLOSED', retryable: false })
    }
    await persister.close()
  })

  it('closing a persister that never opened its file creates nothing', async () => {
    const filename = join(folder, 'never-opened', 'agent.db')
    const persister = createSqlitePersister({ filename })
    await persister.close()
    expect(() => rawRows(filename, 'select 1')).toThrow()
  })

  it('works in memory with ":memory:"', async () => {
    const persister = persisterAt(':memory:')
    await persister.saveSession(session('s'))
    await persister.saveMessage('s', message('s', 0))
    expect(await persister.getMessages('s')).toEqual([message('s', 0)])
    const other = persisterAt(':memory:')
    expect(await other.getAllSessions()).toEqual([])
  })

  it('rejects bad options from the constructor with a ConfigurationError', () => {
    expect(() => createSqlitePersister({ filename: '' })).toThrow(/filename/)
    expect(() => createSqlitePersister({} as { filename: string })).toThrow(/filename/)
    expect(() => createSqlitePersister({ filename: 'x.db', busyTimeoutMs: -1 })).toThrow(/busyTimeoutMs/)
    expect(() => createSqlitePersister({ filename: 'x.db', maxBatchSize: 0 })).toThrow(/maxBatchSize/)
    expect(() => createSqlitePersister({ filename: 'x.db', synchronous: 'off' as 'full' })).toThrow(
      /synchronous/,
    )
    // A misspelled key would be ignored without a word: refused, naming the closest one.
    expect(() => createSqlitePersister({ filename: 'x.db', busyTimeout: 100 } as never)).toThrow(
      "Unknown SqlitePersister option 'busyTimeout' — did you mean 'busyTimeoutMs'?",
    )
    try {
      createSqlitePersister({ filename: '' })
    } catch (error) {
      expect((error as { code: string }).code).toBe('CONFIGURATION')
    }
  })
})
