// AgentConfig.sessionCache (DESIGN §10.7): sessions that are not running leave memory past `max`
// or after `idleMs` and come back on getSession; a Session object the application still holds stays
// the one and only object of its id, and keeps working.
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { GetMessagesQuery, SessionData } from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import type { Session } from '../session/session.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn, toolCallTurn } from '../testing/stream-helpers.js'
import type { Tool } from '../tools/tool.js'
import type { AgentCore } from './agent-core.js'
import { type CacheableSession, SessionCache } from './session-cache.js'
import { createAgent } from './create-agent.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** Collects garbage until `done()` holds (finalizers run in tasks after a collection), at most ~1 s. */
async function collectUntil(done: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    // A fresh task first: a WeakRef read by `done()` keeps its target alive until its task ends.
    await new Promise((resolve) => setImmediate(resolve))
    gc()
    await new Promise((resolve) => setTimeout(resolve, 20))
    if (done()) return
  }
}

/** Counts message reads (a session that left memory reads its history from the store again). */
class ReadCountingPersister extends InMemoryPersister {
  messageReads = 0
  sessionWriteDelayMs = 0
  /** Only this session's writes are delayed; default is every session's. */
  slowSession: string | undefined
  override async getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]> {
    this.messageReads++
    return super.getMessages(sessionId, query)
  }
  override async saveSession(session: SessionData): Promise<void> {
    if (this.sessionWriteDelayMs > 0 && (this.slowSession ?? session.id) === session.id)
      await new Promise((resolve) => setTimeout(resolve, this.sessionWriteDelayMs))
    return super.saveSession(session)
  }
}

const stats = (agent: unknown) => (agent as AgentCore).sessionCacheStats()

afterEach(() => {
  vi.useRealTimers()
})

describe('SessionCache', () => {
  class Fake implements CacheableSession {
    state = 'idle'
    busy = false
    released = 0
    readonly id: string
    constructor(id: string) {
      this.id = id
    }
    releaseIfIdle(): boolean {
      if (this.busy) return false
      this.released++
      return true
    }
  }

  it('keeps at most max sessions, dropping the least recently used first', () => {
    const cache = new SessionCache<Fake>({ max: 2 })
    const [a, b, c] = [new Fake('a'), new Fake('b'), new Fake('c')]
    cache.add(a)
    cache.add(b)
    cache.get('a') // a is now more recent than b
    cache.add(c)
    expect(cache.size).toBe(2)
    expect([cache.isKept('a'), cache.isKept('b'), cache.isKept('c')]).toEqual([true, false, true])
    expect(b.released).toBe(1)
    // b was dropped, not forgotten: held here, so it is still the object of its id.
    expect(cache.get('b')).toBe(b)
    expect(cache.isKept('b')).toBe(true)
    expect(cache.size).toBe(2)
  })

  it('never drops a session that refuses (running); it goes once it agrees', () => {
    const cache = new SessionCache<Fake>({ max: 1 })
    const running = new Fake('running')
    running.busy = true
    cache.add(running)
    const [x, y] = [new Fake('x'), new Fake('y')]
    cache.add(x)
    cache.add(y)
    // The running one holds the only place: newer idle ones leave memory instead (they stay alive while held).
    expect([cache.isKept('running'), cache.isKept('x'), cache.isKept('y')]).toEqual([true, false, false])
    expect(cache.size).toBe(1)
    expect(cache.peek('y')).toBe(y)
    running.busy = false
    const z = new Fake('z')
    cache.add(z)
    expect([cache.isKept('running'), cache.isKept('z')]).toEqual([false, true])
    expect(running.released).toBe(1)
    expect(cache.size).toBe(1)
  })

  it('drops sessions unused for idleMs, on the sweep timer', () => {
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] })
    const cache = new SessionCache<Fake>({ max: 10, idleMs: 1000 })
    cache.start()
    const [old, fresh] = [new Fake('old'), new Fake('fresh')]
    cache.add(old)
    vi.advanceTimersByTime(600)
    cache.add(fresh)
    vi.advanceTimersByTime(600)
    expect([cache.isKept('old'), cache.isKept('fresh')]).toEqual([false, true])
    vi.advanceTimersByTime(1000)
    expect(cache.size).toBe(0)
    cache.stop()
  })

  it('forgets an object once nothing else holds it', async () => {
    const cache = new SessionCache<Fake>({ max: 0 })
    for (let i = 0; i < 1000; i++) cache.add(new Fake(`s${i}`))
    expect(cache.size).toBe(0)
    await collectUntil(() => cache.tracked === 0)
    expect(cache.tracked).toBe(0)
  })
})

