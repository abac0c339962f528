// The session operations of DESIGN §10.2 and §10.7 (fork, update, caller-chosen ids, scoped views,
// the session cache, listing filters) through an agent on a SQLite file, each checked in the file
// and, where state is involved, after a restart (a new persister and agent on the same file).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Agent, createAgent, isAgentError, type Session } from '@agentx/core'
import { ScriptedAdapter, textTurn, toolCallTurn } from '@agentx/core/testing'
import BetterSqlite3 from 'better-sqlite3'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { createSqlitePersister, type SqlitePersister } from './index.js'

const folder = mkdtempSync(join(tmpdir(), 'agentx-sqlite-operations-'))
afterAll(() => rmSync(folder, { recursive: true, force: true }))
const open: Array<{ close(): unknown }> = []
afterEach(async () => {
  vi.restoreAllMocks()
  for (const handle of open.splice(0).reverse()) await handle.close()
})

let files = 0
const newFile = () => join(folder, `operations-${files++}.db`)

function persisterAt(filename: string): SqlitePersister {
  const persister = createSqlitePersister({ filename })
  open.push(persister)
  return persister
}

function agentOn(persister: SqlitePersister, turns: string[] = [], config: object = {}): Agent {
  const agent = createAgent(config, {
    adapter: new ScriptedAdapter(turns.map((text) => textTurn(text))),
    persister,
  })
  open.push(agent)
  return agent
}

/** A second process: its own connection to the same file, its own agent. */
function restart(
  filename: string,
  turns: string[] = [],
  config: object = {},
): { persister: SqlitePersister; agent: Agent } {
  const persister = persisterAt(filename)
  return { persister, agent: agentOn(persister, turns, config) }
}

function rows(filename: string, statement: string, ...parameters: unknown[]): Array<Record<string, unknown>> {
  const database = new BetterSqlite3(filename, { readonly: true })
  try {
    return database.prepare(statement).all(...parameters) as Array<Record<string, unknown>>
  } finally {
    database.close()
  }
}

/**
 * Counts write transactions: `BEGIN IMMEDIATE` (the persister's write transactions; reads use a
 * plain `BEGIN`), and write statements run outside a transaction (each its own autocommit).
 */
function countTransactions(): { begins: number; autocommits: string[] } {
  const probe = new BetterSqlite3(':memory:')
  const statementPrototype = Object.getPrototypeOf(probe.prepare('select 1')) as {
    run: (...args: unknown[]) => unknown
  }
  probe.close()
  const counts = { begins: 0, autocommits: [] as string[] }
  let inTransaction = false
  const run = statementPrototype.run
  vi.spyOn(statementPrototype, 'run').mockImplementation(function (
    this: { source: string },
    ...args: unknown[]
  ) {
    const source = this.source.trim().toLowerCase()
    if (source.startsWith('begin')) {
      if (source === 'begin immediate') counts.begins++
      inTransaction = true
    } else if (source.startsWith('commit') || source.startsWith('rollback')) inTransaction = false
    else if (!inTransaction && /^(insert|update|delete)/.test(source))
      counts.autocommits.push(source.slice(0, 40))
    return run.apply(this, args)
  })
  return counts
}

const codeOf = (error: unknown) => (isAgentError(error) ? error.code : String(error))

async function conversation(agent: Agent, sends: number): Promise<Session> {
  const session = await agent.createSession({ summary: 'Source', metadata: { topic: 'travel' } })
  for (let i = 0; i < sends; i++) await session.send(`question ${i}`)
  await session.flush()
  return session
}

