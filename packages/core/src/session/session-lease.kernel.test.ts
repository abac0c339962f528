// Several agents (standing in for processes) on one store: the kernel side of leases (DESIGN
// §10.6) and retention (§10.7). The persister packages run the same scenarios with real processes.
import { describe, expect, it } from 'vitest'
import { createAgent } from '../agent/create-agent.js'
import type { AdapterMessage, AgentAdapter } from '../contracts/agent-adapter.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn, usage } from '../testing/stream-helpers.js'

const replies = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => textTurn(`${prefix}${i}`))

/**
 * An adapter whose one reply stops after its first event until the test calls `release()`: the
 * send is surely running in between, however slow the machine (no race against a timer).
 */
function heldReply(text: string): { adapter: AgentAdapter; streaming: Promise<void>; release: () => void } {
  let release!: () => void
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  let started!: () => void
  const streaming = new Promise<void>((resolve) => {
    started = resolve
  })
  const events: AdapterMessage[] = textTurn(text, { chunkSize: 4 })
  const adapter: AgentAdapter = {
    specificationVersion: 'v1',
    getName: () => 'held',
    async *stream() {
      yield events[0]!
      started()
      await released
      yield* events.slice(1)
    },
  }
  return { adapter, streaming, release }
}

/** A store whose clock only moves when the test says so: leases run out exactly when told. */
function manualClock(): { persister: InMemoryPersister; advance: (ms: number) => void } {
  let now = Date.now()
  return { persister: new InMemoryPersister({ now: () => now }), advance: (ms) => (now += ms) }
}

