import { describe, expect, it } from 'vitest'
import type { SessionData } from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import type { AgentError } from '../errors/agent-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { ValidationError } from '../errors/validation-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { WriteQueue } from './write-queue.js'

const SESSION = 's1'
const created = '2026-01-01T00:00:00.000Z'

function session(summary: string): SessionData {
  return {
    id: SESSION,
    summary,
    createdAt: created,
    lastActivity: created,
    state: 'idle',
    tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
  }
}

function message(seq: number, text: string, extra: Partial<AnyMessage> = {}): AnyMessage {
  return { id: `m${seq}`, sessionId: SESSION, seq, type: 'user', content: text, timestamp: created, ...extra }
}

/**
 * A store whose calls fail as a schedule says, and which checks after every successful message
 * write that the session's seqs on disk are 0…n-1.
 */
class ScheduledPersister extends InMemoryPersister {
  calls = 0
  readonly gaps: string[] = []
  failing: (call: number) => boolean = () => false
  #check(): void {
    this.calls += 1
    if (this.failing(this.calls)) throw new PersistenceError(`fault at call ${this.calls}`)
  }
  override async saveMessage(sessionId: string, value: AnyMessage): Promise<void> {
    this.#check()
    await super.saveMessage(sessionId, value)
    const seqs = (await super.getMessages(sessionId)).map((m) => m.seq)
    if (seqs.some((seq, index) => seq !== index)) this.gaps.push(seqs.join(','))
  }
  override async saveSession(value: SessionData): Promise<void> {
    this.#check()
    return super.saveSession(value)
  }
}