describe('session operations on SQLite', () => {
  it('fork: the copies, forkedFrom and the fork’s settings are in the file and survive a restart', async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    const agent = agentOn(persister, ['one', 'two', 'three'])
    const source = await conversation(agent, 3)
    const fork = await source.fork({ throughSeq: 3, summary: 'Branch' })

    const stored = rows(
      filename,
      'select session_id, seq, id from messages where session_id = ? order by seq',
      fork.id,
    )
    expect(stored.map((row) => row.seq)).toEqual([0, 1, 2, 3])
    const sourceIds = rows(filename, 'select id from messages where session_id = ?', source.id).map(
      (row) => row.id,
    )
    expect(stored.some((row) => sourceIds.includes(row.id))).toBe(false)
    await agent.close()

    const { agent: later } = restart(filename)
    const reopened = (await later.getSession(fork.id))!
    expect(reopened.summary).toBe('Branch')
    expect(reopened.state).toBe('idle')
    const messages = await reopened.getMessages()
    expect(messages.map((m) => m.content)).toEqual([
      'question 0',
      [{ type: 'text', text: 'one' }],
      'question 1',
      [{ type: 'text', text: 'two' }],
    ])
    const data = await (await restart(filename).persister).getSession(fork.id)
    expect(data!.forkedFrom).toEqual({ sessionId: source.id, seq: 3 })
    expect(data!.metadata).toEqual({ topic: 'travel' })
    expect(data!.providerSessionId).toBeUndefined()
  })

  it('fork: the copies of a 200-message session are written in one transaction (plus the session row and the lease of the source), not 200', async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    const agent = agentOn(
      persister,
      Array.from({ length: 100 }, (_, i) => `reply ${i}`),
    )
    const source = await conversation(agent, 100)

    const counts = countTransactions()
    const fork = await source.fork()
    expect(counts.begins).toBe(1)
    // The source is read under its lease (claimed, then let go), then the fork's row is inserted.
    expect(counts.autocommits).toHaveLength(2)
    expect(counts.autocommits[0]).toMatch(/^update sessions set lease_owner = null/)
    expect(counts.autocommits[1]).toMatch(/^insert into "sessions"/)
    expect(rows(filename, 'select count(*) as n from messages where session_id = ?', fork.id)).toEqual([
      { n: 200 },
    ])
  })

  it('fork: a session waiting for approval forks into a waiting session that a restarted agent can answer', async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    const transfer = {
      name: 'transfer',
      description: 'Moves money',
      inputSchema: { type: 'object' },
      needsApproval: true,
      execute: () => 'sent',
    }
    const agent = createAgent(
      { tools: [transfer] },
      {
        adapter: new ScriptedAdapter([toolCallTurn([{ id: 't1', name: 'transfer', input: { amount: 5 } }])]),
        persister,
      },
    )
    open.push(agent)
    const source = await agent.createSession()
    await source.send('pay')
    const fork = await source.fork()
    await agent.close()

    const later = createAgent(
      { tools: [transfer] },
      { adapter: new ScriptedAdapter([textTurn('Sent.')]), persister: persisterAt(filename) },
    )
    open.push(later)
    const reopened = (await later.getSession(fork.id))!
    expect(reopened.state).toBe('waiting_input')
    expect((await reopened.getPending()).map((call) => call.toolUseId)).toEqual(['t1'])
    await reopened.send([{ type: 'tool_approval', toolUseId: 't1', approved: true }])
    await reopened.flush()
    expect(rows(filename, 'select type from messages where session_id = ? order by seq', fork.id)).toEqual([
      { type: 'user' },
      { type: 'agent' },
      { type: 'tool' },
      { type: 'agent' },
    ])
    expect(rows(filename, 'select count(*) as n from messages where session_id = ?', source.id)).toEqual([
      { n: 2 },
    ])
  })

  it('update: summary, metadata, model and system prompt are in the file after a restart', async () => {
    const filename = newFile()
    const agent = agentOn(persisterAt(filename))
    const session = await agent.createSession({ summary: 'Old', metadata: { a: 1 } })
    await session.update({ summary: 'New', metadata: { b: 'two' }, model: 'model-b', systemPrompt: 'Short.' })
    await agent.close()

    const data = await restart(filename).persister.getSession(session.id)
    expect(data).toMatchObject({
      summary: 'New',
      metadata: { b: 'two' },
      model: 'model-b',
      systemPrompt: 'Short.',
    })
    expect(rows(filename, 'select summary, model from sessions where id = ?', session.id)).toEqual([
      { summary: 'New', model: 'model-b' },
    ])
  })

  it('createSession({ id }): stored under that id; the same id from another process rejects with SESSION_EXISTS and changes nothing', async () => {
    const filename = newFile()
    const first = agentOn(persisterAt(filename), ['hi'])
    const session = await first.createSession({ id: 'chat-42', summary: 'First' })
    await session.send('hello')
    await session.flush()
    const before = rows(filename, 'select * from sessions where id = ?', 'chat-42')

    const { agent: second } = restart(filename)
    const error = await second
      .createSession({ id: 'chat-42', summary: 'Second' })
      .catch((caught: unknown) => caught)
    expect(codeOf(error)).toBe('SESSION_EXISTS')
    expect(rows(filename, 'select * from sessions where id = ?', 'chat-42')).toEqual(before)
    expect(rows(filename, 'select count(*) as n from messages where session_id = ?', 'chat-42')).toEqual([
      { n: 2 },
    ])
    expect((await second.getSession('chat-42'))!.summary).toBe('First')
  })

  it('withScope: each view lists and reads only its user’s sessions from the file, also after a restart', async () => {
    const filename = newFile()
    const agent = agentOn(persisterAt(filename), [], { appName: 'shop' })
    const alice = await agent.withScope({ userId: 'alice' }).createSession({ summary: 'a' })
    const bob = await agent.withScope({ userId: 'bob' }).createSession({ summary: 'b' })
    expect(rows(filename, 'select id, user_id, app_name from sessions order by user_id')).toEqual([
      { id: alice.id, user_id: 'alice', app_name: 'shop' },
      { id: bob.id, user_id: 'bob', app_name: 'shop' },
    ])
    await agent.close()

    const { agent: later } = restart(filename, [], { appName: 'shop' })
    const aliceView = later.withScope({ userId: 'alice' })
    expect((await aliceView.getSessions()).map((s) => s.id)).toEqual([alice.id])
    expect(await aliceView.getSession(bob.id)).toBeUndefined()
    await aliceView.deleteSession(bob.id)
    expect(rows(filename, 'select count(*) as n from sessions')).toEqual([{ n: 2 }])
  })

  it('sessionCache: sessions that left memory reload from the file, and a held one keeps sending in order', async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    const agent = agentOn(
      persister,
      Array.from({ length: 60 }, (_, i) => `reply ${i}`),
      { sessionCache: { max: 5 } },
    )
    const held: Session[] = []
    for (let i = 0; i < 50; i++) held.push(await agent.chat(`hello ${i}`))
    const stats = (agent as unknown as { sessionCacheStats(): { kept: number } }).sessionCacheStats()
    expect(stats.kept).toBe(5)
    const oldest = held[0]!
    expect(await agent.getSession(oldest.id)).toBe(oldest)
    await oldest.send('again')
    await oldest.flush()
    expect(rows(filename, 'select seq from messages where session_id = ? order by seq', oldest.id)).toEqual([
      { seq: 0 },
      { seq: 1 },
      { seq: 2 },
      { seq: 3 },
    ])
    expect((await oldest.getMessages()).map((m) => m.seq)).toEqual([0, 1, 2, 3])
  })

  it('getSessions filters: state, metadata and children are answered by the store, paged', async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    const agent = agentOn(persister, ['one'])
    const idle = await agent.createSession({ metadata: { topic: 'billing', priority: 1 } })
    await idle.send('hi')
    const created = await agent.createSession({ metadata: { topic: 'billing', priority: '1' } })
    const done = await agent.createSession({ metadata: { topic: 'tech' } })
    await done.complete()
    await persister.saveSession({
      id: 'child',
      summary: '',
      createdAt: '2026-01-01T00:00:00.000Z',
      lastActivity: '2999-01-01T00:00:00.000Z',
      state: 'idle',
      tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      parentSessionId: idle.id,
      parentToolUseId: 't1',
    })
    const ids = async (options: object) => (await agent.getSessions(options)).map((s) => s.id)

    expect(await ids({ state: 'idle' })).toEqual([idle.id])
    expect(await ids({ state: ['created', 'completed'] })).toEqual([done.id, created.id])
    expect(await ids({ metadata: { key: 'topic', value: 'billing' } })).toEqual([created.id, idle.id])
    expect(await ids({ metadata: { key: 'priority', value: 1 } })).toEqual([idle.id])
    expect(await ids({ metadata: { key: 'priority', value: '1' } })).toEqual([created.id])
    expect(await ids({ includeChildren: true, state: 'idle' })).toEqual(['child', idle.id])
    expect(await ids({ includeChildren: true, limit: 2, offset: 1 })).toEqual([done.id, created.id])
  })

  it('getSessions filters: a state filter reads the top-level state index, in order, without a sort', async () => {
    const filename = newFile()
    const persister = persisterAt(filename)
    const agent = agentOn(persister)
    await agent.createSession()
    const statements: string[] = []
    const prepare = BetterSqlite3.prototype.prepare
    vi.spyOn(BetterSqlite3.prototype, 'prepare').mockImplementation(function (
      this: BetterSqlite3.Database,
      text,
    ) {
      statements.push(text)
      return prepare.call(this, text)
    } as typeof prepare)
    await agent.getSessions({ state: 'idle', limit: 10 })
    const listing = statements.find((text) => text.startsWith('select') && text.includes('"state" in'))!
    expect(listing).toBeDefined()
    vi.restoreAllMocks()
    const database = new BetterSqlite3(filename, { readonly: true })
    try {
      const plan = (
        database.prepare(`explain query plan ${listing}`).all('idle', 10, 0) as Array<{ detail: string }>
      )
        .map((row) => row.detail)
        .join(' | ')
      expect(plan).toMatch(/USING INDEX sessions_top_state_activity/)
      expect(plan).not.toMatch(/TEMP B-TREE/)
    } finally {
      database.close()
    }
  })
})
