import type { AnyMessage, SessionData } from '@agentx/core'
import { ConfigurationError, isAgentError } from '@agentx/core'
import pg from 'pg'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import {
  adminPool,
  dropSchema,
  freshSchema,
  TEST_DATABASE_URL,
  testPersister,
} from '../test/test-database.js'
import { createPostgresPersister, POSTGRES_SCHEMA_VERSION, PostgresPersister } from './index.js'

const admin = adminPool()
const open: PostgresPersister[] = []
afterEach(async () => {
  for (const persister of open.splice(0)) {
    await persister.close()
    await dropSchema(admin, persister.schema)
  }
})
afterAll(() => admin.end())

function persister(options: Parameters<typeof testPersister>[0] = {}): PostgresPersister {
  const created = testPersister({ poolSize: 4, ...options })
  open.push(created)
  return created
}

async function rows(persisterOrSchema: PostgresPersister | string, query: string, ...values: unknown[]) {
  const schema = typeof persisterOrSchema === 'string' ? persisterOrSchema : persisterOrSchema.schema
  const result = await admin.query(query.replaceAll('$schema', `"${schema}"`), values)
  return result.rows as Array<Record<string, unknown>>
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
): Promise<{ code: string; retryable: boolean; message: string }> {
  try {
    await promise
  } catch (error) {
    expect(isAgentError(error)).toBe(true)
    return error as { code: string; retryable: boolean; message: string }
  }
  throw new Error('expected a rejection')
}

describe('PostgresPersister options', () => {
  it('rejects bad options in the constructor with ConfigurationError, before any I/O', async () => {
    const bad: unknown[] = [
      undefined,
      {},
      { connectionString: '' },
      { connectionString: TEST_DATABASE_URL, pool: new pg.Pool() },
      { connectionString: TEST_DATABASE_URL, schema: 'bad name' },
      { connectionString: TEST_DATABASE_URL, schema: '' },
      { connectionString: TEST_DATABASE_URL, schema: 'pg_catalog' },
      { connectionString: TEST_DATABASE_URL, schema: 'tenant.é' },
      { connectionString: TEST_DATABASE_URL, schema: 'x"; drop table sessions; --' },
      { connectionString: TEST_DATABASE_URL, schema: 'a'.repeat(64) },
      { connectionString: TEST_DATABASE_URL, maxBatchSize: 0 },
      { connectionString: TEST_DATABASE_URL, retry: { maxRetries: -1 } },
      { pool: new pg.Pool(), statementTimeoutMs: 100 },
      // Unknown keys (a misspelling would be ignored without a word).
      { connectionString: TEST_DATABASE_URL, poolSize: 2, maxBatchsize: 10 },
      { connectionString: TEST_DATABASE_URL, shema: 'tenant' },
    ]
    for (const options of bad) {
      expect(() => new PostgresPersister(options as never), JSON.stringify(options)).toThrow(
        ConfigurationError,
      )
    }
    // An unset environment variable: the message says so instead of "exactly one of".
    expect(() => new PostgresPersister({ connectionString: process.env.AGENTX_UNSET_VARIABLE })).toThrow(
      /options\.connectionString is undefined \(is the environment variable it is read from set\?\)/,
    )
    expect(() => new PostgresPersister({ connectionString: TEST_DATABASE_URL, shema: 'x' } as never)).toThrow(
      "Unknown PostgresPersister option 'shema' — did you mean 'schema'?",
    )
    const valid = createPostgresPersister({ connectionString: TEST_DATABASE_URL, schema: 'Tenant-42_$x' })
    expect(valid.schema).toBe('Tenant-42_$x')
    await valid.close()
  })

  it('names the server in errors without the password of the connection string', async () => {
    const secret = 's3cr3t-password'
    const refused = createPostgresPersister({
      connectionString: `postgres://agent:${secret}@127.0.0.1:1/app`,
      retry: { maxRetries: 0 },
    })
    const error = await rejection(refused.getSession('x'))
    expect(refused.server).toBe('127.0.0.1:1/app, schema public')
    expect(error.message).toContain('127.0.0.1:1/app')
    expect(JSON.stringify(error)).not.toContain(secret)
    expect(`${error.message} ${String((error as unknown as Error).stack)}`).not.toContain(secret)
    await refused.close()
  })
})