async function setUp(options: ConstructorParameters<typeof WriteQueue>[2] = {}) {
  const persister = new ScheduledPersister()
  await persister.saveSession(session('start'))
  persister.calls = 0
  const errors: AgentError[] = []
  const queue = new WriteQueue(persister, SESSION, {
    initialDelayMs: 1,
    maxDelayMs: 4,
    maxAttempts: 3,
    onError: (error) => errors.push(error),
    ...options,
  })
  return { persister, queue, errors }
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('WriteQueue', () => {
  it('a record the store refuses for good is reported once: by a caller that waits for it, else by the next flush()', async () => {
    const refusal = new PersistenceError('row too large', { code: 'VALIDATION', retryable: false })
    let refuse = true
    const persister = new InMemoryPersister()
    await persister.saveSession(session('start'))
    const refusing = Object.assign(Object.create(persister) as InMemoryPersister, {
      saveMessage: async (sessionId: string, value: AnyMessage) => {
        if (value.seq === 1 && refuse) throw refusal
        return persister.saveMessage(sessionId, value)
      },
    })
    const errors: AgentError[] = []
    const queue = new WriteQueue(refusing, SESSION, {
      initialDelayMs: 1,
      onError: (error) => errors.push(error),
    })
    // Nobody waits for it (async durability): the next flush() reports it, the one after does not.
    void queue.saveMessage(message(0, 'a'))
    void queue.saveMessage(message(1, 'refused'))
    void queue.saveMessage(message(2, 'c'))
    while (!queue.idle) await wait(1)
    // Before, this flush resolved: everything left had landed, the refused record was forgotten.
    await expect(queue.flush()).rejects.toBe(refusal)
    await expect(queue.flush()).resolves.toBeUndefined()
    expect(errors).toEqual([refusal])
    // A caller that waits for it (sync durability, an update) is told; flush() then resolves.
    await expect(queue.hold(queue.saveMessage(message(1, 'again')))).rejects.toBe(refusal)
    await expect(queue.flush()).resolves.toBeUndefined()
    refuse = false
  })

  it('whenIdle() resolves once everything has landed after an outage, without forcing a retry, and never rejects', async () => {
    const { persister, queue } = await setUp({ initialDelayMs: 5, maxDelayMs: 5, maxAttempts: 2 })
    await queue.whenIdle()
    let down = true
    persister.failing = () => down
    void queue.saveMessage(message(0, 'a'))
    void queue.saveMessage(message(1, 'b'))
    await expect(queue.flush()).rejects.toBeInstanceOf(PersistenceError)
    let idle = false
    const waiting = queue.whenIdle().then(() => {
      idle = true
    })
    await wait(30)
    expect(idle).toBe(false)
    down = false
    await waiting
    expect(queue.idle).toBe(true)
    expect((await persister.getMessages(SESSION)).map((m) => m.seq)).toEqual([0, 1])
    // A queue discarded while a record still fails is idle too.
    down = true
    void queue.saveMessage(message(2, 'c'))
    const discarded = queue.whenIdle()
    await wait(10)
    await queue.discard()
    await discarded
  })

  it('writes records in the order they were first queued, one slot per record, newest value winning', async () => {
    const { persister, queue } = await setUp()
    void queue.saveMessage(message(0, 'a'))
    void queue.saveMessage(message(1, 'draft'))
    void queue.saveMessage(message(1, 'final'))
    await queue.flush()
    expect((await persister.getMessages(SESSION)).map((m) => m.content)).toEqual(['a', 'final'])
    // Coalesced: two writes, not three.
    expect(persister.calls).toBe(2)
  })

  it('a checkpoint being retried never overwrites the final value written after it', async () => {
    const { persister, queue } = await setUp({ maxAttempts: 10 })
    persister.failing = (call) => call <= 5
    void queue.saveMessage(message(0, 'partial', { incomplete: true }))
    for (let i = 0; i < 200 && persister.calls < 2; i++) await wait(1)
    void queue.saveMessage(message(0, 'complete'))
    await queue.flush()
    expect(await persister.getMessages(SESSION)).toEqual([message(0, 'complete')])
  })

  it('retries failed writes in the background, in order, without a flush', async () => {
    const { persister, queue, errors } = await setUp()
    persister.failing = (call) => call <= 6
    void queue.saveMessage(message(0, 'a'))
    void queue.saveMessage(message(1, 'b'))
    void queue.saveMessage(message(2, 'c'))
    for (let i = 0; i < 100 && !queue.idle; i++) await wait(5)
    expect(queue.idle).toBe(true)
    expect((await persister.getMessages(SESSION)).map((m) => m.seq)).toEqual([0, 1, 2])
    expect(persister.gaps).toEqual([])
    expect(errors).toHaveLength(1)
  })

  it('tells a waiting caller after maxAttempts, keeps the record, and clears the error once it is written', async () => {
    const { persister, queue, errors } = await setUp({ initialDelayMs: 1, maxDelayMs: 1000 })
    let down = true
    persister.failing = () => down
    const first = queue.saveMessage(message(0, 'a'))
    const flushed = queue.flush()
    await expect(first).rejects.toMatchObject({ code: 'PERSISTENCE' })
    await expect(flushed).rejects.toMatchObject({ code: 'PERSISTENCE' })
    expect(errors).toHaveLength(1)
    expect(queue.size).toBe(1)
    down = false
    // flush() does not wait for the background backoff, and reports no stale error.
    await queue.flush()
    expect(queue.size).toBe(0)
    await queue.flush()
    expect(await persister.getMessages(SESSION)).toEqual([message(0, 'a')])
  })

  it('flush() resolves at once when nothing is queued', async () => {
    const { queue } = await setUp()
    await queue.flush()
    expect(queue.idle).toBe(true)
  })

  it('drops a write that can never succeed, reports it, and goes on with the next', async () => {
    const { persister, queue, errors } = await setUp()
    const original = persister.saveMessage.bind(persister)
    persister.saveMessage = async (sessionId, value) => {
      if (value.id === 'bad') throw new ValidationError('not storable')
      return original(sessionId, value)
    }
    const bad = queue.saveMessage({ ...message(0, 'x'), id: 'bad' })
    const good = queue.saveMessage(message(0, 'y'))
    await expect(bad).rejects.toMatchObject({ code: 'VALIDATION' })
    await good
    expect(errors.map((e) => e.code)).toEqual(['VALIDATION'])
    expect(await persister.getMessages(SESSION)).toEqual([message(0, 'y')])
  })

  it('a message the store refuses for good is stood in for at its seq: no gap on disk, and a refused stand-in is dropped quietly', async () => {
    const refusal = new PersistenceError('row too large', { code: 'VALIDATION', retryable: false })
    const { persister, queue, errors } = await setUp()
    const saveMessage = persister.saveMessage.bind(persister)
    let refuseStandIns = false
    persister.saveMessage = async (sessionId, value) => {
      if (value.content === 'huge' || (refuseStandIns && value.metadata?.notStored !== undefined))
        throw refusal
      return saveMessage(sessionId, value)
    }
    void queue.saveMessage(message(0, 'a'))
    const refused = queue.saveMessage(
      message(1, 'huge', { type: 'agent', usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } }),
    )
    void queue.saveMessage(message(2, 'c'))
    await expect(refused).rejects.toBe(refusal)
    await expect(queue.flush()).rejects.toBe(refusal)
    const stored = await persister.getMessages(SESSION)
    expect(stored.map((m) => m.seq)).toEqual([0, 1, 2])
    expect(stored[1]).toEqual({
      id: 'm1',
      sessionId: SESSION,
      seq: 1,
      type: 'agent',
      content: '[This message was not stored: the store refused it (VALIDATION).]',
      timestamp: created,
      usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
      metadata: { notStored: { code: 'VALIDATION' } },
    })
    expect(persister.gaps).toEqual([])
    expect(errors).toEqual([refusal])
    // A newer value of a message is stood in for again when refused; a refused stand-in is dropped.
    refuseStandIns = true
    await expect(queue.hold(queue.saveMessage(message(3, 'huge')))).rejects.toBe(refusal)
    await expect(queue.flush()).resolves.toBeUndefined()
    expect((await persister.getMessages(SESSION)).map((m) => m.seq)).toEqual([0, 1, 2])
    // Reported once each: the stand-in's own refusal is not a second loss.
    expect(errors).toEqual([refusal, refusal])
  })

  it('a CONFLICT (the seq is taken already) is not stood in for', async () => {
    const { persister, queue } = await setUp()
    await persister.saveMessage(SESSION, message(0, 'from another process', { id: 'other' }))
    await expect(queue.hold(queue.saveMessage(message(0, 'mine')))).rejects.toMatchObject({
      code: 'CONFLICT',
    })
    expect((await persister.getMessages(SESSION)).map((m) => [m.id, m.content])).toEqual([
      ['other', 'from another process'],
    ])
  })

  it("retract() removes a record that is not durable yet ('uncertain' once an attempt failed), and reports one that is", async () => {
    const { persister, queue } = await setUp({ initialDelayMs: 1000, maxDelayMs: 1000 })
    await queue.saveMessage(message(0, 'kept'))
    expect(await queue.retract(message(0, 'kept'))).toBe('durable')
    persister.failing = () => true
    void queue.saveMessage(message(1, 'lost'))
    // Never attempted: queued behind the failing one.
    void queue.saveMessage(message(2, 'behind'))
    await wait(5)
    expect(await queue.retract(message(2, 'behind'))).toBe('removed')
    // Attempted and failed: a store may have committed it and lost the answer.
    expect(await queue.retract(message(1, 'lost'))).toBe('uncertain')
    persister.failing = () => false
    await queue.flush()
    expect((await persister.getMessages(SESSION)).map((m) => m.content)).toEqual(['kept'])
  })

  it('session metadata moves behind messages queued after it', async () => {
    const { persister, queue } = await setUp()
    const order: string[] = []
    const saveMessage = persister.saveMessage.bind(persister)
    const saveSession = persister.saveSession.bind(persister)
    persister.saveMessage = async (id, value) => {
      order.push(value.id)
      return saveMessage(id, value)
    }
    persister.saveSession = async (value) => {
      order.push(`session:${value.summary}`)
      return saveSession(value)
    }
    void queue.saveMessage(message(0, 'a'))
    void queue.saveSession(session('active'))
    void queue.saveMessage(message(1, 'b'))
    void queue.saveSession(session('idle'))
    await queue.flush()
    expect(order).toEqual(['m0', 'm1', 'session:idle'])
  })

  it("a session record that says 'active' is written where it was queued when a later one does not (a crash then finds the send interrupted)", async () => {
    const { persister, queue } = await setUp()
    const order: string[] = []
    const states: string[] = []
    const saveMessage = persister.saveMessage.bind(persister)
    const saveSession = persister.saveSession.bind(persister)
    persister.saveMessage = async (id, value) => {
      order.push(value.id)
      // The reply's write: the store holds the user message and says the send is active.
      if (value.id === 'm1') states.push((await persister.getSession(SESSION))!.state)
      return saveMessage(id, value)
    }
    persister.saveSession = async (value) => {
      order.push(`session:${value.state}`)
      return saveSession(value)
    }
    const active = queue.saveSession({ ...session('s'), state: 'active' })
    void queue.saveMessage(message(0, 'question'))
    void queue.saveSession({ ...session('s'), state: 'active' })
    void queue.saveMessage(message(1, 'reply', { type: 'agent' }))
    const idle = queue.saveSession(session('s'))
    await Promise.all([active, idle])
    expect(order).toEqual(['session:active', 'm0', 'session:active', 'm1', 'session:idle'])
    expect(states).toEqual(['active'])
    expect((await persister.getSession(SESSION))!.state).toBe('idle')
    expect(queue.idle).toBe(true)
  })

  it('discard() drops what is queued and resolves its waiters', async () => {
    const { persister, queue } = await setUp({ initialDelayMs: 1000, maxDelayMs: 1000 })
    persister.failing = () => true
    const pending = queue.saveMessage(message(0, 'a'))
    await wait(5)
    await queue.discard()
    await pending
    expect(queue.idle).toBe(true)
  })
})

