// session.fork() (DESIGN §10.2): every rule as a named test, each reading what was stored.
import { describe, expect, it } from 'vitest'
import { createAgent } from '../agent/create-agent.js'
import type { AgentPersister, SessionData } from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import { AdapterError } from '../errors/adapter-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { SessionBusyError } from '../errors/session-busy-error.js'
import { SessionStateError } from '../errors/session-state-error.js'
import { ValidationError } from '../errors/validation-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter, type ScriptedTurn } from '../testing/scripted-adapter.js'
import { textTurn, toolCallTurn, usage } from '../testing/stream-helpers.js'
import type { Tool } from '../tools/tool.js'
import type { AdapterMessage } from '../contracts/agent-adapter.js'

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** Records how many `saveMessage` calls are in flight at once, and can fail writes. */
class CountingPersister extends InMemoryPersister {
  inFlight = 0
  maxInFlight = 0
  messageWrites = 0
  /** Message writes that throw this error (and decrement); `Infinity` fails them all. */
  failMessages = 0
  failWith: () => Error = () => new PersistenceError('disk full', { code: 'PERSISTENCE', retryable: false })
  override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
    this.messageWrites++
    this.inFlight++
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight)
    try {
      // Stay in flight until the next macrotask, so writes issued later than this tick do not overlap.
      await new Promise((resolve) => setImmediate(resolve))
      if (this.failMessages > 0) {
        this.failMessages--
        throw this.failWith()
      }
      return await super.saveMessage(sessionId, message)
    } finally {
      this.inFlight--
    }
  }
}

async function conversation(
  turns: Array<AdapterMessage[] | ScriptedTurn>,
  sends: string[],
  tools: Tool[] = [],
) {
  const persister = new CountingPersister()
  const adapter = new ScriptedAdapter(turns)
  const agent = createAgent({ durability: 'sync', tools }, { adapter, persister })
  const session = await agent.createSession({ summary: 'Trip', metadata: { topic: 'travel' } })
  for (const content of sends) await session.send(content)
  return { persister, adapter, agent, session }
}

const stripIds = (messages: AnyMessage[]) => messages.map(({ id, sessionId, ...rest }) => rest)

