import { describe, expect, it } from 'vitest'
import type { SessionData } from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import { InMemoryPersister } from './in-memory-persister.js'

const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 }

function session(id: string, fields: Partial<SessionData> = {}): SessionData {
  return {
    id,
    summary: '',
    createdAt: '2026-01-01T00:00:00.000Z',
    lastActivity: '2026-01-01T00:00:00.000Z',
    state: 'idle',
    tokenUsage: usage,
    ...fields,
  }
}

function message(sessionId: string, seq: number, fields: Partial<AnyMessage> = {}): AnyMessage {
  return {
    id: `${sessionId}-m${seq}`,
    sessionId,
    seq,
    type: 'user',
    content: `message ${seq}`,
    timestamp: '2026-01-01T00:00:00.000Z',
    ...fields,
  }
}

function fakeClock(start = 1_000_000): { now: () => number; advance(ms: number): void } {
  let time = start
  return {
    now: () => time,
    advance(ms) {
      time += ms
    },
  }
}

describe('InMemoryPersister leases', () => {
  it('lets exactly one owner hold a lease until it expires on the clock', async () => {
    const clock = fakeClock()
    const persister = new InMemoryPersister({ now: clock.now })
    await persister.saveSession(session('s'))
    expect(await persister.claimSession('s', 'a', 1000)).toBe(true)
    expect(await persister.claimSession('s', 'b', 1000)).toBe(false)
    clock.advance(999)
    expect(await persister.claimSession('s', 'b', 1000)).toBe(false)
    clock.advance(1)
    expect(await persister.claimSession('s', 'b', 1000)).toBe(true)
    expect(await persister.claimSession('s', 'a', 1000)).toBe(false)
  })

  it('renews the lease of an owner that claims again', async () => {
    const clock = fakeClock()
    const persister = new InMemoryPersister({ now: clock.now })
    await persister.saveSession(session('s'))
    await persister.claimSession('s', 'a', 1000)
    clock.advance(800)
    expect(await persister.claimSession('s', 'a', 1000)).toBe(true)
    clock.advance(800)
    expect(await persister.claimSession('s', 'b', 1000)).toBe(false)
  })

  it('releases only for the owner; saveSession keeps the lease', async () => {
    const persister = new InMemoryPersister()
    await persister.saveSession(session('s'))
    await persister.claimSession('s', 'a', 60_000)
    await persister.releaseSession('s', 'b')
    await persister.saveSession(session('s', { summary: 'changed' }))
    expect(await persister.claimSession('s', 'b', 60_000)).toBe(false)
    await persister.releaseSession('s', 'a')
    expect(await persister.claimSession('s', 'b', 60_000)).toBe(true)
    await expect(persister.releaseSession('unknown', 'a')).resolves.toBeUndefined()
  })

  it('rejects unknown sessions with NOT_FOUND and bad arguments with VALIDATION', async () => {
    const persister = new InMemoryPersister()
    await expect(persister.claimSession('nope', 'a', 10)).rejects.toMatchObject({ code: 'NOT_FOUND' })
    await persister.saveSession(session('s'))
    for (const ttl of [0, -1, 1.5, Number.NaN]) {
      await expect(persister.claimSession('s', 'a', ttl)).rejects.toMatchObject({ code: 'VALIDATION' })
    }
    await expect(persister.claimSession('s', '', 10)).rejects.toMatchObject({ code: 'VALIDATION' })
  })

  it('markInterrupted rewrites only active sessions of the scope without a live lease', async () => {
    const clock = fakeClock()
    const persister = new InMemoryPersister({ now: clock.now })
    await persister.saveSession(session('live', { state: 'active', userId: 'u' }))
    await persister.saveSession(session('dead', { state: 'active', userId: 'u', summary: 'kept' }))
    await persister.saveSession(session('expired', { state: 'active', userId: 'u' }))
    await persister.saveSession(session('other-user', { state: 'active', userId: 'v' }))
    await persister.saveSession(session('idle', { userId: 'u' }))
    await persister.claimSession('live', 'a', 10_000)
    await persister.claimSession('expired', 'a', 100)
    clock.advance(100)
    expect(await persister.markInterrupted({ userId: 'u' })).toBe(2)
    const states = Object.fromEntries((await persister.getAllSessions()).map((data) => [data.id, data.state]))
    expect(states).toEqual({
      live: 'active',
      dead: 'interrupted',
      expired: 'interrupted',
      'other-user': 'active',
      idle: 'idle',
    })
    expect(await persister.getSession('dead')).toEqual(
      session('dead', { state: 'interrupted', userId: 'u', summary: 'kept' }),
    )
  })
})

