// The session operations of DESIGN §10.2 and §10.7 (fork, update, caller-chosen ids, scoped views,
// the session cache, listing filters) through an agent on PostgreSQL, each checked in the database
// and, where state is involved, from a second persister and agent on the same schema (a restart,
// or another process).
import { type Agent, createAgent, isAgentError, type Session } from '@agentx/core'
import { ScriptedAdapter, textTurn } from '@agentx/core/testing'
import pg from 'pg'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { adminPool, freshSchema, TEST_DATABASE_URL } from '../test/test-database.js'
import { createPostgresPersister, type PostgresPersister } from './index.js'

const admin = adminPool()
const open: Array<{ close(): Promise<unknown> }> = []
afterAll(async () => {
  for (const handle of open.reverse()) await handle.close().catch(() => undefined)
  await admin.end()
})

function persisterOn(schema: string): PostgresPersister {
  const persister = createPostgresPersister({ connectionString: TEST_DATABASE_URL, schema, poolSize: 3 })
  open.push(persister)
  return persister
}

function agentOn(persister: PostgresPersister, turns: string[] = [], config: object = {}): Agent {
  const agent = createAgent(config, {
    adapter: new ScriptedAdapter(turns.map((text) => textTurn(text))),
    persister,
  })
  open.push(agent)
  return agent
}

async function query(schema: string, statement: string, parameters: unknown[] = []): Promise<unknown[]> {
  const { rows } = await admin.query(statement.replaceAll('$schema', `"${schema}"`), parameters)
  return rows
}

async function conversation(agent: Agent, sends: number): Promise<Session> {
  const session = await agent.createSession({ summary: 'Source', metadata: { topic: 'travel' } })
  for (let i = 0; i < sends; i++) await session.send(`question ${i}`)
  await session.flush()
  return session
}

const codeOf = (error: unknown) => (isAgentError(error) ? error.code : String(error))