describe('session.fork()', () => {
  it('copies every message into a new session: new ids, same seqs, same content; forkedFrom names the last seq', async () => {
    const { persister, agent, session } = await conversation(
      [textTurn('Rome!', { usage: usage(10, 2) }), textTurn('Paris!', { usage: usage(20, 3) })],
      ['Where to?', 'And then?'],
    )
    const fork = await session.fork()

    expect(fork.id).not.toBe(session.id)
    expect(fork.id).toMatch(UUID_V7)
    const stored = (await persister.getSession(fork.id))!
    expect(stored.forkedFrom).toEqual({ sessionId: session.id, seq: 3 })
    expect(stored.summary).toBe('Trip')
    expect(stored.metadata).toEqual({ topic: 'travel' })
    expect(stored.state).toBe('idle')
    // The fork spent nothing yet: usage starts from zero (the copied messages keep theirs).
    expect(stored.tokenUsage).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 })

    const source = await persister.getMessages(session.id)
    const copies = await persister.getMessages(fork.id)
    expect(copies.map((m) => m.seq)).toEqual([0, 1, 2, 3])
    expect(stripIds(copies)).toEqual(stripIds(source))
    for (const [index, copy] of copies.entries()) {
      expect(copy.sessionId).toBe(fork.id)
      expect(copy.id).toMatch(UUID_V7)
      expect(copy.id).not.toBe(source[index]!.id)
    }
    // The source is untouched.
    expect((await persister.getMessages(session.id)).map((m) => m.id)).toEqual(source.map((m) => m.id))
    expect((await persister.getSession(session.id))!.forkedFrom).toBeUndefined()
    expect(await agent.getSession(fork.id)).toBe(fork)
  })

  it('copies up to throughSeq only', async () => {
    const { persister, session } = await conversation([textTurn('one'), textTurn('two')], ['first', 'second'])
    const fork = await session.fork({ throughSeq: 1, summary: 'What if', metadata: { branch: 'b' } })

    const copies = await persister.getMessages(fork.id)
    expect(copies.map((m) => [m.seq, m.type])).toEqual([
      [0, 'user'],
      [1, 'agent'],
    ])
    const stored = (await persister.getSession(fork.id))!
    expect(stored.forkedFrom).toEqual({ sessionId: session.id, seq: 1 })
    expect(stored.summary).toBe('What if')
    expect(stored.metadata).toEqual({ branch: 'b' })
    expect(await fork.getMessages()).toEqual(copies)
  })

  it('does not copy the provider session id, and the fork resumes nothing', async () => {
    const { persister, adapter, session } = await conversation(
      [textTurn('hi', { sessionId: 'provider-1' }), textTurn('fork reply')],
      ['hello'],
    )
    expect((await persister.getSession(session.id))!.providerSessionId).toBe('provider-1')
    const fork = await session.fork()
    expect((await persister.getSession(fork.id))!.providerSessionId).toBeUndefined()
    expect(fork.providerSessionId).toBeUndefined()

    await fork.send('again')
    const request = adapter.calls[1]!
    expect(request.options.resume).toBeUndefined()
    expect(request.options.history.map((m) => m.content)).toEqual(['hello', [{ type: 'text', text: 'hi' }]])
  })

  it('writes the copies together (all in flight at once), not one write after another', async () => {
    const turns = Array.from({ length: 25 }, (_, i) => textTurn(`reply ${i}`))
    const { persister, session } = await conversation(
      turns,
      turns.map((_, i) => `message ${i}`),
    )
    persister.maxInFlight = 0
    persister.messageWrites = 0
    const fork = await session.fork()
    expect(persister.messageWrites).toBe(50)
    expect(persister.maxInFlight).toBe(50)
    expect(await persister.getMessages(fork.id)).toHaveLength(50)
  })

  it('a fork whose write fails is removed again and rejects; the source is unchanged', async () => {
    const { persister, agent, session } = await conversation([textTurn('one')], ['first'])
    persister.failMessages = Number.POSITIVE_INFINITY
    const before = (await persister.getAllSessions()).map((s) => s.id)

    const error = await session.fork().catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(PersistenceError)
    expect((await persister.getAllSessions()).map((s) => s.id)).toEqual(before)
    expect(await agent.getSessions()).toHaveLength(1)
    expect(await persister.getMessages(session.id)).toHaveLength(2)
  })

  it('a transient write failure is retried and the fork is complete', async () => {
    const { persister, session } = await conversation([textTurn('one')], ['first'])
    persister.failMessages = 1
    persister.failWith = () => new PersistenceError('database is locked', { code: 'BUSY' })
    const fork = await session.fork()
    expect((await persister.getMessages(fork.id)).map((m) => m.seq)).toEqual([0, 1])
  })

  it('rejects with SessionBusyError while a send runs, writing nothing', async () => {
    const { persister, session } = await conversation(
      [textTurn('one'), { events: textTurn('slow'), delayMs: 100 }],
      ['first'],
    )
    const running = session.send('second')
    await expect(session.fork()).rejects.toBeInstanceOf(SessionBusyError)
    await running
    expect(await persister.getAllSessions()).toHaveLength(1)
  })

  it('rejects invalid options and a throughSeq that names no message with ValidationError, writing nothing', async () => {
    const { persister, session } = await conversation([textTurn('one')], ['first'])
    for (const options of [
      { throughSeq: -1 },
      { throughSeq: 1.5 },
      { throughSeq: '1' },
      { throughSeq: 2 },
      { summary: 5 },
      { metadata: [] },
      { through: 1 },
      'all',
    ]) {
      await expect(session.fork(options as never)).rejects.toBeInstanceOf(ValidationError)
    }
    expect(await persister.getAllSessions()).toHaveLength(1)
  })

  it('a session with no messages cannot be forked (SessionStateError); a deleted one neither', async () => {
    const { persister, agent } = await conversation([], [])
    const empty = await agent.createSession()
    await expect(empty.fork()).rejects.toBeInstanceOf(SessionStateError)
    await empty.delete()
    await expect(empty.fork()).rejects.toBeInstanceOf(SessionStateError)
    expect(await persister.getAllSessions()).toHaveLength(1)
  })

  it('a fork ending in a batch that waits for approval is waiting_input, and is answered independently of its source', async () => {
    const log: string[] = []
    const transfer: Tool<{ amount: number }> = {
      name: 'transfer',
      description: 'Moves money',
      inputSchema: { type: 'object' },
      needsApproval: true,
      execute: (input) => {
        log.push(`sent ${input.amount}`)
        return `sent ${input.amount}`
      },
    }
    const { persister, adapter, agent, session } = await conversation(
      [
        toolCallTurn([{ id: 't1', name: 'transfer', input: { amount: 5 } }]),
        textTurn('Done.'),
        textTurn('Cancelled.'),
      ],
      ['pay Bob 5'],
      [transfer],
    )
    expect(session.state).toBe('waiting_input')
    const fork = await session.fork()
    expect(fork.state).toBe('waiting_input')
    expect((await persister.getSession(fork.id))!.state).toBe('waiting_input')
    expect(await fork.getPending()).toEqual([
      { toolUseId: 't1', name: 'transfer', input: { amount: 5 }, kind: 'approval', sessionId: fork.id },
    ])

    await session.send([{ type: 'tool_approval', toolUseId: 't1', approved: true }])
    await fork.send([{ type: 'tool_approval', toolUseId: 't1', approved: false, reason: 'no' }])
    expect(log).toEqual(['sent 5'])
    const forkResult = (await persister.getMessages(fork.id))[2]!
    expect(forkResult.type).toBe('tool')
    expect(JSON.stringify(forkResult.content)).toContain('The user denied this tool call: no')
    const sourceResult = (await persister.getMessages(session.id))[2]!
    expect(JSON.stringify(sourceResult.content)).toContain('sent 5')
    expect(adapter.calls).toHaveLength(3)
    // A restarted agent sees the fork and its stored answer.
    const restarted = createAgent({ tools: [transfer] }, { adapter: new ScriptedAdapter([]), persister })
    const reloaded = (await restarted.getSession(fork.id))!
    expect(reloaded.state).toBe('idle')
    expect((await reloaded.getMessages()).map((m) => m.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    await agent.close()
  })

  it('a fork through a tool call whose results came later is idle; the next send closes the call as not run', async () => {
    const lookup: Tool = {
      name: 'lookup',
      description: 'Reads',
      inputSchema: { type: 'object' },
      execute: () => 'found',
    }
    const { persister, session } = await conversation(
      [toolCallTurn([{ id: 'c1', name: 'lookup', input: {} }]), textTurn('It is found.'), textTurn('Okay.')],
      ['look it up'],
      [lookup],
    )
    const fork = await session.fork({ throughSeq: 1 })
    expect(fork.state).toBe('idle')
    await fork.send('never mind')
    const types = (await persister.getMessages(fork.id)).map((m) => m.type)
    expect(types).toEqual(['user', 'agent', 'tool', 'user', 'agent'])
  })

  it('a whole-conversation fork of a failed session keeps its state, so retry() works in the fork', async () => {
    const failure = new AdapterError('bad request', { kind: 'invalid_request', provider: 'scripted' })
    const { persister, agent } = await conversation([], [])
    const adapter = new ScriptedAdapter([{ events: [], error: failure }, textTurn('second try')])
    const failing = createAgent({ retry: { maxRetries: 0 } }, { adapter, persister })
    const session = await failing.createSession()
    await expect(session.send('hello')).rejects.toBe(failure)
    expect(session.state).toBe('error')

    const fork = await session.fork()
    expect((await persister.getSession(fork.id))!.state).toBe('error')
    const result = await fork.retry()
    expect(result.text).toBe('second try')
    expect((await persister.getMessages(fork.id)).map((m) => m.type)).toEqual(['user', 'agent'])
    expect(session.state).toBe('error')
    await agent.close()
  })

  it('keeps the tools the source session was created with', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      textTurn('a'),
      toolCallTurn([{ id: 'x', name: 'echo', input: {} }]),
      textTurn('b'),
    ])
    const agent = createAgent({}, { adapter, persister })
    const echo: Tool = {
      name: 'echo',
      description: 'Echoes',
      inputSchema: { type: 'object' },
      execute: () => 'echoed',
    }
    const session = await agent.createSession({ tools: [echo] })
    await session.send('hi')
    const fork = await session.fork()
    await fork.send('use the tool')
    expect(adapter.calls[1]!.options.tools?.map((tool) => tool.name)).toEqual(['echo'])
    const tool = (await persister.getMessages(fork.id))[4]!
    expect(tool.type).toBe('tool')
    expect(JSON.stringify(tool.content)).toContain('echoed')
  })

  it('a fork and its source go separate ways: sending in one does not change the other', async () => {
    const { persister, session } = await conversation(
      [textTurn('one'), textTurn('source two'), textTurn('fork two')],
      ['first'],
    )
    const fork = await session.fork()
    await session.send('source second')
    await fork.send('fork second')
    const texts = async (id: string) => (await persister.getMessages(id)).map((m) => m.content)
    expect(await texts(session.id)).toEqual([
      'first',
      [{ type: 'text', text: 'one' }],
      'source second',
      [{ type: 'text', text: 'source two' }],
    ])
    expect(await texts(fork.id)).toEqual([
      'first',
      [{ type: 'text', text: 'one' }],
      'fork second',
      [{ type: 'text', text: 'fork two' }],
    ])
  })

  it('copies the messages of an unloaded session from the store, and survives a restart', async () => {
    const { persister, session } = await conversation([textTurn('one')], ['first'])
    const restarted = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    const reopened = (await restarted.getSession(session.id))!
    const fork = await reopened.fork()
    await restarted.close()

    const again = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    const stored = (await again.getSession(fork.id))!
    expect((await stored.getMessages()).map((m) => m.content)).toEqual([
      'first',
      [{ type: 'text', text: 'one' }],
    ])
    const data: SessionData = (await persister.getSession(fork.id))!
    expect(data.forkedFrom).toEqual({ sessionId: session.id, seq: 1 })
  })

  it('takes in what another process appended before copying (with leases)', async () => {
    const persister = new InMemoryPersister()
    const first = createAgent(
      { durability: 'sync' },
      { adapter: new ScriptedAdapter([textTurn('one')]), persister },
    )
    const second = createAgent(
      { durability: 'sync' },
      { adapter: new ScriptedAdapter([textTurn('two')]), persister },
    )
    const mine = await first.createSession()
    await mine.send('first')
    const theirs = (await second.getSession(mine.id))!
    await theirs.send('second')

    const fork = await mine.fork()
    expect((await persister.getMessages(fork.id)).map((m) => m.seq)).toEqual([0, 1, 2, 3])
    expect((await persister.getSession(fork.id))!.forkedFrom).toEqual({ sessionId: mine.id, seq: 3 })
  })

  it('a send that starts while a fork reads the store is not disturbed (with leases)', async () => {
    const persister = new InMemoryPersister()
    const first = createAgent(
      { durability: 'sync' },
      { adapter: new ScriptedAdapter([textTurn('one'), textTurn('three')]), persister },
    )
    const second = createAgent(
      { durability: 'sync' },
      { adapter: new ScriptedAdapter([textTurn('two')]), persister },
    )
    const mine = await first.createSession()
    await mine.send('first')
    await (await second.getSession(mine.id))!.send('second')

    const forking = mine.fork()
    const sending = mine.send('third')
    const [fork] = await Promise.all([forking, sending])
    const seqs = (await mine.getMessages()).map((m) => m.seq)
    expect(seqs).toEqual([0, 1, 2, 3, 4, 5])
    expect((await persister.getMessages(mine.id)).map((m) => m.content)).toEqual([
      'first',
      [{ type: 'text', text: 'one' }],
      'second',
      [{ type: 'text', text: 'two' }],
      'third',
      [{ type: 'text', text: 'three' }],
    ])
    // The fork is a consistent prefix of what was stored when it read.
    const copied = (await persister.getMessages(fork.id)).map((m) => m.seq)
    expect(copied).toEqual(Array.from({ length: copied.length }, (_, i) => i))
    expect(copied.length).toBeGreaterThanOrEqual(4)
  })

  it('a session made without a persister forks in memory', async () => {
    const persister: AgentPersister | undefined = undefined
    const { BaseSession } = await import('./base-session.js')
    const session = new BaseSession({
      data: {
        id: 's1',
        summary: '',
        createdAt: new Date().toISOString(),
        lastActivity: new Date().toISOString(),
        state: 'created',
        tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      },
      adapter: new ScriptedAdapter([textTurn('hi')]),
      options: {
        model: 'm',
        tools: [],
        maxSteps: 20,
        retry: { maxRetries: 0, initialDelayMs: 1, maxDelayMs: 1 },
        durability: 'async',
        checkpointIntervalMs: 250,
      },
      ...(persister === undefined ? {} : { persister }),
    })
    await session.send('hello')
    const fork = await session.fork()
    expect(fork).toBeInstanceOf(BaseSession)
    expect((await fork.getMessages()).map((m) => [m.seq, m.sessionId])).toEqual([
      [0, fork.id],
      [1, fork.id],
    ])
  })
})