describe('InMemoryPersister v2 queries', () => {
  it('pages backwards with beforeSeq: the last `limit` messages before it, in seq order', async () => {
    const persister = new InMemoryPersister()
    await persister.saveSession(session('s'))
    for (const seq of [4, 0, 2, 1, 3, 5]) await persister.saveMessage('s', message('s', seq))
    const seqs = async (query: object) => (await persister.getMessages('s', query)).map((m) => m.seq)
    expect(await seqs({ beforeSeq: 4, limit: 2 })).toEqual([2, 3])
    expect(await seqs({ beforeSeq: 4 })).toEqual([0, 1, 2, 3])
    expect(await seqs({ beforeSeq: 1, limit: 5 })).toEqual([0])
    expect(await seqs({ beforeSeq: 0, limit: 5 })).toEqual([])
    expect(await seqs({ afterSeq: 1, beforeSeq: 5, limit: 2 })).toEqual([3, 4])
    expect(await seqs({ afterSeq: 3, beforeSeq: 2 })).toEqual([])
    expect(await seqs({ beforeSeq: 2.5, limit: 1 })).toEqual([2])
    expect(await seqs({ afterSeq: 2.5, limit: 1 })).toEqual([3])
    await expect(persister.getMessages('s', { beforeSeq: Number.NaN })).rejects.toMatchObject({
      code: 'VALIDATION',
    })
  })

  it('filters listings by states, one metadata key, and leaves children out unless asked', async () => {
    const persister = new InMemoryPersister()
    await persister.saveSession(session('a', { state: 'idle', metadata: { tag: 'x', n: 1 } }))
    await persister.saveSession(session('b', { state: 'error', metadata: { tag: 'y', n: '1' } }))
    await persister.saveSession(
      session('c', { state: 'active', parentSessionId: 'a', metadata: { tag: 'x' } }),
    )
    const ids = async (query: object) => (await persister.listSessions(query)).map((data) => data.id)
    expect(await ids({})).toEqual(['b', 'a'])
    expect(await ids({ includeChildren: true })).toEqual(['c', 'b', 'a'])
    expect(await ids({ state: ['idle', 'error'] })).toEqual(['b', 'a'])
    expect(await ids({ state: [] })).toEqual([])
    expect(await ids({ metadata: { key: 'tag', value: 'x' }, includeChildren: true })).toEqual(['c', 'a'])
    expect(await ids({ metadata: { key: 'n', value: 1 } })).toEqual(['a'])
    expect(await ids({ metadata: { key: 'n', value: '1' } })).toEqual(['b'])
    expect(await ids({ metadata: { key: 'toString', value: 'x' } })).toEqual([])
    await expect(persister.listSessions({ state: ['nope' as 'idle'] })).rejects.toMatchObject({
      code: 'VALIDATION',
    })
  })

  it('deleteSession and deleteSessions cascade to messages and descendants and count sessions', async () => {
    const persister = new InMemoryPersister()
    await persister.saveSession(session('old', { lastActivity: '2025-01-01T00:00:00.000Z' }))
    await persister.saveSession(
      session('child', { parentSessionId: 'old', lastActivity: '2026-06-01T00:00:00.000Z' }),
    )
    await persister.saveSession(session('grandchild', { parentSessionId: 'child' }))
    await persister.saveSession(session('edge', { lastActivity: '2025-06-01T00:00:00.000Z' }))
    await persister.saveSession(
      session('scoped-out', { lastActivity: '2025-01-01T00:00:00.000Z', userId: 'v' }),
    )
    await persister.saveMessage('grandchild', message('grandchild', 0))
    const removed = await persister.deleteSessions({ lastActivityBefore: '2025-06-01T00:00:00Z' })
    expect(removed).toBe(4)
    expect((await persister.getAllSessions()).map((data) => data.id)).toEqual(['edge'])
    expect(await persister.getMessages('grandchild')).toEqual([])
  })

  it('deleteSessions honours states and scope', async () => {
    const persister = new InMemoryPersister()
    const old = '2025-01-01T00:00:00.000Z'
    await persister.saveSession(session('idle', { lastActivity: old, userId: 'u' }))
    await persister.saveSession(session('active', { lastActivity: old, userId: 'u', state: 'active' }))
    await persister.saveSession(session('other', { lastActivity: old, userId: 'v' }))
    expect(
      await persister.deleteSessions({
        lastActivityBefore: '2026-01-01T00:00:00.000Z',
        userId: 'u',
        states: ['idle'],
      }),
    ).toBe(1)
    expect((await persister.getAllSessions()).map((data) => data.id).sort()).toEqual(['active', 'other'])
    await expect(persister.deleteSessions({ lastActivityBefore: 'yesterday' })).rejects.toMatchObject({
      code: 'VALIDATION',
    })
  })

  it('round-trips the v2 fields and keeps them absent when absent', async () => {
    const persister = new InMemoryPersister()
    const full = session('f', {
      activeAgent: 'billing',
      parentSessionId: 'p',
      parentToolUseId: 'tu',
      forkedFrom: { sessionId: 'origin', seq: 3 },
    })
    await persister.saveSession(full)
    await persister.saveSession(session('bare'))
    expect(await persister.getSession('f')).toEqual(full)
    expect(Object.keys((await persister.getSession('bare'))!).sort()).toEqual([
      'createdAt',
      'id',
      'lastActivity',
      'state',
      'summary',
      'tokenUsage',
    ])
    const withFields = message('f', 0, {
      type: 'system',
      agentName: 'default',
      compaction: { throughSeq: 7 },
    })
    await persister.saveMessage('f', withFields)
    expect(await persister.getMessages('f')).toEqual([withFields])
    await expect(
      persister.saveMessage('f', message('f', 1, { agentName: 3 as never })),
    ).rejects.toMatchObject({
      code: 'VALIDATION',
    })
  })
})

