// agent.getSessions({ limit, offset, state, metadata, includeChildren }): filters reach the store,
// and what comes back is exactly the matching page.
import { describe, expect, it } from 'vitest'
import type { ListSessionsQuery, SessionData } from '../contracts/agent-persister.js'
import { ValidationError } from '../errors/validation-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { createAgent } from './create-agent.js'

class QueryRecorder extends InMemoryPersister {
  readonly queries: ListSessionsQuery[] = []
  override async listSessions(query: ListSessionsQuery = {}): Promise<SessionData[]> {
    this.queries.push(structuredClone(query))
    return super.listSessions(query)
  }
}

function stored(id: string, minute: number, fields: Partial<SessionData> = {}): SessionData {
  const at = `2026-01-01T00:${String(minute).padStart(2, '0')}:00.000Z`
  return {
    id,
    summary: id,
    createdAt: at,
    lastActivity: at,
    state: 'idle',
    tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    ...fields,
  }
}

async function setup() {
  const persister = new QueryRecorder()
  for (const data of [
    stored('a', 1, { state: 'idle', metadata: { topic: 'billing', priority: 1 }, userId: 'u1' }),
    stored('b', 2, { state: 'error', metadata: { topic: 'billing', priority: '1' }, userId: 'u1' }),
    stored('c', 3, { state: 'completed', metadata: { topic: 'tech', vip: true }, userId: 'u2' }),
    stored('d', 4, { state: 'waiting_input', userId: 'u1' }),
    stored('child', 5, { state: 'idle', parentSessionId: 'a', parentToolUseId: 't1', userId: 'u1' }),
  ]) {
    await persister.saveSession(data)
  }
  const agent = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
  return { persister, agent }
}

const ids = (sessions: Array<{ id: string }>) => sessions.map((s) => s.id)

describe('agent.getSessions() filters', () => {
  it('by state (one or several), newest activity first', async () => {
    const { agent } = await setup()
    expect(ids(await agent.getSessions({ state: 'error' }))).toEqual(['b'])
    expect(ids(await agent.getSessions({ state: ['idle', 'waiting_input'] }))).toEqual(['d', 'a'])
    expect(ids(await agent.getSessions({ state: [] }))).toEqual([])
  })

  it('by metadata equality on one key, with the JSON type part of the match', async () => {
    const { agent } = await setup()
    expect(ids(await agent.getSessions({ metadata: { key: 'topic', value: 'billing' } }))).toEqual(['b', 'a'])
    expect(ids(await agent.getSessions({ metadata: { key: 'priority', value: 1 } }))).toEqual(['a'])
    expect(ids(await agent.getSessions({ metadata: { key: 'priority', value: '1' } }))).toEqual(['b'])
    expect(ids(await agent.getSessions({ metadata: { key: 'vip', value: true } }))).toEqual(['c'])
    expect(ids(await agent.getSessions({ metadata: { key: 'missing', value: 'x' } }))).toEqual([])
  })

  it('leaves child sessions out unless includeChildren', async () => {
    const { agent } = await setup()
    expect(ids(await agent.getSessions())).toEqual(['d', 'c', 'b', 'a'])
    expect(ids(await agent.getSessions({ includeChildren: true }))).toEqual(['child', 'd', 'c', 'b', 'a'])
    const child = (await agent.getSessions({ includeChildren: true }))[0]!
    expect(child.id).toBe('child')
  })

  it('filters combine with each other, with paging and with the scope', async () => {
    const { persister, agent } = await setup()
    const u1 = agent.withScope({ userId: 'u1' })
    expect(ids(await u1.getSessions({ state: ['idle', 'error', 'completed'] }))).toEqual(['b', 'a'])
    expect(ids(await u1.getSessions({ state: ['idle', 'error'], limit: 1, offset: 1 }))).toEqual(['a'])
    expect(
      ids(
        await u1.getSessions({
          includeChildren: true,
          state: 'idle',
          metadata: { key: 'topic', value: 'billing' },
        }),
      ),
    ).toEqual(['a'])
    expect(persister.queries.at(-1)).toEqual({
      userId: 'u1',
      limit: 50,
      offset: 0,
      state: 'idle',
      metadata: { key: 'topic', value: 'billing' },
      includeChildren: true,
    })
  })

  it('passes the filters to the store rather than filtering a page in memory', async () => {
    const { persister, agent } = await setup()
    await agent.getSessions({ limit: 2, offset: 1, state: ['error'], metadata: { key: 'k', value: false } })
    expect(persister.queries.at(-1)).toEqual({
      limit: 2,
      offset: 1,
      state: ['error'],
      metadata: { key: 'k', value: false },
    })
  })

  it('rejects malformed options with ValidationError before reaching the store', async () => {
    const { persister, agent } = await setup()
    const before = persister.queries.length
    for (const options of [
      'all',
      { limit: -1 },
      { limit: 1.5 },
      { offset: '2' },
      { state: 'sleeping' },
      { state: ['idle', 'nope'] },
      { metadata: { key: 'k' } },
      { metadata: { key: 'k', value: {} } },
      { metadata: { key: 'k', value: Number.NaN } },
      { metadata: { key: 1, value: 'x' } },
      { metadata: { key: 'k', value: 'x', op: 'like' } },
      { includeChildren: 'yes' },
      { userId: 'u2' },
    ]) {
      await expect(agent.getSessions(options as never)).rejects.toBeInstanceOf(ValidationError)
    }
    expect(persister.queries.length).toBe(before)
  })
})