describe('AgentConfig.sessionCache', () => {
  it('memory stays bounded: 10 000 sessions with max 100 keep at most 100 in memory', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter(Array.from({ length: 10_000 }, () => textTurn('ok')))
    const agent = createAgent({ sessionCache: { max: 100 } }, { adapter, persister })
    let highest = 0
    for (let i = 0; i < 10_000; i++) {
      await agent.chat(`message ${i}`)
      highest = Math.max(highest, stats(agent).kept)
    }
    expect(highest).toBe(100)
    expect(stats(agent).kept).toBe(100)
    expect((await persister.getAllSessions()).length).toBe(10_000)
    // The objects the cache dropped (and nobody holds) are garbage: the registry forgets them too.
    await collectUntil(() => stats(agent).tracked <= 100)
    expect(stats(agent).tracked).toBeLessThanOrEqual(100)
    await agent.close()
  }, 60_000)

  it('an application that holds every session still keeps only max of them (with their messages) in memory', async () => {
    const persister = new ReadCountingPersister()
    const adapter = new ScriptedAdapter(Array.from({ length: 300 }, () => textTurn('ok')))
    const agent = createAgent({ sessionCache: { max: 100 } }, { adapter, persister })
    const held: Session[] = []
    for (let i = 0; i < 300; i++) held.push(await agent.chat(`message ${i}`))
    expect(stats(agent).kept).toBe(100)
    expect(stats(agent).tracked).toBe(300)

    persister.messageReads = 0
    for (const session of held.slice(-100)) await session.getMessages()
    expect(persister.messageReads).toBe(0)
    for (const session of held.slice(0, 50)) expect(await session.getMessages()).toHaveLength(2)
    expect(persister.messageReads).toBe(50)
  })

  it('a held Session object stays valid after it left memory: same object from getSession and getSessions, and it sends on', async () => {
    const persister = new ReadCountingPersister()
    const adapter = new ScriptedAdapter([textTurn('one'), textTurn('two')])
    const agent = createAgent({ sessionCache: { max: 1 } }, { adapter, persister })
    const first = await agent.createSession()
    await first.send('hello')
    await agent.createSession()
    expect(stats(agent).isKept(first.id)).toBe(false)

    expect(await agent.getSession(first.id)).toBe(first)
    expect((await agent.getSessions()).find((s) => s.id === first.id)).toBe(first)
    await first.send('again')
    expect((await persister.getMessages(first.id)).map((m) => m.seq)).toEqual([0, 1, 2, 3])
    expect((await first.getMessages()).map((m) => m.content)).toEqual([
      'hello',
      [{ type: 'text', text: 'one' }],
      'again',
      [{ type: 'text', text: 'two' }],
    ])
  })

  it('a session nobody holds is reloaded from the store by getSession', async () => {
    const persister = new ReadCountingPersister()
    const adapter = new ScriptedAdapter([textTurn('one'), textTurn('two')])
    const agent = createAgent({ sessionCache: { max: 1 } }, { adapter, persister })
    let session: Session | undefined = await agent.createSession({ summary: 'Kept in the store' })
    await session.send('hello')
    const id = session.id
    const ref = new WeakRef(session)
    session = undefined
    await agent.createSession()
    await collectUntil(() => ref.deref() === undefined)
    expect(ref.deref()).toBeUndefined()

    const reloaded = (await agent.getSession(id))!
    expect(reloaded.summary).toBe('Kept in the store')
    expect(reloaded.state).toBe('idle')
    persister.messageReads = 0
    await reloaded.send('again')
    expect(persister.messageReads).toBeGreaterThan(0)
    expect((await persister.getMessages(id)).map((m) => m.seq)).toEqual([0, 1, 2, 3])
  })

  it('a running session is never dropped, even past max; its send completes with every message in order', async () => {
    const persister = new InMemoryPersister()
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const wait: Tool = {
      name: 'wait',
      description: 'Waits',
      inputSchema: { type: 'object' },
      execute: async () => {
        await gate
        return 'waited'
      },
    }
    const adapter = new ScriptedAdapter([
      toolCallTurn([{ id: 'w1', name: 'wait', input: {} }]),
      textTurn('done'),
    ])
    const agent = createAgent({ sessionCache: { max: 1 }, tools: [wait] }, { adapter, persister })
    const running = await agent.createSession()
    const sending = running.send('go')
    await vi.waitFor(() => expect(running.state).toBe('active'))
    for (let i = 0; i < 5; i++) await agent.createSession()
    expect(stats(agent).isKept(running.id)).toBe(true)
    release()
    await sending
    await running.flush()
    expect((await persister.getMessages(running.id)).map((m) => [m.seq, m.type])).toEqual([
      [0, 'user'],
      [1, 'agent'],
      [2, 'tool'],
      [3, 'agent'],
    ])
    // Finished: the next use of the cache applies the bound to it too.
    await agent.createSession()
    expect(stats(agent).kept).toBe(1)
  })

  it('a session waiting for its send to start (claiming its lease) is not dropped', async () => {
    let releaseClaim: () => void = () => undefined
    const claimGate = new Promise<void>((resolve) => {
      releaseClaim = resolve
    })
    class SlowClaims extends InMemoryPersister {
      slow = false
      override async claimSession(id: string, owner: string, ttlMs: number): Promise<boolean> {
        if (this.slow) await claimGate
        return super.claimSession(id, owner, ttlMs)
      }
    }
    const persister = new SlowClaims()
    const agent = createAgent(
      { sessionCache: { max: 1 } },
      { adapter: new ScriptedAdapter([textTurn('hi')]), persister },
    )
    const session = await agent.createSession()
    persister.slow = true
    const sending = session.send('hello')
    expect(session.state).toBe('created')
    await agent.createSession()
    await agent.createSession()
    expect(stats(agent).isKept(session.id)).toBe(true)
    releaseClaim()
    await sending
    expect((await persister.getMessages(session.id)).length).toBe(2)
  })

  it('a session with writes still in flight is not dropped until they are durable', async () => {
    const persister = new ReadCountingPersister()
    // Without leases a send in `async` durability resolves before its writes are durable.
    Object.defineProperty(persister, 'claimSession', { value: undefined })
    const agent = createAgent(
      { sessionCache: { max: 1 }, durability: 'async' },
      { adapter: new ScriptedAdapter([textTurn('one'), textTurn('two')]), persister },
    )
    const session = await agent.createSession()
    persister.sessionWriteDelayMs = 50
    persister.slowSession = session.id
    await session.send('hello')
    await agent.createSession()
    expect(stats(agent).isKept(session.id)).toBe(true)
    await session.flush()
    persister.sessionWriteDelayMs = 0
    await agent.createSession()
    expect(stats(agent).isKept(session.id)).toBe(false)
    await session.send('again')
    await session.flush()
    expect((await persister.getMessages(session.id)).map((m) => m.seq)).toEqual([0, 1, 2, 3])
  })

  it('a session whose update is still being written is not dropped', async () => {
    const persister = new ReadCountingPersister()
    // Without leases, update() queues its write at once (with them it first reads the stored session).
    Object.defineProperty(persister, 'claimSession', { value: undefined })
    const agent = createAgent({ sessionCache: { max: 1 } }, { adapter: new ScriptedAdapter([]), persister })
    const session = await agent.createSession()
    persister.sessionWriteDelayMs = 50
    persister.slowSession = session.id
    const updating = session.update({ summary: 'Renamed' })
    await agent.createSession()
    expect(stats(agent).isKept(session.id)).toBe(true)
    await updating
    await agent.createSession()
    expect(stats(agent).isKept(session.id)).toBe(false)
    expect((await persister.getSession(session.id))!.summary).toBe('Renamed')
  })

  it('drops sessions idle for idleMs on a timer, without any call', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] })
    const persister = new InMemoryPersister()
    const agent = createAgent(
      { sessionCache: { idleMs: 5_000 } },
      { adapter: new ScriptedAdapter([]), persister },
    )
    const old = await agent.createSession()
    vi.advanceTimersByTime(3_000)
    const recent = await agent.createSession()
    vi.advanceTimersByTime(3_000)
    expect(stats(agent).isKept(old.id)).toBe(false)
    expect(stats(agent).isKept(recent.id)).toBe(true)
    // A use keeps it again.
    expect(await agent.getSession(old.id)).toBe(old)
    expect(stats(agent).isKept(old.id)).toBe(true)
    vi.advanceTimersByTime(10_000)
    expect(stats(agent).kept).toBe(0)
    await agent.close()
  })

  it('close() makes durable the writes of a session that left memory and is still held', async () => {
    const persister = new ReadCountingPersister()
    const agent = createAgent({ sessionCache: { max: 1 } }, { adapter: new ScriptedAdapter([]), persister })
    const held = await agent.createSession()
    await agent.createSession()
    expect(stats(agent).isKept(held.id)).toBe(false)
    persister.sessionWriteDelayMs = 30
    const pending = held.update({ summary: 'Renamed before close' })
    await agent.close()
    await pending
    expect((await persister.getSession(held.id))!.summary).toBe('Renamed before close')
  })

  it('a listing longer than max returns working sessions and keeps only max', async () => {
    const persister = new InMemoryPersister()
    const agent = createAgent({ sessionCache: { max: 10 } }, { adapter: new ScriptedAdapter([]), persister })
    for (let i = 0; i < 40; i++) await agent.createSession({ summary: `s${i}` })
    const listed = await agent.getSessions({ limit: 40 })
    expect(listed).toHaveLength(40)
    expect(stats(agent).kept).toBe(10)
    expect(new Set(listed.map((s) => s.summary)).size).toBe(40)
    expect(await agent.getSession(listed[39]!.id)).toBe(listed[39])
  })

  it('max: 0 keeps nothing idle in memory, yet one id is still one object', async () => {
    const agent = createAgent(
      { sessionCache: { max: 0 } },
      { adapter: new ScriptedAdapter([]), persister: new InMemoryPersister() },
    )
    const session = await agent.createSession()
    expect(stats(agent).kept).toBe(0)
    expect(await agent.getSession(session.id)).toBe(session)
  })

  it('rejects a malformed sessionCache with ConfigurationError', () => {
    for (const sessionCache of [
      { max: -1 },
      { max: 1.5 },
      { idleMs: 0 },
      { idleMs: '10' },
      { maxSize: 10 },
      'big',
    ]) {
      expect(() => createAgent({ sessionCache } as never)).toThrow(ConfigurationError)
    }
    expect(() => createAgent({ sessionCach: {} } as never)).toThrow(/did you mean 'sessionCache'/)
  })
})
