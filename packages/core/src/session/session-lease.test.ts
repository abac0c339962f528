import { afterEach, describe, expect, it, vi } from 'vitest'
import type { AgentPersister, SessionData } from '../contracts/agent-persister.js'
import { isAgentError } from '../errors/agent-error.js'
import { SessionBusyError } from '../errors/session-busy-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import type { Logger } from '../util/logger.js'
import { SessionLease } from './session-lease.js'

const session: SessionData = {
  id: 's1',
  summary: '',
  createdAt: '2026-01-01T00:00:00.000Z',
  lastActivity: '2026-01-01T00:00:00.000Z',
  state: 'idle',
  tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
}

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = []
  return { warnings, debug() {}, info() {}, error() {}, warn: (message) => void warnings.push(message) }
}

/** The required methods of `persister` only: a persister without the `leases` capability. */
function delegate(persister: InMemoryPersister): AgentPersister {
  return {
    saveSession: (data) => persister.saveSession(data),
    getSession: (id) => persister.getSession(id),
    getAllSessions: () => persister.getAllSessions(),
    listSessions: (query) => persister.listSessions(query),
    deleteSession: (id) => persister.deleteSession(id),
    saveMessage: (id, message) => persister.saveMessage(id, message),
    getMessages: (id, query) => persister.getMessages(id, query),
    deleteMessages: (id) => persister.deleteMessages(id),
  }
}

afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

describe('SessionLease', () => {
  it('rejects with SessionBusyError while another owner holds the session, and frees it on release', async () => {
    const persister = new InMemoryPersister()
    await persister.saveSession(session)
    const first = new SessionLease({ persister, sessionId: 's1', owner: 'process-a', ttlMs: 60_000 })
    const second = new SessionLease({ persister, sessionId: 's1', owner: 'process-b', ttlMs: 60_000 })
    await first.claim()
    const error = await second.claim().catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(SessionBusyError)
    expect(isAgentError(error) && error.code).toBe('SESSION_BUSY')
    expect(second.isHeld).toBe(false)
    await first.release()
    expect(first.isHeld).toBe(false)
    await second.claim()
    expect(second.isHeld).toBe(true)
    expect(await persister.claimSession('s1', 'process-a', 60_000)).toBe(false)
    await second.release()
  })

  it('renews the lease every ttl/3 so that it outlives its ttl while the send runs', async () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00.000Z') })
    const persister = new InMemoryPersister({ now: () => Date.now() })
    await persister.saveSession(session)
    const lease = new SessionLease({ persister, sessionId: 's1', owner: 'a', ttlMs: 300 })
    await lease.claim()
    for (let elapsed = 0; elapsed < 3000; elapsed += 100) {
      await vi.advanceTimersByTimeAsync(100)
      expect(await persister.claimSession('s1', 'b', 300)).toBe(false)
    }
    await lease.release()
    expect(await persister.claimSession('s1', 'b', 300)).toBe(true)
  })

  it('claims a session whose holder died once its lease has expired', async () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00.000Z') })
    const persister = new InMemoryPersister({ now: () => Date.now() })
    await persister.saveSession(session)
    // The holder claimed and then died: nobody renews.
    await persister.claimSession('s1', 'dead-process', 1000)
    const lease = new SessionLease({ persister, sessionId: 's1', owner: 'b', ttlMs: 1000 })
    await expect(lease.claim()).rejects.toBeInstanceOf(SessionBusyError)
    await vi.advanceTimersByTimeAsync(1000)
    await lease.claim()
    expect(lease.isHeld).toBe(true)
    await lease.release()
  })

  it('reports a lease lost to another owner after a stall and stops renewing', async () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00.000Z') })
    const persister = new InMemoryPersister({ now: () => Date.now() })
    await persister.saveSession(session)
    const onLost = vi.fn()
    const logger = recordingLogger()
    const lease = new SessionLease({ persister, sessionId: 's1', owner: 'a', ttlMs: 900, onLost, logger })
    await lease.claim()
    // The event loop of `a` stalls past the lease's end (the clock jumps, no timer fires) …
    vi.setSystemTime(Date.now() + 5000)
    expect(await persister.claimSession('s1', 'b', 60_000)).toBe(true)
    // … and its next renewal finds the session taken.
    await vi.advanceTimersByTimeAsync(300)
    expect(onLost).toHaveBeenCalledTimes(1)
    expect(lease.isLost).toBe(true)
    expect(lease.isHeld).toBe(false)
    expect(logger.warnings).toEqual(['agentx: a session lease was taken by another process'])
    await lease.release()
    // Releasing a lost lease never frees the new owner's lease.
    expect(await persister.claimSession('s1', 'c', 60_000)).toBe(false)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('keeps renewing after a transient storage error, which it logs', async () => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00.000Z') })
    const persister = new InMemoryPersister({ now: () => Date.now() })
    await persister.saveSession(session)
    const claim = persister.claimSession.bind(persister)
    let failNextRenewal = false
    const flaky: AgentPersister = {
      ...delegate(persister),
      claimSession: async (id, owner, ttlMs) => {
        if (failNextRenewal) {
          failNextRenewal = false
          throw new Error('connection reset')
        }
        return claim(id, owner, ttlMs)
      },
      releaseSession: (id, owner) => persister.releaseSession(id, owner),
    }
    const logger = recordingLogger()
    const lease = new SessionLease({ persister: flaky, sessionId: 's1', owner: 'a', ttlMs: 900, logger })
    await lease.claim()
    failNextRenewal = true
    await vi.advanceTimersByTimeAsync(300)
    expect(logger.warnings).toEqual(['agentx: renewing a session lease failed; retrying'])
    await vi.advanceTimersByTimeAsync(2000)
    expect(lease.isHeld).toBe(true)
    expect(await persister.claimSession('s1', 'b', 900)).toBe(false)
    await lease.release()
    expect(logger.warnings).toHaveLength(1)
    expect(await persister.claimSession('s1', 'b', 900)).toBe(true)
  })

  it("renews on an unref'd timer and clears it on release", async () => {
    const persister = new InMemoryPersister()
    await persister.saveSession(session)
    const spy = vi.spyOn(globalThis, 'setInterval')
    const lease = new SessionLease({ persister, sessionId: 's1', owner: 'a', ttlMs: 60_000 })
    await lease.claim()
    expect(spy).toHaveBeenCalledTimes(1)
    expect(spy.mock.calls[0]![1]).toBe(20_000)
    const timer = spy.mock.results[0]!.value as NodeJS.Timeout
    expect(timer.hasRef()).toBe(false)
    await lease.release()
    expect(await persister.claimSession('s1', 'b', 60_000)).toBe(true)
  })

  it('is a no-op with a persister without leases', async () => {
    vi.useFakeTimers()
    const persister = new InMemoryPersister()
    const plain = delegate(persister)
    expect(SessionLease.isSupportedBy(plain)).toBe(false)
    const lease = new SessionLease({ persister: plain, sessionId: 'never-saved', owner: 'a' })
    await lease.claim()
    await lease.release()
    expect(lease.isHeld).toBe(false)
    expect(vi.getTimerCount()).toBe(0)
  })
})