describe('leases: several agents on one store', () => {
  it('a send of a session held by another agent rejects with SessionBusyError and writes nothing', async () => {
    const persister = new InMemoryPersister()
    const held = heldReply('slow')
    const first = createAgent({}, { adapter: held.adapter, persister })
    const second = createAgent({}, { adapter: new ScriptedAdapter(replies('b', 1)), persister })
    const session = await first.createSession()
    const running = session.send('from the first')
    await held.streaming
    const other = (await second.getSession(session.id))!
    await expect(other.send('from the second')).rejects.toMatchObject({
      code: 'SESSION_BUSY',
      // Not "wait for the current send to finish or abort it": nothing runs in this process.
      message: expect.stringMatching(/held by another process/),
    })
    expect(other.state).not.toBe('error')
    held.release()
    await running
    await first.close()
    expect((await persister.getMessages(session.id)).map((m) => m.content)).toEqual([
      'from the first',
      [{ type: 'text', text: 'slow' }],
    ])
    await second.close()
  })

  it('update(), complete() and fork() from another agent while a send runs are refused, never written and then overwritten', async () => {
    const persister = new InMemoryPersister()
    const held = heldReply('slow')
    const first = createAgent({}, { adapter: held.adapter, persister })
    const second = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    const session = await first.createSession({ summary: 'original', metadata: { v: 0 } })
    const other = (await second.getSession(session.id))!
    const running = session.send('from the first')
    await held.streaming
    await expect(other.update({ summary: 'renamed', metadata: { v: 1 } })).rejects.toMatchObject({
      code: 'SESSION_BUSY',
    })
    await expect(other.complete()).rejects.toMatchObject({ code: 'SESSION_BUSY' })
    // A fork would copy the running reply's half-written checkpoint into an idle session.
    await expect(other.fork()).rejects.toMatchObject({ code: 'SESSION_BUSY' })
    held.release()
    await running
    await session.flush()
    expect(await persister.getSession(session.id)).toMatchObject({
      summary: 'original',
      metadata: { v: 0 },
      state: 'idle',
    })
    // Once the send is over, both apply to what the store holds, and the lease is let go again.
    await other.update({ metadata: { v: 2 } })
    await other.complete()
    expect(await persister.getSession(session.id)).toMatchObject({ metadata: { v: 2 }, state: 'completed' })
    const fork = await other.fork()
    expect((await fork.getMessages()).map((message) => [message.type, message.incomplete])).toEqual([
      ['user', undefined],
      ['agent', undefined],
    ])
    expect(await persister.claimSession(session.id, 'someone else', 1000)).toBe(true)
    await first.close()
    await second.close()
  })

  it('alternating sends from two agents lose nothing: each takes in what the other appended', async () => {
    for (const durability of ['async', 'sync'] as const) {
      const persister = new InMemoryPersister()
      const a = createAgent({ durability }, { adapter: new ScriptedAdapter(replies('a', 5)), persister })
      const bAdapter = new ScriptedAdapter(replies('b', 5))
      const b = createAgent({ durability }, { adapter: bAdapter, persister })
      const created = await a.createSession()
      const sessionA = created
      const sessionB = (await b.getSession(created.id))!
      await sessionB.getMessages() // loaded before the other agent writes: it must catch up later
      for (let i = 0; i < 5; i++) {
        await sessionA.send(`a says ${i}`)
        await sessionB.send(`b says ${i}`)
      }
      await a.close()
      await b.close()
      const stored = await persister.getMessages(created.id)
      expect(
        stored.map((m) => m.seq),
        durability,
      ).toEqual([...Array(20).keys()])
      expect(
        stored.filter((m) => m.type === 'user').map((m) => m.content),
        durability,
      ).toEqual([
        'a says 0',
        'b says 0',
        'a says 1',
        'b says 1',
        'a says 2',
        'b says 2',
        'a says 3',
        'b says 3',
        'a says 4',
        'b says 4',
      ])
      // The second agent's model saw the first agent's exchanges too.
      expect(bAdapter.calls.at(-1)!.options.history).toHaveLength(18)
    }
  })

  it('initialize() in a second agent leaves a live send of the first alone, and interrupts one whose lease expired', async () => {
    const persister = new InMemoryPersister()
    const held = heldReply('still going')
    const first = createAgent({ leaseTtlMs: 2_000 }, { adapter: held.adapter, persister })
    const session = await first.createSession()
    const running = session.send('long task')
    await held.streaming
    const second = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    await second.initialize()
    expect((await persister.getSession(session.id))?.state).toBe('active')
    held.release()
    await running
    await first.close()
    expect((await persister.getSession(session.id))?.state).toBe('idle')
    await second.close()

    // A process that died mid-send: its session stays active with a lease nobody renews.
    const crashed = new InMemoryPersister()
    const now = new Date().toISOString()
    await crashed.saveSession({
      id: 'orphan',
      summary: '',
      createdAt: now,
      lastActivity: now,
      state: 'active',
      tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    })
    expect(await crashed.claimSession('orphan', 'dead-process', 30)).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 40))
    const third = createAgent({}, { adapter: new ScriptedAdapter([]), persister: crashed })
    await third.initialize()
    expect((await crashed.getSession('orphan'))?.state).toBe('interrupted')
    await third.close()
  })
})

