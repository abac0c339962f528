import type { SessionData } from '@agentx/core'
import { afterAll, describe, expect, it } from 'vitest'
import { killHard, nextLine, runChild, startChild } from '../test/child-process.js'
import { adminPool, TEST_DATABASE_URL, testPersister } from '../test/test-database.js'
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

async function leaseOwner(store: PostgresPersister, id: string): Promise<string | null> {
  const { rows } = await admin.query(`select lease_owner from "${store.schema}".sessions where id = $1`, [id])
  return (rows[0] as { lease_owner: string | null }).lease_owner
}

describe('PostgresPersister leases across processes', () => {
  it('gives each session to exactly one of 20 owners in four processes racing for it', async () => {
    const store = persister()
    const ids = Array.from({ length: 10 }, (_, index) => `race-${index}`)
    for (const id of ids) await store.saveSession(session(id))
    const startAt = Date.now() + 2500
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, process) =>
        runChild<Record<string, string[]>>('./postgres-worker.mjs', [
          'race',
          TEST_DATABASE_URL,
          store.schema,
          String(startAt),
          Array.from({ length: 5 }, (_, owner) => `p${process}-o${owner}`).join(','),
          ...ids,
        ]),
      ),
    )
    const won = Object.assign({}, ...results) as Record<string, string[]>
    expect(Object.keys(won)).toHaveLength(20)
    for (const id of ids) {
      const winners = Object.keys(won).filter((owner) => won[owner]!.includes(id))
      expect(winners, id).toHaveLength(1)
      expect(await leaseOwner(store, id)).toBe(winners[0])
    }
  }, 60_000)

  it("lets another process claim a session once a killed holder's lease has expired, leaking no lock", async () => {
    const store = persister()
    await store.saveSession(session('held', { state: 'active' }))
    const holder = startChild('./postgres-worker.mjs', [
      'hold',
      TEST_DATABASE_URL,
      store.schema,
      'doomed',
      '1500',
      'held',
    ])
    try {
      expect(await nextLine(holder)).toEqual({ claimed: true })
      expect(await store.claimSession('held', 'survivor', 60_000)).toBe(false)
      // A second process starting now must not interrupt the live send of the holder.
      expect(await store.markInterrupted()).toBe(0)
      expect((await store.getSession('held'))?.state).toBe('active')
    } finally {
      await killHard(holder)
    }
    expect(await leaseOwner(store, 'held')).toBe('doomed')
    const deadline = Date.now() + 10_000
    while (!(await store.claimSession('held', 'survivor', 60_000))) {
      expect(Date.now()).toBeLessThan(deadline)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(await leaseOwner(store, 'held')).toBe('survivor')
    await store.releaseSession('held', 'survivor')
    expect(await store.markInterrupted()).toBe(1)
    expect(await store.getSession('held')).toEqual(session('held', { state: 'interrupted' }))
    // Leases are row updates, never advisory locks: nothing is left behind by the killed process.
    const { rows } = await admin.query(
      "select count(*)::int as held from pg_locks where locktype = 'advisory' and granted",
    )
    expect(rows).toEqual([{ held: 0 }])
  }, 30_000)
})

describe('PostgresPersister leases', () => {
  it('are re-entrant, renewable, released only by their owner, and untouched by saveSession', async () => {
    const store = persister()
    await store.saveSession(session('s'))
    expect(await store.claimSession('s', 'a', 60_000)).toBe(true)
    const expiry = async () =>
      (await admin.query(`select lease_expires_at from "${store.schema}".sessions where id = 's'`)).rows[0]
        .lease_expires_at as Date
    const first = await expiry()
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(await store.claimSession('s', 'a', 60_000)).toBe(true)
    expect((await expiry()).getTime()).toBeGreaterThan(first.getTime())
    await store.releaseSession('s', 'b')
    await store.saveSession(session('s', { summary: 'rewritten', state: 'active' }))
    expect(await leaseOwner(store, 's')).toBe('a')
    expect(await store.claimSession('s', 'b', 60_000)).toBe(false)
    await store.releaseSession('s', 'a')
    expect(await leaseOwner(store, 's')).toBeNull()
    expect(await store.claimSession('s', 'b', 60_000)).toBe(true)
    expect(await store.getSession('s')).toEqual(session('s', { summary: 'rewritten', state: 'active' }))
  })

  it('expires after ttlMs without renewal', async () => {
    const store = persister()
    await store.saveSession(session('s'))
    // A lease long enough that a loaded machine answers the second claim well within it.
    expect(await store.claimSession('s', 'a', 1_000)).toBe(true)
    expect(await store.claimSession('s', 'b', 1_000)).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    expect(await store.claimSession('s', 'b', 1_000)).toBe(true)
  })

  it('claims a session whose saveSession is still queued, and rejects an unknown one with NOT_FOUND', async () => {
    const store = persister()
    void store.saveSession(session('queued'))
    expect(await store.claimSession('queued', 'a', 60_000)).toBe(true)
    await expect(store.claimSession('missing', 'a', 60_000)).rejects.toMatchObject({ code: 'NOT_FOUND' })
    await expect(store.claimSession('queued', '', 60_000)).rejects.toMatchObject({ code: 'VALIDATION' })
    await expect(store.claimSession('queued', 'a', 1.5)).rejects.toMatchObject({ code: 'VALIDATION' })
  })

  it('renews beside a burst of queued message writes instead of behind it', async () => {
    const store = persister()
    await store.saveSession(session('busy'))
    await store.saveSession(session('other'))
    await store.claimSession('busy', 'a', 60_000)
    let renewed = false
    const burst = Array.from({ length: 20_000 }, (_, seq) =>
      store.saveMessage('other', {
        id: `m${seq}`,
        sessionId: 'other',
        seq,
        type: 'user',
        content: 'x'.repeat(200),
        timestamp: '2026-01-01T00:00:00.000Z',
      }),
    )
    const renewal = store.claimSession('busy', 'a', 60_000).then((value) => {
      renewed = true
      return value
    })
    const renewedFirst = burst.at(-1)!.then(() => renewed)
    expect(await renewal).toBe(true)
    expect(await renewedFirst).toBe(true)
    await Promise.all(burst)
  }, 60_000)

  it('markInterrupted changes only state, only for active sessions of the scope without a live lease', async () => {
    const store = persister()
    await store.saveSession(session('live', { state: 'active', userId: 'u' }))
    await store.saveSession(session('crashed', { state: 'active', userId: 'u', metadata: { keep: 1 } }))
    await store.saveSession(session('elsewhere', { state: 'active', userId: 'v' }))
    await store.saveSession(session('idle', { userId: 'u' }))
    await store.claimSession('live', 'a', 60_000)
    expect(await store.markInterrupted({ userId: 'u' })).toBe(1)
    expect(await store.getSession('crashed')).toEqual(
      session('crashed', { state: 'interrupted', userId: 'u', metadata: { keep: 1 } }),
    )
    expect((await store.getSession('live'))?.state).toBe('active')
    expect((await store.getSession('elsewhere'))?.state).toBe('active')
  })
})