describe('InMemoryPersister rejects what the SQL persisters reject', () => {
  it('a non-string optional text field of a session is VALIDATION, and nothing is stored', async () => {
    const persister = new InMemoryPersister()
    for (const key of ['cwd', 'model', 'systemPrompt', 'providerSessionId', 'userId', 'appName']) {
      for (const bad of [null, 5, {}]) {
        await expect(
          persister.saveSession(session(`s-${key}`, { [key]: bad } as Partial<SessionData>)),
        ).rejects.toMatchObject({ code: 'VALIDATION', message: expect.stringContaining(`session.${key}`) })
      }
    }
    expect(await persister.getAllSessions()).toEqual([])
  })

  it('a non-string id given to a read or delete is VALIDATION; an unknown id is not an error', async () => {
    const persister = new InMemoryPersister()
    await persister.saveSession(session('a'))
    const bad = 5 as unknown as string
    await expect(persister.getSession(bad)).rejects.toMatchObject({ code: 'VALIDATION' })
    await expect(persister.deleteSession(bad)).rejects.toMatchObject({ code: 'VALIDATION' })
    await expect(persister.getMessages(bad)).rejects.toMatchObject({ code: 'VALIDATION' })
    await expect(persister.deleteMessages(bad)).rejects.toMatchObject({ code: 'VALIDATION' })
    expect(await persister.getSession('unknown')).toBeNull()
    await expect(persister.deleteSession('unknown')).resolves.toBeUndefined()
    expect(await persister.getSession('a')).not.toBeNull()
  })
})