describe('retention', () => {
  it('agent.pruneSessions deletes old sessions of its scope with their messages and returns the count', async () => {
    const persister = new InMemoryPersister()
    const old = new Date(Date.now() - 10 * 86_400_000).toISOString()
    for (const [id, userId] of [
      ['old-mine', 'u1'],
      ['old-other', 'u2'],
    ] as const) {
      await persister.saveSession({
        id,
        summary: '',
        createdAt: old,
        lastActivity: old,
        state: 'idle',
        userId,
        tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      })
      await persister.saveMessage(id, {
        id: `${id}-m`,
        sessionId: id,
        seq: 0,
        type: 'user',
        content: 'x',
        timestamp: old,
      })
    }
    const agent = createAgent({ userId: 'u1' }, { adapter: new ScriptedAdapter(replies('r', 1)), persister })
    const fresh = await agent.createSession()
    await fresh.send('recent')
    expect(await agent.pruneSessions({ inactiveForMs: 86_400_000 })).toBe(1)
    expect(await persister.getSession('old-mine')).toBeNull()
    expect(await persister.getMessages('old-mine')).toEqual([])
    expect(await persister.getSession('old-other')).not.toBeNull()
    expect(await persister.getSession(fresh.id)).not.toBeNull()
    await expect(agent.pruneSessions({} as never)).rejects.toMatchObject({ code: 'VALIDATION' })
    await agent.close()
  })

  it('AgentConfig.retention prunes on initialize() and on its timer', async () => {
    const persister = new InMemoryPersister()
    const stale = (id: string) =>
      persister.saveSession({
        id,
        summary: '',
        createdAt: new Date(0).toISOString(),
        lastActivity: new Date(0).toISOString(),
        state: 'idle',
        tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      })
    await stale('s1')
    const agent = createAgent(
      { retention: { inactiveForMs: 1000, intervalMs: 20 } },
      { adapter: new ScriptedAdapter([]), persister },
    )
    await agent.initialize()
    for (let i = 0; i < 50 && (await persister.getSession('s1')) !== null; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    expect(await persister.getSession('s1')).toBeNull()
    await stale('s2')
    for (let i = 0; i < 50 && (await persister.getSession('s2')) !== null; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    expect(await persister.getSession('s2')).toBeNull()
    await agent.close()
    expect(() => createAgent({ retention: { intervalMs: 5 } } as never)).toThrow(/inactiveForMs/)
  })
})

describe('deleting a session', () => {
  it('stops renewing the lease it claimed to delete it (the lease went with the record)', async () => {
    const warnings: string[] = []
    const logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: (message: string) => warnings.push(message),
      error: (message: string) => warnings.push(message),
    }
    const persister = new InMemoryPersister()
    const agent = createAgent(
      { leaseTtlMs: 30 },
      { adapter: new ScriptedAdapter([textTurn('hi')]), persister, logger },
    )
    const idle = await agent.createSession()
    await idle.send('hello')
    await agent.deleteSession(idle.id)
    await new Promise((resolve) => setTimeout(resolve, 150))
    // Before, a renewal every 10 ms failed for good: "renewing a session lease failed; retrying".
    expect(warnings).toEqual([])
    await agent.close()
  })
})

describe('listing what another agent changed', () => {
  it('getSessions() and getSession() show the store: another agent sent, and a dead send was swept', async () => {
    const persister = new InMemoryPersister()
    const first = createAgent(
      {},
      { adapter: new ScriptedAdapter([textTurn('hello from the first')]), persister },
    )
    const second = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    const session = await first.createSession()
    // The second agent holds the session object (a listing caches it).
    expect((await second.getSessions()).map((s) => s.state)).toEqual(['created'])
    await session.send('hi')
    await session.flush()
    // Before, both still said `created` with no summary until the second agent sent in it.
    expect((await second.getSessions()).map((s) => [s.state, s.summary])).toEqual([['idle', 'hi']])
    expect((await second.getSession(session.id))!.state).toBe('idle')
    await first.close()
    await second.close()
  })
  it('getMessages() of a held session shows what another agent appended once a listing showed its activity, without a send of its own', async () => {
    const persister = new InMemoryPersister()
    const reply = (text: string) => textTurn(text, { usage: usage(3, 2) })
    const first = createAgent({}, { adapter: new ScriptedAdapter([reply('first 0')]), persister })
    const second = createAgent(
      {},
      { adapter: new ScriptedAdapter([reply('second 0'), reply('second 1')]), persister },
    )
    const session = await first.createSession()
    await session.send('one')
    await session.flush()
    const held = (await second.getSession(session.id))!
    expect(await held.getMessages()).toHaveLength(2)
    await held.send('two')
    await held.send('three')
    await held.flush()
    // The first agent's listing shows the record as stored (usage, last activity)...
    expect((await first.getSessions())[0]!.getTokenUsage().totalTokens).toBe(
      session.getTokenUsage().totalTokens,
    )
    // ...and before, its object still served its 2 cached messages until its own next send.
    expect((await session.getMessages()).map((m) => m.seq)).toEqual([0, 1, 2, 3, 4, 5])
    expect((await session.getMessages({ limit: 2 })).map((m) => m.content)).toEqual([
      'three',
      [{ type: 'text', text: 'second 1' }],
    ])
    await first.close()
    await second.close()
  })
})

describe('retention across agents on one store', () => {
  it('pruneSessions of another agent never deletes a session a send runs in, whatever the states asked', async () => {
    const persister = new InMemoryPersister()
    const held = heldReply('a slow reply')
    const runner = createAgent({ durability: 'sync' }, { adapter: held.adapter, persister })
    const pruner = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    const session = await runner.createSession()
    const running = session.send('keep me')
    await held.streaming
    const future = new Date(Date.now() + 60_000)
    // Before, the default states deleted it (it was still `idle` in the store) and the send wrote
    // an empty session back.
    expect(await pruner.pruneSessions({ before: future })).toBe(0)
    expect(await pruner.pruneSessions({ before: future, states: ['active', 'idle'] })).toBe(0)
    held.release()
    const result = await running
    expect(result.text).toBe('a slow reply')
    expect((await persister.getMessages(session.id)).map((m) => m.type)).toEqual(['user', 'agent'])
    // Once the send has ended and released its lease, the session may go.
    expect(await pruner.pruneSessions({ before: future })).toBe(1)
    await runner.close()
    await pruner.close()
  })
})

describe('a session deleted from the store while a send runs in it', () => {
  for (const durability of ['sync', 'async'] as const) {
    it(`${durability}: the send rejects with SessionStateError (deleted) and nothing of it is written back`, async () => {
      const persister = new InMemoryPersister()
      const held = heldReply('a long reply that streams in several checkpointed pieces')
      const agent = createAgent(
        { durability, checkpointIntervalMs: 10 },
        { adapter: held.adapter, persister },
      )
      const session = await agent.createSession()
      const unhandled: unknown[] = []
      const onUnhandled = (reason: unknown) => unhandled.push(reason)
      process.on('unhandledRejection', onUnhandled)
      try {
        const sent = session.send('hi').then(
          () => 'resolved',
          (error: unknown) => error,
        )
        await held.streaming
        // Deleted in the store behind the agent's back (a tool, another process without leases).
        await persister.deleteSession(session.id)
        // The reply is still held: the next checkpoint write finds the session gone and stops the send.
        // Before: async resolved and wrote an empty session back; sync rejected with NOT_FOUND and
        // wrote the session back in state `error`.
        expect(await sent).toMatchObject({ name: 'SessionStateError', state: 'deleted' })
        held.release()
        expect(session.state).toBe('deleted')
        await agent.close()
        expect(await persister.getSession(session.id)).toBeNull()
        expect(await persister.getMessages(session.id).catch(() => [])).toEqual([])
        await new Promise((resolve) => setTimeout(resolve, 20))
        expect(unhandled).toEqual([])
      } finally {
        process.off('unhandledRejection', onUnhandled)
      }
    })
  }
})

describe('deleting across agents on one store', () => {
  it('a session deleted by another agent is deleted here too: send, update, complete and fork write nothing back', async () => {
    const persister = new InMemoryPersister()
    const first = createAgent({}, { adapter: new ScriptedAdapter(replies('a', 4)), persister })
    const second = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    const calls: Array<[string, (s: Awaited<ReturnType<typeof first.createSession>>) => Promise<unknown>]> = [
      ['send', (s) => s.send('again')],
      ['update', (s) => s.update({ summary: 'renamed' })],
      ['complete', (s) => s.complete()],
      ['fork', (s) => s.fork()],
    ]
    for (const [what, call] of calls) {
      const session = await first.createSession()
      await session.send('hello')
      await session.flush()
      const states: string[] = []
      first.subscribe((event, source) => {
        if (source.id === session.id && event.type === 'state') states.push(event.state)
      })
      await second.deleteSession(session.id)
      const failure = await call(session).catch((error: unknown) => error)
      expect(failure, what).toMatchObject({ code: 'SESSION_STATE', state: 'deleted' })
      expect((failure as Error).message, what).toMatch(/deleted by another process/)
      // Nothing came back: no record (before, a failed send stored it again in state 'error').
      expect(await persister.getSession(session.id), what).toBeNull()
      expect(await persister.getMessages(session.id), what).toEqual([])
      expect(session.state, what).toBe('deleted')
      expect(states, what).toEqual(['deleted'])
      expect(await first.getSession(session.id), what).toBeUndefined()
      await expect(session.send('once more'), what).rejects.toMatchObject({ code: 'SESSION_STATE' })
      expect(await persister.getAllSessions(), what).toEqual([])
    }
    await first.close()
    await second.close()
  })

  it('delete() of a session another agent is sending in is refused with SessionBusyError and deletes nothing', async () => {
    const persister = new InMemoryPersister()
    const first = createAgent(
      {},
      { adapter: new ScriptedAdapter([{ events: textTurn('slow reply'), delayMs: 30 }]), persister },
    )
    const second = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    const session = await first.createSession()
    const running = session.send('from the first')
    await new Promise((resolve) => setTimeout(resolve, 5))
    const other = (await second.getSession(session.id))!
    await expect(other.delete()).rejects.toMatchObject({ code: 'SESSION_BUSY' })
    await expect(second.deleteSession(session.id)).rejects.toMatchObject({ code: 'SESSION_BUSY' })
    expect(other.state).not.toBe('deleted')
    // The refused delete let go of nothing: the object still writes (its update lands once free).
    const renamed = other.update({ metadata: { kept: true } }).catch((error: unknown) => error)
    expect((await running).text).toBe('slow reply')
    await session.flush()
    expect((await persister.getMessages(session.id)).map((m) => m.type)).toEqual(['user', 'agent'])
    await renamed
    await other.update({ metadata: { kept: true } })
    expect((await persister.getSession(session.id))?.metadata).toEqual({ kept: true })
    // Once the send is over the delete goes through, and the first agent finds it gone.
    await second.deleteSession(session.id)
    expect(await persister.getSession(session.id)).toBeNull()
    await expect(session.send('again')).rejects.toMatchObject({ code: 'SESSION_STATE', state: 'deleted' })
    expect(await persister.getSession(session.id)).toBeNull()
    await first.close()
    await second.close()
  })
})

describe('a send of a process that died while its lease was still live', () => {
  /**
   * The store a killed process leaves: `active`, the user message, a partial reply, its lease
   * running until `expire()` moves the store's clock past it.
   */
  async function killedMidReply() {
    const ttlMs = 60_000
    const { persister, advance } = manualClock()
    const crashed = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    const session = await crashed.createSession()
    const id = session.id
    await crashed.close()
    const now = new Date().toISOString()
    const stored = (await persister.getSession(id))!
    await persister.saveMessage(id, {
      id: `${id}-u`,
      sessionId: id,
      seq: 0,
      type: 'user',
      content: 'tell me',
      timestamp: now,
    })
    await persister.saveMessage(id, {
      id: `${id}-a`,
      sessionId: id,
      seq: 1,
      type: 'agent',
      content: [{ type: 'text', text: 'Once upon' }],
      timestamp: now,
      incomplete: true,
    })
    await persister.saveSession({ ...stored, state: 'active', lastActivity: now })
    expect(await persister.claimSession(id, 'the killed process', ttlMs)).toBe(true)
    return { persister, id, expire: () => advance(ttlMs + 1) }
  }

  it('is left alone while the lease runs, and retry() continues it once the lease has expired', async () => {
    const { persister, id, expire } = await killedMidReply()
    const agent = createAgent(
      {},
      { adapter: new ScriptedAdapter([textTurn('Once upon a time.')]), persister },
    )
    await agent.initialize()
    const session = (await agent.getSession(id))!
    // DESIGN §10.6: initialize() touches no session whose lease is live.
    expect(session.state).toBe('active')
    await expect(session.retry()).rejects.toMatchObject({ code: 'SESSION_BUSY' })
    expire()
    const states: string[] = []
    session.subscribe((event) => {
      if (event.type === 'state') states.push(`${event.previous}>${event.state}`)
    })
    // Before, retry() refused the session for good ('active'), although nothing ran it any more.
    const result = await session.retry()
    expect(result.text).toBe('Once upon a time.')
    expect(states).toEqual(['interrupted>active', 'active>idle'])
    await session.flush()
    expect((await persister.getMessages(id)).map((m) => [m.type, m.incomplete ?? false])).toEqual([
      ['user', false],
      ['agent', true],
      ['agent', false],
    ])
    await agent.close()
  })

  it('is marked `interrupted` in the store once its lease has run out, by an agent that started while it was live', async () => {
    const { persister, id, expire } = await killedMidReply()
    const sweeps: number[] = []
    const counting = new Proxy(persister, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver)
        if (typeof value !== 'function') return value
        if (property !== 'markInterrupted') return value.bind(target)
        return async (...args: unknown[]) => {
          const marked = await value.apply(target, args)
          sweeps.push(marked)
          return marked
        }
      },
    })
    const agent = createAgent({ leaseTtlMs: 60 }, { adapter: new ScriptedAdapter([]), persister: counting })
    await agent.initialize()
    expect((await persister.getSession(id))!.state).toBe('active')
    const held = (await agent.getSession(id))!
    expect(held.state).toBe('active')
    const events: string[] = []
    agent.subscribe((event, session) => {
      if (event.type === 'state') events.push(`${session.id}:${event.previous}>${event.state}`)
    })
    // Sweeps while the lease is live leave it alone.
    await waitFor(async () => sweeps.length >= 2)
    expect((await persister.getSession(id))!.state).toBe('active')
    expire()
    // Before, it stayed `active` until someone retried it or another agent started.
    await waitFor(async () => (await persister.getSession(id))!.state === 'interrupted')
    // The object this agent holds shows it too, with its `state` event.
    await waitFor(async () => held.state === 'interrupted')
    expect(events).toEqual([`${id}:active>interrupted`])
    const listed = await agent.getSessions()
    expect(listed.map((data) => [data.id, data.state])).toEqual([[id, 'interrupted']])
    expect(await persister.getMessages(id)).toHaveLength(2)
    await agent.close()
    const after = sweeps.length
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(sweeps.length).toBe(after)
  })

  it('never marks a live send of another agent whose lease is renewed', async () => {
    const persister = new InMemoryPersister()
    // Each event of the reply comes 150 ms apart: the send outlasts several lease lengths and sweeps
    // (a lease of 300 ms, renewed every 100 ms: only a stall of the event loop over 200 ms could lose it).
    const runner = createAgent(
      { leaseTtlMs: 300 },
      {
        adapter: new ScriptedAdapter([
          { events: textTurn('slow and steady', { chunkSize: 3 }), delayMs: 150 },
        ]),
        persister,
      },
    )
    const watcher = createAgent({ leaseTtlMs: 300 }, { adapter: new ScriptedAdapter([]), persister })
    const session = await runner.createSession()
    const seen = new Set<string>()
    const running = session.send('go')
    await watcher.initialize()
    let done = false
    const poll = (async () => {
      while (!done) {
        seen.add((await persister.getSession(session.id))!.state)
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
    })()
    await running
    done = true
    await poll
    expect(seen.has('interrupted')).toBe(false)
    await runner.close()
    expect((await persister.getSession(session.id))!.state).toBe('idle')
    await watcher.close()
  })

  it('a new send after the lease expired starts from `interrupted`, and retry() of one that another process finished is refused', async () => {
    const { persister, id, expire } = await killedMidReply()
    const agent = createAgent({}, { adapter: new ScriptedAdapter([textTurn('fresh')]), persister })
    await agent.initialize()
    const session = (await agent.getSession(id))!
    expire()
    const states: string[] = []
    session.subscribe((event) => {
      if (event.type === 'state') states.push(`${event.previous}>${event.state}`)
    })
    await session.send('something else')
    expect(states).toEqual(['interrupted>active', 'active>idle'])

    const other = await killedMidReply()
    const second = createAgent({}, { adapter: new ScriptedAdapter([]), persister: other.persister })
    const stale = (await second.getSession(other.id))!
    expect(stale.state).toBe('active')
    // Another process finished it meanwhile: retry() sees the stored state after claiming, and refuses.
    const stored = (await other.persister.getSession(other.id))!
    await other.persister.saveSession({ ...stored, state: 'idle' })
    other.expire()
    await expect(stale.retry()).rejects.toMatchObject({ name: 'SessionStateError' })
    expect(await other.persister.getMessages(other.id)).toHaveLength(2)
    await agent.close()
    await second.close()
  })
})

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the condition')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