/** mulberry32: a small seeded PRNG, so a failing run can be replayed from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

async function randomRun(seed: number): Promise<void> {
  const next = random(seed)
  const { persister, queue } = await setUp({ initialDelayMs: 0, maxDelayMs: 2, maxAttempts: 2 })
  // Fault schedule: a few windows of consecutive failing calls, plus scattered single failures.
  const windows = Array.from({ length: Math.floor(next() * 4) }, () => {
    const start = Math.floor(next() * 60)
    return [start, start + Math.floor(next() * 25)] as const
  })
  const scattered = next() * 0.3
  const faultyUntil = 200
  persister.failing = (call) =>
    call < faultyUntil && (windows.some(([a, b]) => call >= a && call < b) || next() < scattered)

  // Session metadata describes the messages queued before it: when a session record lands, every
  // message seq that existed when it was queued (its summary says how many) is on disk already.
  const early: string[] = []
  const saveSession = persister.saveSession.bind(persister)
  persister.saveSession = async (value) => {
    await saveSession(value)
    const before = Number(value.summary.split('/')[1] ?? 0)
    const held = (await persister.getMessages(SESSION)).length
    if (held < before) early.push(`${value.summary} landed with ${held} messages`)
  }
  const model = new Map<number, string>()
  let sessionValue = 'start'
  const operations = 10 + Math.floor(next() * 40)
  for (let i = 0; i < operations; i++) {
    const roll = next()
    if (roll < 0.45 || model.size === 0) {
      const seq = model.size
      const value = `v${i}`
      model.set(seq, value)
      void queue.saveMessage(message(seq, value))
    } else if (roll < 0.75) {
      const seq = Math.floor(next() * model.size)
      const value = `v${i}`
      model.set(seq, value)
      void queue.saveMessage(message(seq, value))
    } else if (roll < 0.85) {
      sessionValue = `s${i}/${model.size}`
      void queue.saveSession({ ...session(sessionValue), state: next() < 0.5 ? 'active' : 'idle' })
    } else if (roll < 0.95) {
      await queue.flush().catch(() => undefined)
    } else {
      await wait(Math.floor(next() * 3))
    }
  }
  // The store recovers: everything accepted becomes durable.
  persister.failing = () => false
  await queue.flush()
  const stored = await persister.getMessages(SESSION)
  const context = `seed ${seed}`
  expect(persister.gaps, context).toEqual([])
  expect(early, context).toEqual([])
  expect(
    stored.map((m) => [m.seq, m.content]),
    context,
  ).toEqual([...model.entries()].sort(([a], [b]) => a - b))
  expect((await persister.getSession(SESSION))?.summary, context).toBe(sessionValue)
}

describe('WriteQueue, randomized against a model', () => {
  // AGENTX_WRITE_QUEUE_RUNS raises the number of runs for a long soak; AGENTX_WRITE_QUEUE_SEED replays one.
  const runs = Number(process.env.AGENTX_WRITE_QUEUE_RUNS ?? 150)
  const firstSeed = Number(process.env.AGENTX_WRITE_QUEUE_SEED ?? 20261124)
  it(`final store equals the last value per record, no seq gap is ever visible, no session record lands before the messages queued ahead of it (${runs} runs)`, async () => {
    for (let run = 0; run < runs; run++) await randomRun(firstSeed + run)
  }, 120_000)
})
