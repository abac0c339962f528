import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SessionData } from '@agentx/core'
import BetterSqlite3 from 'better-sqlite3'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { killHard, nextLine, runChild, startChild } from '../test/child-process.js'
import { createSqlitePersister, type SqlitePersister } from './index.js'

const folder = mkdtempSync(join(tmpdir(), 'agentx-sqlite-leases-'))
afterAll(() => rmSync(folder, { recursive: true, force: true }))
const open: Array<{ close(): unknown }> = []
afterEach(async () => {
  for (const handle of open.splice(0).reverse()) await handle.close()
})

let files = 0
function persisterAt(filename = join(folder, `leases-${files++}.db`)): SqlitePersister {
  const persister = createSqlitePersister({ filename })
  open.push(persister)
  return persister
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

function leaseColumns(
  filename: string,
  id: string,
): { lease_owner: string | null; lease_expires_at: number | null } {
  const database = new BetterSqlite3(filename, { readonly: true })
  try {
    return database.prepare('select lease_owner, lease_expires_at from sessions where id = ?').get(id) as {
      lease_owner: string | null
      lease_expires_at: number | null
    }
  } finally {
    database.close()
  }
}

describe('SqlitePersister leases across processes on one file', () => {
  it('gives each session to exactly one of six processes racing for it at the same moment', async () => {
    const persister = persisterAt()
    const ids = Array.from({ length: 10 }, (_, index) => `race-${index}`)
    for (const id of ids) await persister.saveSession(session(id))
    const startAt = Date.now() + 1500
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        runChild<Record<string, boolean>>('./sqlite-worker.mjs', [
          'race',
          persister.filename,
          `process-${index}`,
          String(startAt),
          ...ids,
        ]),
      ),
    )
    for (const id of ids) {
      const winners = results.flatMap((result, index) => (result[id] ? [`process-${index}`] : []))
      expect(winners, id).toHaveLength(1)
      // The store agrees with the winner.
      expect(leaseColumns(persister.filename, id).lease_owner).toBe(winners[0])
    }
  }, 60_000)

  it('opens a new file that three processes open at the same instant, a hundred times over', async () => {
    // Switching a new file to WAL failed at once with SQLITE_BUSY in about 3 % of such opens (the
    // busy handler does not wait there): an application starting several workers failed to start.
    const folder = mkdtempSync(join(tmpdir(), 'agentx-sqlite-open-race-'))
    try {
      const startAt = Date.now() + 1500
      const results = await Promise.all(
        Array.from({ length: 3 }, () =>
          runChild<{ failures: string[] }>('./sqlite-worker.mjs', [
            'open-new',
            folder,
            '100',
            String(startAt),
            '25',
          ]),
        ),
      )
      expect(results.flatMap((result) => result.failures)).toEqual([])
    } finally {
      rmSync(folder, { recursive: true, force: true })
    }
  }, 60_000)

  it("lets another process claim a session once a killed holder's lease has expired", async () => {
    const persister = persisterAt()
    await persister.saveSession(session('held', { state: 'active' }))
    const holder = startChild('./sqlite-worker.mjs', ['hold', persister.filename, 'doomed', '1500', 'held'])
    try {
      expect(await nextLine(holder)).toEqual({ claimed: true })
      expect(await persister.claimSession('held', 'survivor', 60_000)).toBe(false)
      // A second process starting now must not interrupt the live send of the holder.
      expect(await persister.markInterrupted()).toBe(0)
      expect((await persister.getSession('held'))?.state).toBe('active')
    } finally {
      await killHard(holder)
    }
    // The holder is gone without releasing; its lease is still in the file until it expires.
    expect(leaseColumns(persister.filename, 'held').lease_owner).toBe('doomed')
    expect(await persister.claimSession('held', 'survivor', 60_000)).toBe(false)
    const deadline = Date.now() + 10_000
    while (!(await persister.claimSession('held', 'survivor', 60_000))) {
      expect(Date.now()).toBeLessThan(deadline)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(leaseColumns(persister.filename, 'held').lease_owner).toBe('survivor')
    await persister.releaseSession('held', 'survivor')
    // With the lease released, start-up repair interrupts the crashed send.
    expect(await persister.markInterrupted()).toBe(1)
    expect(await persister.getSession('held')).toEqual(session('held', { state: 'interrupted' }))
  }, 30_000)
})