describe('PostgresPersister storage', () => {
  it('creates its tables in the given schema with jsonb columns, NULL for absent fields', async () => {
    const store = persister()
    const full = session('full', {
      cwd: '/srv/app',
      model: 'claude-sonnet-5-5',
      systemPrompt: 'Be brief.',
      providerSessionId: 'resp_1',
      userId: 'user-1',
      appName: 'app-1',
      tokenUsage: { inputTokens: 3, outputTokens: 2, cacheReadTokens: 1, totalTokens: 5 },
      metadata: { tags: ['a'], nested: { n: 0.1, nil: null } },
    })
    await store.saveSession(full)
    await store.saveSession(session('minimal'))
    await store.saveMessage(
      'full',
      message('full', 0, {
        type: 'agent',
        content: [
          { type: 'text', text: 'calling' },
          { type: 'tool_use', id: 'call-1', name: 'search', input: { query: 'cats' } },
        ],
        usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 },
        stopReason: 'tool_use',
        incomplete: false,
        metadata: { client: 'web' },
      }),
    )
    expect(await store.getSession('full')).toEqual(full)
    const minimal = await store.getSession('minimal')
    expect(minimal).toEqual(session('minimal'))
    expect(Object.keys(minimal!).sort()).toEqual(Object.keys(session('minimal')).sort())

    const tables = await rows(
      store,
      `select table_name from information_schema.tables where table_schema = $1 order by table_name`,
      store.schema,
    )
    expect(tables.map((row) => row.table_name)).toEqual(['agentx_schema_migrations', 'messages', 'sessions'])
    expect(
      await rows(store, 'select version, name from $schema.agentx_schema_migrations order by version'),
    ).toEqual([
      { version: 1, name: 'initial schema' },
      { version: 2, name: 'storage v2: agent names, child sessions, forks, compaction, leases' },
      { version: 3, name: 'listing indexes: top-level sessions, metadata containment' },
    ])
    expect(POSTGRES_SCHEMA_VERSION).toBe(3)
    const [minimalRow] = await rows(store, `select * from $schema.sessions where id = 'minimal'`)
    expect(minimalRow).toMatchObject({
      cwd: null,
      model: null,
      system_prompt: null,
      provider_session_id: null,
      user_id: null,
      app_name: null,
      metadata: null,
      extra: null,
      created_at: '2025-03-01T10:00:00.000Z',
    })
    const [messageRow] = await rows(
      store,
      `select jsonb_typeof(content) as content_type, content->0->>'text' as first_text, usage->>'totalTokens' as total,
        is_tool_use, tool_name, tool_id, tool_input->>'query' as query, metadata->>'client' as client, incomplete, seq
       from $schema.messages`,
    )
    expect(messageRow).toEqual({
      content_type: 'array',
      first_text: 'calling',
      total: '5',
      is_tool_use: true,
      tool_name: 'search',
      tool_id: 'call-1',
      query: 'cats',
      client: 'web',
      incomplete: false,
      seq: '0',
    })
  })

  it('keeps tenants apart in quoted schemas whose names differ only in case', async () => {
    const base = freshSchema()
    const upper = persister({ schema: `${base}-Tenant` })
    const lower = persister({ schema: `${base}-tenant` })
    await upper.saveSession(session('shared-id', { summary: 'upper' }))
    await lower.saveSession(session('shared-id', { summary: 'lower' }))
    expect((await upper.getSession('shared-id'))?.summary).toBe('upper')
    expect((await lower.getSession('shared-id'))?.summary).toBe('lower')
    expect(await rows(upper, 'select summary from $schema.sessions')).toEqual([{ summary: 'upper' }])
  })

  it('round-trips NUL, U+0010 and unpaired surrogates exactly in text columns, JSON values and JSON keys', async () => {
    const store = persister()
    const tricky = [
      'nul \u0000 in the middle',
      'escape char \u0010 and \u00100 and \u0010u0041',
      'high \ud800 alone',
      'low \udc00 alone',
      'pair 😀 kept, reversed \udc00\ud800',
      'ends with \udbff',
      '\u0000',
      'literal \\u0000 text',
    ]
    const id = 'session \u0000 \ud800 id'
    const stored = session(id, {
      summary: tricky.join('|'),
      userId: 'user\u0000',
      appName: 'app\udfff',
      model: '\u0010',
      metadata: Object.fromEntries(tricky.map((text, index) => [text, { index, text }])),
    })
    await store.saveSession(stored)
    const saved = message(id, 0, {
      content: tricky.map((text) => ({ type: 'text' as const, text })),
      metadata: { [tricky[0]!]: tricky[2], nested: [tricky[1], { [tricky[3]!]: tricky[6] }] },
    })
    await store.saveMessage(id, saved)
    await store.saveMessage(id, message(id, 1, { id: 'string content', content: tricky.join('') }))

    expect(await store.getSession(id)).toEqual(stored)
    const read = await store.getMessages(id)
    expect(read).toEqual([saved, message(id, 1, { id: 'string content', content: tricky.join('') })])
    const texts = (read[0]!.content as Array<{ text: string }>).map((block) => block.text)
    for (let index = 0; index < tricky.length; index++) expect(texts[index] === tricky[index]).toBe(true)
    expect((await store.listSessions({ userId: 'user\u0000' })).map((s) => s.id)).toEqual([id])
    expect((await store.listSessions({ appName: 'app\udfff' })).map((s) => s.id)).toEqual([id])
    expect(await store.listSessions({ userId: 'user' })).toEqual([])

    // Ordinary text stays readable in SQL; only the special characters are escaped.
    const [row] = await rows(
      store,
      `select summary, metadata ? 'literal \\u0000 text' as has_key from $schema.sessions`,
    )
    expect(row!.summary).toContain('nul \u00100 in the middle')
    expect(row!.has_key).toBe(true)
  })

  it('keeps ids that differ only by encoded characters apart', async () => {
    const store = persister()
    const ids = ['a\u0000', 'a\u00100', 'a\u0010\u0010', 'a\u0010', 'a\ud800', 'a\u0010ud800', 'a']
    for (const id of ids) await store.saveSession(session(id, { summary: JSON.stringify(id) }))
    for (const id of ids) expect((await store.getSession(id))?.summary).toBe(JSON.stringify(id))
    expect((await store.getAllSessions()).length).toBe(ids.length)
  })

  it('lists by lastActivity desc then id desc in JavaScript string order, filtered and paged, from an index', async () => {
    const store = persister()
    const same = '2025-03-05T00:00:00.000Z'
    // '\uFF01' sorts after an astral character in UTF-8 but before it in UTF-16 (JavaScript) order.
    const sessions = [
      session('\uFF01', { lastActivity: same, userId: 'u1', appName: 'x' }),
      session('😀', { lastActivity: same, userId: 'u1', appName: 'y' }),
      session('b', { lastActivity: '2025-03-04T00:00:00.000Z', userId: 'u2', appName: 'x', state: 'active' }),
      session('a', { lastActivity: '2025-03-06T00:00:00.000Z', userId: 'u1', appName: 'x', state: 'active' }),
      session('c', { lastActivity: '1969-12-31T23:59:59.999Z' }),
    ]
    for (const s of sessions) await store.saveSession(s)
    const ids = (list: SessionData[]): string[] => list.map((s) => s.id)
    expect(ids(await store.listSessions({}))).toEqual(['a', '\uFF01', '😀', 'b', 'c'])
    expect(ids(await store.listSessions({ limit: 2, offset: 1 }))).toEqual(['\uFF01', '😀'])
    expect(ids(await store.listSessions({ offset: 4 }))).toEqual(['c'])
    expect(ids(await store.listSessions({ userId: 'u1', appName: 'x' }))).toEqual(['a', '\uFF01'])
    expect(ids(await store.listSessions({ state: 'active' }))).toEqual(['a', 'b'])
    expect(ids(await store.listSessions({ userId: 'U1' }))).toEqual([])

    const client = await admin.connect()
    try {
      await client.query('set enable_seqscan = off')
      for (const where of ['', "where user_id = 'u'", "where app_name = 'a'", "where state = 'active'"]) {
        const { rows: plan } = await client.query(
          `explain select id from "${store.schema}".sessions ${where} order by last_activity desc, id_order desc limit 50`,
        )
        const text = plan.map((line: Record<string, string>) => line['QUERY PLAN']).join('\n')
        expect(text).toMatch(/Index (Only )?Scan( Backward)? using sessions_/)
        expect(text).not.toMatch(/Sort/)
      }
    } finally {
      client.release()
    }
  })

  it('deletes a session with its messages; re-creating the id does not bring them back', async () => {
    const store = persister()
    await store.saveSession(session('gone'))
    await store.saveSession(session('kept'))
    await Promise.all([
      store.saveMessage('gone', message('gone', 0)),
      store.saveMessage('kept', message('kept', 0)),
    ])
    await store.deleteSession('gone')
    await store.saveSession(session('gone'))
    expect(await store.getMessages('gone')).toEqual([])
    expect(await rows(store, `select id from $schema.messages order by id`)).toEqual([{ id: 'kept-m0' }])
  })
})