describe('session operations on PostgreSQL', () => {
  it('fork: copies and forkedFrom are stored; another agent on the database reads the fork', async () => {
    const schema = freshSchema()
    const agent = agentOn(persisterOn(schema), ['one', 'two'])
    const source = await conversation(agent, 2)
    const fork = await source.fork({ throughSeq: 1, metadata: { branch: 'b' } })

    expect(
      await query(schema, 'select seq::int, type from $schema.messages where session_id = $1 order by seq', [
        fork.id,
      ]),
    ).toEqual([
      { seq: 0, type: 'user' },
      { seq: 1, type: 'agent' },
    ])
    const other = agentOn(persisterOn(schema))
    const reopened = (await other.getSession(fork.id))!
    expect((await reopened.getMessages()).map((m) => m.content)).toEqual([
      'question 0',
      [{ type: 'text', text: 'one' }],
    ])
    const data = await persisterOn(schema).getSession(fork.id)
    expect(data!.forkedFrom).toEqual({ sessionId: source.id, seq: 1 })
    expect(data!.metadata).toEqual({ branch: 'b' })
    expect(data!.providerSessionId).toBeUndefined()
  })

  it('fork: all copied messages are written by one transaction (one xmin), the session row by one more', async () => {
    const schema = freshSchema()
    const agent = agentOn(
      persisterOn(schema),
      Array.from({ length: 100 }, (_, i) => `reply ${i}`),
    )
    const source = await conversation(agent, 100)
    const fork = await source.fork()
    expect(
      await query(
        schema,
        'select count(*)::int as n, count(distinct xmin::text)::int as transactions from $schema.messages where session_id = $1',
        [fork.id],
      ),
    ).toEqual([{ n: 200, transactions: 1 }])
    // The session row was written first, by a transaction of its own (its messages need it).
    expect(
      await query(
        schema,
        `select count(distinct xmin::text)::int as transactions from (
           select xmin from $schema.sessions where id = $1 union all select xmin from $schema.messages where session_id = $1) as rows`,
        [fork.id],
      ),
    ).toEqual([{ transactions: 2 }])
  })

  it('update: the change is in the database and another agent reads it', async () => {
    const schema = freshSchema()
    const agent = agentOn(persisterOn(schema))
    const session = await agent.createSession({ summary: 'Old', metadata: { a: 1 } })
    await session.update({ summary: 'New', metadata: { b: 'two' }, model: 'model-b', systemPrompt: 'Short.' })
    expect(
      await query(
        schema,
        'select summary, model, system_prompt, metadata from $schema.sessions where id = $1',
        [session.id],
      ),
    ).toEqual([{ summary: 'New', model: 'model-b', system_prompt: 'Short.', metadata: { b: 'two' } }])
    const other = agentOn(persisterOn(schema))
    expect((await other.getSession(session.id))!.summary).toBe('New')
  })

  it('createSession({ id }): the same id from another process rejects with SESSION_EXISTS and changes nothing', async () => {
    const schema = freshSchema()
    const first = agentOn(persisterOn(schema), ['hi'])
    const session = await first.createSession({ id: 'chat-42', summary: 'First' })
    await session.send('hello')
    await session.flush()
    const before = await query(schema, 'select * from $schema.sessions where id = $1', ['chat-42'])

    const second = agentOn(persisterOn(schema))
    const error = await second
      .createSession({ id: 'chat-42', summary: 'Second' })
      .catch((caught: unknown) => caught)
    expect(codeOf(error)).toBe('SESSION_EXISTS')
    expect(await query(schema, 'select * from $schema.sessions where id = $1', ['chat-42'])).toEqual(before)
    expect(
      await query(schema, 'select count(*)::int as n from $schema.messages where session_id = $1', [
        'chat-42',
      ]),
    ).toEqual([{ n: 2 }])
  })

  it('withScope and filters: each view lists only its user’s sessions, by state, metadata and children', async () => {
    const schema = freshSchema()
    const persister = persisterOn(schema)
    const agent = agentOn(persister, ['one'], { appName: 'shop' })
    const alice = agent.withScope({ userId: 'alice' })
    const bob = agent.withScope({ userId: 'bob' })
    const idle = await alice.createSession({ metadata: { topic: 'billing', priority: 1 } })
    await idle.send('hi')
    await idle.flush()
    const created = await alice.createSession({ metadata: { topic: 'billing', priority: '1' } })
    const bobs = await bob.createSession({ metadata: { topic: 'billing' } })
    await persister.saveSession({
      id: 'child',
      summary: '',
      createdAt: '2026-01-01T00:00:00.000Z',
      lastActivity: '2999-01-01T00:00:00.000Z',
      state: 'idle',
      tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      userId: 'alice',
      appName: 'shop',
      parentSessionId: idle.id,
      parentToolUseId: 't1',
    })
    const later = agentOn(persisterOn(schema), [], { appName: 'shop' }).withScope({ userId: 'alice' })
    const ids = async (options: object) => (await later.getSessions(options)).map((s) => s.id)

    expect(await ids({})).toEqual([created.id, idle.id])
    expect(await ids({ state: 'idle' })).toEqual([idle.id])
    expect(await ids({ state: ['created', 'completed'] })).toEqual([created.id])
    expect(await ids({ metadata: { key: 'topic', value: 'billing' } })).toEqual([created.id, idle.id])
    expect(await ids({ metadata: { key: 'priority', value: 1 } })).toEqual([idle.id])
    expect(await ids({ metadata: { key: 'priority', value: '1' } })).toEqual([created.id])
    expect(await ids({ includeChildren: true, state: 'idle' })).toEqual(['child', idle.id])
    expect(await ids({ includeChildren: true, limit: 1, offset: 1 })).toEqual([created.id])
    expect(await later.getSession(bobs.id)).toBeUndefined()
  })

  it('sessionCache: a session that left memory reloads from the database and sends on in order', async () => {
    const schema = freshSchema()
    const agent = agentOn(
      persisterOn(schema),
      Array.from({ length: 30 }, (_, i) => `reply ${i}`),
      {
        sessionCache: { max: 3 },
      },
    )
    const held: Session[] = []
    for (let i = 0; i < 20; i++) held.push(await agent.chat(`hello ${i}`))
    const stats = (agent as unknown as { sessionCacheStats(): { kept: number } }).sessionCacheStats()
    expect(stats.kept).toBe(3)
    const oldest = held[0]!
    expect(await agent.getSession(oldest.id)).toBe(oldest)
    await oldest.send('again')
    await oldest.flush()
    expect(
      await query(schema, 'select seq::int from $schema.messages where session_id = $1 order by seq', [
        oldest.id,
      ]),
    ).toEqual([{ seq: 0 }, { seq: 1 }, { seq: 2 }, { seq: 3 }])
  })

  it('getSessions filters: the listing statement with a state filter reads the top-level (state, last_activity) index in order, without a sort', async () => {
    const schema = freshSchema()
    const agent = agentOn(persisterOn(schema))
    await agent.createSession()
    const statements: Array<{ text: string; values: unknown[] }> = []
    const query = pg.Client.prototype.query
    const spy = vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (
      this: pg.Client,
      ...args: unknown[]
    ) {
      if (typeof args[0] === 'string' && Array.isArray(args[1]))
        statements.push({ text: args[0], values: args[1] })
      return (query as (...a: unknown[]) => unknown).apply(this, args)
    } as typeof query)
    await agent.getSessions({ state: 'idle', limit: 10 })
    spy.mockRestore()
    const listing = statements.find(
      ({ text }) => text.includes('order by last_activity desc') && text.includes('state ='),
    )
    expect(listing).toBeDefined()
    const client = await admin.connect()
    try {
      await client.query('begin')
      await client.query('set local enable_seqscan = off')
      const { rows } = await client.query(`explain ${listing!.text}`, listing!.values)
      await client.query('rollback')
      const plan = rows.map((row: { 'QUERY PLAN': string }) => row['QUERY PLAN']).join('\n')
      expect(plan).toMatch(/Index Scan( Backward)? using sessions_top_state_activity/)
      expect(plan).not.toMatch(/Sort/)
    } finally {
      client.release()
    }
  })
})