describe('SqlitePersister leases', () => {
  it('are re-entrant, renewable, released only by their owner, and untouched by saveSession', async () => {
    const persister = persisterAt()
    await persister.saveSession(session('s'))
    expect(await persister.claimSession('s', 'a', 60_000)).toBe(true)
    const first = leaseColumns(persister.filename, 's').lease_expires_at!
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(await persister.claimSession('s', 'a', 60_000)).toBe(true)
    expect(leaseColumns(persister.filename, 's').lease_expires_at!).toBeGreaterThan(first)
    await persister.releaseSession('s', 'b')
    await persister.saveSession(session('s', { summary: 'rewritten', state: 'active' }))
    expect(leaseColumns(persister.filename, 's').lease_owner).toBe('a')
    expect(await persister.claimSession('s', 'b', 60_000)).toBe(false)
    await persister.releaseSession('s', 'a')
    expect(leaseColumns(persister.filename, 's')).toEqual({ lease_owner: null, lease_expires_at: null })
    expect(await persister.claimSession('s', 'b', 60_000)).toBe(true)
    // The lease never shows in SessionData.
    expect(await persister.getSession('s')).toEqual(session('s', { summary: 'rewritten', state: 'active' }))
  })

  it('expires after ttlMs without renewal', async () => {
    const persister = persisterAt()
    await persister.saveSession(session('s'))
    // A lease long enough that a loaded machine answers the second claim well within it.
    expect(await persister.claimSession('s', 'a', 1_000)).toBe(true)
    expect(await persister.claimSession('s', 'b', 1_000)).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    expect(await persister.claimSession('s', 'b', 1_000)).toBe(true)
  })

  it('claims a session whose saveSession is still queued, and rejects an unknown one with NOT_FOUND', async () => {
    const persister = persisterAt()
    void persister.saveSession(session('queued'))
    expect(await persister.claimSession('queued', 'a', 60_000)).toBe(true)
    await expect(persister.claimSession('missing', 'a', 60_000)).rejects.toMatchObject({ code: 'NOT_FOUND' })
    await expect(persister.claimSession('queued', '', 60_000)).rejects.toMatchObject({ code: 'VALIDATION' })
    await expect(persister.claimSession('queued', 'a', 0)).rejects.toMatchObject({ code: 'VALIDATION' })
  })

  it('renews at once while a burst of message writes is queued', async () => {
    const persister = persisterAt()
    await persister.saveSession(session('busy'))
    await persister.saveSession(session('other'))
    await persister.claimSession('busy', 'a', 60_000)
    const burst = Array.from({ length: 20_000 }, (_, seq) =>
      persister.saveMessage('other', {
        id: `m${seq}`,
        sessionId: 'other',
        seq,
        type: 'user',
        content: 'x'.repeat(200),
        timestamp: '2026-01-01T00:00:00.000Z',
      }),
    )
    let renewedBeforeBurst = false
    const renewal = persister.claimSession('busy', 'a', 60_000).then((value) => {
      renewedBeforeBurst = true
      return value
    })
    const last = burst.at(-1)!.then(() => renewedBeforeBurst)
    expect(await renewal).toBe(true)
    expect(await last).toBe(true)
    await Promise.all(burst)
  })

  it('markInterrupted changes only state, only for active sessions of the scope without a live lease', async () => {
    const persister = persisterAt()
    await persister.saveSession(session('live', { state: 'active', userId: 'u' }))
    await persister.saveSession(session('crashed', { state: 'active', userId: 'u', metadata: { keep: 1 } }))
    await persister.saveSession(session('elsewhere', { state: 'active', userId: 'v' }))
    await persister.saveSession(session('idle', { userId: 'u' }))
    await persister.claimSession('live', 'a', 60_000)
    expect(await persister.markInterrupted({ userId: 'u' })).toBe(1)
    expect(await persister.getSession('crashed')).toEqual(
      session('crashed', { state: 'interrupted', userId: 'u', metadata: { keep: 1 } }),
    )
    expect((await persister.getSession('live'))?.state).toBe('active')
    expect((await persister.getSession('elsewhere'))?.state).toBe('active')
    expect((await persister.getSession('idle'))?.state).toBe('idle')
  })
})