describe('PostgresPersister writes', () => {
  it('groups saveMessage calls that are not awaited into one multi-row statement', async () => {
    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 4 })
    pool.on('error', () => undefined)
    const statements: string[] = []
    const wrapped = new WeakSet<object>()
    const connect = pool.connect.bind(pool)
    pool.connect = (async () => {
      const client = await connect()
      if (!wrapped.has(client)) {
        wrapped.add(client)
        const query = client.query.bind(client)
        client.query = ((text: unknown, ...rest: unknown[]) => {
          if (typeof text === 'string') statements.push(text)
          return (query as (...args: unknown[]) => unknown)(text, ...rest)
        }) as typeof client.query
      }
      return client
    }) as typeof pool.connect
    const store = persister({ pool, maxBatchSize: 1000 })
    await store.saveSession(session('s'))
    statements.length = 0
    const messages = Array.from({ length: 600 }, (_, seq) => message('s', seq))
    await Promise.all(messages.map((m) => store.saveMessage('s', m)))
    expect(statements.filter((text) => /insert into/i.test(text))).toHaveLength(1)
    expect(await store.getMessages('s')).toEqual(messages)
    await store.close()
    await pool.end()
  })

  it('fails only the bad calls of a batch: unknown session and taken seq, others are written', async () => {
    const store = persister()
    await store.saveSession(session('s'))
    await store.saveMessage('s', message('s', 5, { id: 'first-at-5' }))
    const results = await Promise.allSettled([
      store.saveMessage('s', message('s', 0)),
      store.saveMessage('ghost', message('ghost', 0)),
      store.saveMessage('s', message('s', 5, { id: 'second-at-5' })),
      store.saveMessage('s', message('s', 1)),
    ])
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled'])
    expect((results[1] as PromiseRejectedResult).reason.code).toBe('NOT_FOUND')
    expect((results[2] as PromiseRejectedResult).reason.code).toBe('CONFLICT')
    expect((await store.getMessages('s')).map((m) => m.id)).toEqual(['s-m0', 's-m1', 'first-at-5'])
    expect(await rows(store, `select count(*)::int as count from $schema.messages`)).toEqual([{ count: 3 }])
  })

  it('keeps call order: the last of several unawaited saves of one id wins, and reads see earlier writes', async () => {
    const store = persister()
    const saves: Array<Promise<void>> = [store.saveSession(session('s', { summary: 'v1' }))]
    for (let version = 0; version < 5; version++) {
      saves.push(
        store.saveMessage('s', message('s', 0, { content: `version ${version}`, incomplete: version < 4 })),
      )
      saves.push(store.saveSession(session('s', { summary: `v${version + 2}` })))
    }
    const read = store.getMessages('s')
    const readSession = store.getSession('s')
    await Promise.all(saves)
    expect(await read).toEqual([message('s', 0, { content: 'version 4', incomplete: false })])
    expect((await readSession)?.summary).toBe('v6')
    // A message saved before its session exists fails even when the session follows in the same tick.
    const early = store.saveMessage('late', message('late', 0))
    const created = store.saveSession(session('late'))
    expect((await rejection(early)).code).toBe('NOT_FOUND')
    await created
    expect(await store.getMessages('late')).toEqual([])
  })

  it('pages messages with afterSeq and limit, including non-integer and out-of-range afterSeq', async () => {
    const store = persister()
    await store.saveSession(session('p'))
    const messages = Array.from({ length: 12 }, (_, seq) => message('p', seq))
    await Promise.all(messages.map((m) => store.saveMessage('p', m)))
    expect(await store.getMessages('p', { afterSeq: 9 })).toEqual(messages.slice(10))
    expect(await store.getMessages('p', { afterSeq: 2.5, limit: 2 })).toEqual(messages.slice(3, 5))
    expect(await store.getMessages('p', { afterSeq: -10 })).toEqual(messages)
    expect(await store.getMessages('p', { afterSeq: Number.POSITIVE_INFINITY })).toEqual([])
    expect(await store.getMessages('p', { afterSeq: Number.NEGATIVE_INFINITY, limit: 1 })).toEqual(
      messages.slice(0, 1),
    )
    const big = message('p', Number.MAX_SAFE_INTEGER, { id: 'max' })
    await store.saveMessage('p', big)
    expect(await store.getMessages('p', { afterSeq: 11 })).toEqual([big])
  })
})

describe('PostgresPersister migrations and pools', () => {
  it('ten persisters starting at once on a new schema migrate it exactly once', async () => {
    const schema = freshSchema()
    const persisters = Array.from(
      { length: 10 },
      () => new PostgresPersister({ connectionString: TEST_DATABASE_URL, schema, poolSize: 1 }),
    )
    try {
      await Promise.all(persisters.map((p, index) => p.saveSession(session(`s${index}`))))
      expect(
        await rows(schema, 'select version from $schema.agentx_schema_migrations order by version'),
      ).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }])
      expect((await persisters[0]!.getAllSessions()).length).toBe(10)
    } finally {
      await Promise.all(persisters.map((p) => p.close()))
      await dropSchema(admin, schema)
    }
  })

  it('refuses a schema migrated by a newer version of the package', async () => {
    const first = persister()
    await first.getAllSessions()
    await admin.query(
      `insert into "${first.schema}".agentx_schema_migrations (version, name) values (99, 'future')`,
    )
    const second = new PostgresPersister({ connectionString: TEST_DATABASE_URL, schema: first.schema })
    const error = await rejection(second.getAllSessions())
    expect(error.retryable).toBe(false)
    expect(error.message).toMatch(/schema version 99.*Upgrade @agentx\/persister-postgres/)
    await second.close()
  })

  it('explains a sessions table that is not AgentX’s instead of writing into it', async () => {
    const schema = freshSchema()
    await admin.query(`create schema "${schema}"; create table "${schema}".sessions (id serial primary key)`)
    const store = new PostgresPersister({ connectionString: TEST_DATABASE_URL, schema })
    try {
      const error = await rejection(store.getAllSessions())
      expect(error.message).toMatch(/already exists.*options\.schema/)
      expect(
        await rows(schema, 'select count(*)::int as count from $schema.agentx_schema_migrations').catch(
          () => [],
        ),
      ).toEqual([])
    } finally {
      await store.close()
      await dropSchema(admin, schema)
    }
  })

  it('leaves a pool it was given open on close, and ends a pool it created', async () => {
    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 })
    pool.on('error', () => undefined)
    const shared = persister({ pool })
    await shared.saveSession(session('s'))
    await shared.close()
    expect((await pool.query('select 1 as one')).rows).toEqual([{ one: 1 }])
    expect((await rejection(shared.getSession('s'))).code).toBe('CLOSED')
    await pool.end()

    const applicationName = `agentx-own-${process.pid}`
    const owning = persister({ applicationName })
    await owning.saveSession(session('s'))
    const count = async (): Promise<number> =>
      (
        await admin.query('select count(*)::int as count from pg_stat_activity where application_name = $1', [
          applicationName,
        ])
      ).rows[0].count
    expect(await count()).toBeGreaterThan(0)
    await owning.close()
    await expect.poll(count).toBe(0)
  })
})
