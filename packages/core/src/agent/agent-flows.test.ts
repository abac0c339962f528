// The flows of the original sequence diagrams, one named test each, plus the kernel's guarantees.
import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { AgentPersister, SessionData } from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import { AdapterError } from '../errors/adapter-error.js'
import { isAgentError } from '../errors/agent-error.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { SessionBusyError } from '../errors/session-busy-error.js'
import { SessionStateError } from '../errors/session-state-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import type { SessionEvent } from '../session/session-events.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { collect, textTurn, toolCallTurn, usage } from '../testing/stream-helpers.js'
import type { Tool } from '../tools/tool.js'
import { createAgent } from './create-agent.js'
import { DEFAULT_ADAPTER, DEFAULT_PERSISTER, importDefaultPlugin } from './resolve-default-plugins.js'

const fastRetry = { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 1000 }

/** A persister that records calls and can be told to fail. */
class ProbePersister extends InMemoryPersister {
  readonly calls: string[] = []
  failMessageWrites = 0
  alwaysFail = false
  override async getMessages(
    sessionId: string,
    query?: { afterSeq?: number; limit?: number },
  ): Promise<AnyMessage[]> {
    this.calls.push('getMessages')
    return super.getMessages(sessionId, query)
  }
  override async getAllSessions(): Promise<SessionData[]> {
    this.calls.push('getAllSessions')
    return super.getAllSessions()
  }
  override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
    this.calls.push('saveMessage')
    if (this.alwaysFail) throw new Error('disk unplugged')
    if (this.failMessageWrites > 0) {
      this.failMessageWrites -= 1
      throw new PersistenceError('database is locked', { code: 'BUSY' })
    }
    return super.saveMessage(sessionId, message)
  }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('agent initialization', () => {
  it('initialize reads no message and marks sessions found active as interrupted', async () => {
    const persister = new ProbePersister()
    const first = createAgent({}, { adapter: new ScriptedAdapter([textTurn('hi')]), persister })
    const session = await first.createSession()
    await session.send('hello')
    await first.close()
    const crashed = (await persister.getSession(session.id))!
    await persister.saveSession({ ...crashed, state: 'active' })
    persister.calls.length = 0

    const second = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    await second.initialize()
    expect(persister.calls).not.toContain('getMessages')
    expect(persister.calls).not.toContain('getAllSessions')
    expect((await persister.getSession(session.id))!.state).toBe('interrupted')
  })

  it('loads history: stored sessions are listed, and their messages load on first access', async () => {
    const persister = new ProbePersister()
    const first = createAgent(
      {},
      { adapter: new ScriptedAdapter([textTurn('one'), textTurn('two')]), persister },
    )
    const a = await first.createSession()
    await a.send('first')
    const b = await first.createSession()
    await b.send('second')
    await first.close()

    const second = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    await second.initialize()
    persister.calls.length = 0
    const sessions = await second.getSessions()
    expect(sessions.map((s) => s.id)).toEqual([b.id, a.id])
    expect(persister.calls).not.toContain('getMessages')
    const messages = await sessions[1]!.getMessages()
    expect(messages.map((m) => [m.type, m.content])).toEqual([
      ['user', 'first'],
      ['agent', [{ type: 'text', text: 'one' }]],
    ])
    expect(persister.calls).toContain('getMessages')
  })

  it('concurrent initialize() calls share one promise', async () => {
    let repairs = 0
    class CountingPersister extends InMemoryPersister {
      override async markInterrupted(scope?: Parameters<InMemoryPersister['markInterrupted']>[0]) {
        repairs += 1
        return super.markInterrupted(scope)
      }
    }
    const agent = createAgent({}, { adapter: new ScriptedAdapter(), persister: new CountingPersister() })
    await Promise.all([agent.initialize(), agent.initialize(), agent.initialize()])
    // Start-up (which marks sessions a crash left active as interrupted) ran once.
    expect(repairs).toBe(1)
  })

  it('a default plugin that is not installed fails with a ConfigurationError naming the package', async () => {
    const missing = { packageName: '@agentx/not-installed-plugin', factory: 'create', dep: 'deps.persister' }
    const error = await importDefaultPlugin(missing).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ConfigurationError)
    expect((error as Error).message).toBe(
      'The default plugin @agentx/not-installed-plugin is not installed: install @agentx/not-installed-plugin or pass deps.persister.',
    )
    expect(DEFAULT_PERSISTER.packageName).toBe('@agentx/persister-sqlite')
    expect(DEFAULT_ADAPTER.packageName).toBe('@agentx/adapter-claude')
  })

  it('createAgent is synchronous, does no I/O and rejects bad options', () => {
    const persister = new ProbePersister()
    createAgent({ maxSteps: 3 }, { persister })
    expect(persister.calls).toEqual([])
    expect(() => createAgent({ maxSteps: 0 })).toThrow(ConfigurationError)
    expect(() => createAgent({ durability: 'eventually' as 'sync' })).toThrow(ConfigurationError)
  })
})

describe('create empty session', () => {
  it('persists the session before returning it, in state created, with no message', async () => {
    const persister = new InMemoryPersister()
    const agent = createAgent(
      { model: 'model-a', systemPrompt: 'be brief', userId: 'u1', appName: 'app' },
      { adapter: new ScriptedAdapter(), persister },
    )
    const session = await agent.createSession({ metadata: { topic: 'x' } })
    expect(session.state).toBe('created')
    const stored = await persister.getSession(session.id)
    expect(stored).toMatchObject({
      id: session.id,
      state: 'created',
      model: 'model-a',
      systemPrompt: 'be brief',
      userId: 'u1',
      appName: 'app',
      metadata: { topic: 'x' },
      tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    })
    expect(session.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(await session.getMessages()).toEqual([])
  })

  it('100 concurrent createSession calls make 100 distinct persisted sessions', async () => {
    const persister = new InMemoryPersister()
    const agent = createAgent({}, { adapter: new ScriptedAdapter(), persister })
    const sessions = await Promise.all(Array.from({ length: 100 }, () => agent.createSession()))
    expect(new Set(sessions.map((s) => s.id)).size).toBe(100)
    expect((await persister.getAllSessions()).length).toBe(100)
  })
})

describe('send', () => {
  it('persists the user message, streams deltas in order, persists the agent message, saves metadata and usage', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      textTurn('Hello there, friend', { chunkSize: 5, usage: usage(10, 4) }),
    ])
    const agent = createAgent({ model: 'm1', systemPrompt: 'sys' }, { adapter, persister })
    const session = await agent.createSession()
    const events: SessionEvent[] = []
    session.subscribe((event) => events.push(event))
    const result = await session.send('Hi!')
    await session.flush()

    expect(result.text).toBe('Hello there, friend')
    expect(result.stopReason).toBe('end_turn')
    expect(result.usage).toEqual(usage(10, 4))
    expect(events.filter((e) => e.type === 'text-delta').map((e) => (e as { text: string }).text)).toEqual([
      'Hello',
      ' ther',
      'e, fr',
      'iend',
    ])
    expect(events.filter((e) => e.type === 'state').map((e) => (e as { state: string }).state)).toEqual([
      'active',
      'idle',
    ])
    expect(events.at(-1)?.type).toBe('done')

    const stored = await persister.getMessages(session.id)
    expect(stored.map((m) => [m.seq, m.type])).toEqual([
      [0, 'user'],
      [1, 'agent'],
    ])
    expect(stored[0]!.content).toBe('Hi!')
    expect(stored[1]).toMatchObject({
      content: [{ type: 'text', text: 'Hello there, friend' }],
      stopReason: 'end_turn',
      usage: usage(10, 4),
    })
    expect(stored[1]!.incomplete).toBeUndefined()
    expect(result.messages).toEqual(stored)

    const data = (await persister.getSession(session.id))!
    expect(data.state).toBe('idle')
    expect(data.summary).toBe('Hi!')
    expect(data.tokenUsage).toEqual(usage(10, 4))
    expect(session.getTokenUsage()).toEqual(usage(10, 4))
    expect(adapter.calls[0]!.prompt).toBe('Hi!')
    expect(adapter.calls[0]!.options).toMatchObject({ model: 'm1', systemPrompt: 'sys', history: [] })
  })

  it('sends the persisted history on the next turn and accumulates usage across sends', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      textTurn('A', { usage: usage(1, 2) }),
      textTurn('B', { usage: usage(3, 4) }),
    ])
    const agent = createAgent({}, { adapter, persister })
    const session = await agent.createSession()
    await session.send('one')
    await session.send('two')
    await session.flush()
    expect(adapter.calls[1]!.options.history.map((m) => m.content)).toEqual([
      'one',
      [{ type: 'text', text: 'A' }],
    ])
    expect(session.getTokenUsage()).toEqual(usage(4, 6))
    expect((await persister.getSession(session.id))!.tokenUsage).toEqual(usage(4, 6))
  })

  it('keeps the user message when the provider fails', async () => {
    const persister = new InMemoryPersister()
    const failure = new AdapterError('bad request', {
      kind: 'invalid_request',
      provider: 'scripted',
      status: 400,
    })
    const agent = createAgent(
      { retry: fastRetry },
      { adapter: new ScriptedAdapter([{ events: [], error: failure }]), persister },
    )
    const session = await agent.createSession()
    await expect(session.send('keep me')).rejects.toBe(failure)
    await session.flush()
    expect((await persister.getMessages(session.id)).map((m) => m.content)).toEqual(['keep me'])
    expect((await persister.getSession(session.id))!.state).toBe('error')
  })

  it('stream() yields the same events as subscribers receive, ending with done', async () => {
    const agent = createAgent(
      {},
      { adapter: new ScriptedAdapter([textTurn('streamed')]), persister: new InMemoryPersister() },
    )
    const session = await agent.createSession()
    const seen: SessionEvent[] = []
    session.subscribe((event) => seen.push(event))
    const streamed = await collect(session.stream('go'))
    expect(streamed).toEqual(seen)
    expect(streamed.map((e) => e.type)).toEqual([
      'message',
      'state',
      'step-start',
      'text-delta',
      'text-delta',
      'step-finish',
      'message',
      'state',
      'done',
    ])
  })
})

describe('load historical session after restart', () => {
  it('a new agent over the same persister continues the conversation where it stopped', async () => {
    const persister = new InMemoryPersister()
    const first = createAgent(
      {},
      { adapter: new ScriptedAdapter([textTurn('first reply', { usage: usage(5, 5) })]), persister },
    )
    const session = await first.createSession()
    await session.send('before restart')
    await first.close()

    const adapter = new ScriptedAdapter([textTurn('second reply')])
    const second = createAgent({}, { adapter, persister })
    const restored = (await second.getSession(session.id))!
    expect(restored.state).toBe('idle')
    expect(restored.summary).toBe('before restart')
    expect(restored.getTokenUsage()).toEqual(usage(5, 5))
    await restored.send('after restart')
    expect(adapter.calls[0]!.options.history.map((m) => m.seq)).toEqual([0, 1])
    await second.close()
    expect((await persister.getMessages(session.id)).map((m) => [m.seq, m.type])).toEqual([
      [0, 'user'],
      [1, 'agent'],
      [2, 'user'],
      [3, 'agent'],
    ])
  })

  it('an agent scoped to a user or app never sees another scope', async () => {
    const persister = new InMemoryPersister()
    const alice = createAgent({ userId: 'alice' }, { adapter: new ScriptedAdapter(), persister })
    const bob = createAgent({ userId: 'bob' }, { adapter: new ScriptedAdapter(), persister })
    const mine = await alice.createSession()
    expect(await bob.getSession(mine.id)).toBeUndefined()
    expect(await bob.getSessions()).toEqual([])
    expect((await alice.getSessions()).map((s) => s.id)).toEqual([mine.id])
  })
})

describe('delete session', () => {
  it('marks the session deleted, cascades to its messages, and an unknown id is a no-op', async () => {
    const persister = new InMemoryPersister()
    const agent = createAgent({}, { adapter: new ScriptedAdapter([textTurn('x')]), persister })
    const session = await agent.createSession()
    await session.send('hello')
    const states: string[] = []
    session.subscribe((event) => event.type === 'state' && states.push(event.state))
    await agent.deleteSession(session.id)
    expect(session.state).toBe('deleted')
    expect(states).toEqual(['deleted'])
    expect(await persister.getSession(session.id)).toBeNull()
    expect(await persister.getMessages(session.id)).toEqual([])
    expect(await agent.getSession(session.id)).toBeUndefined()
    await expect(agent.deleteSession(session.id)).resolves.toBeUndefined()
    await expect(agent.deleteSession('no-such-id')).resolves.toBeUndefined()
    await expect(session.send('again')).rejects.toBeInstanceOf(SessionStateError)
    await expect(session.getMessages()).rejects.toBeInstanceOf(SessionStateError)
    await expect(session.delete()).rejects.toBeInstanceOf(SessionStateError)
  })
})

describe('chat', () => {
  it('creates a session, sends, and returns the session', async () => {
    const persister = new InMemoryPersister()
    const agent = createAgent(
      {},
      { adapter: new ScriptedAdapter([textTurn('TypeScript is typed JavaScript.')]), persister },
    )
    const session = await agent.chat('What is TypeScript?')
    expect(session.state).toBe('idle')
    await agent.close()
    expect((await persister.getMessages(session.id)).map((m) => m.type)).toEqual(['user', 'agent'])
  })
})

describe('resume with provider session id', () => {
  it('captures the provider session id, sends it as resume, and keeps it across a restart', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      textTurn('one', { sessionId: 'prov-1' }),
      textTurn('two', { sessionId: 'prov-2' }),
    ])
    const agent = createAgent({}, { adapter, persister })
    const session = await agent.createSession()
    await session.send('a')
    expect(session.providerSessionId).toBe('prov-1')
    await session.send('b')
    expect(adapter.calls[0]!.options.resume).toBeUndefined()
    expect(adapter.calls[1]!.options.resume).toBe('prov-1')
    await agent.close()
    expect((await persister.getSession(session.id))!.providerSessionId).toBe('prov-2')

    const next = new ScriptedAdapter([textTurn('three')])
    const restarted = createAgent({}, { adapter: next, persister })
    await (await restarted.getSession(session.id))!.send('c')
    expect(next.calls[0]!.options.resume).toBe('prov-2')
  })
})

describe('error handling', () => {
  it('retries a network error before the first event and then succeeds', async () => {
    const persister = new InMemoryPersister()
    const network = new AdapterError('socket hang up', { kind: 'network', provider: 'scripted' })
    const adapter = new ScriptedAdapter([{ events: [], error: network }, textTurn('recovered')])
    const agent = createAgent({ retry: fastRetry }, { adapter, persister })
    const session = await agent.createSession()
    const retries: SessionEvent[] = []
    session.subscribe((event) => event.type === 'retry' && retries.push(event))
    const result = await session.send('hi')
    expect(result.text).toBe('recovered')
    expect(retries).toHaveLength(1)
    expect(retries[0]).toMatchObject({ type: 'retry', attempt: 1, error: network })
    await session.flush()
    expect((await persister.getMessages(session.id)).map((m) => m.type)).toEqual(['user', 'agent'])
  })

  it('honours retryAfterMs of a 429', async () => {
    const limited = new AdapterError('slow down', {
      kind: 'rate_limit',
      provider: 'scripted',
      status: 429,
      retryAfterMs: 40,
    })
    const adapter = new ScriptedAdapter([{ events: [], error: limited }, textTurn('ok')])
    const agent = createAgent({ retry: fastRetry }, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    const events = await collect(session.stream('hi'))
    expect(events.find((e) => e.type === 'retry')).toMatchObject({ attempt: 1, delayMs: 40 })
    expect(events.at(-1)?.type).toBe('done')
  })

  it('gives up after maxRetries with the last AdapterError itself, and emits retries-exhausted', async () => {
    const errors = [1, 2, 3].map(
      (n) => new AdapterError(`overloaded ${n}`, { kind: 'overloaded', provider: 'scripted', status: 529 }),
    )
    const adapter = new ScriptedAdapter(errors.map((error) => ({ events: [], error })))
    const agent = createAgent({ retry: fastRetry }, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    const types: string[] = []
    session.subscribe((event) => types.push(event.type))
    const error = await session.send('hi').catch((e: unknown) => e)
    expect(error).toBe(errors[2])
    expect(adapter.calls).toHaveLength(3)
    expect(types.filter((t) => t === 'retry')).toHaveLength(2)
    expect(types).toContain('retries-exhausted')
    expect(session.state).toBe('error')
  })

  it('does not retry a 400; state error, nothing lost, and a later send succeeds', async () => {
    const persister = new InMemoryPersister()
    const bad = new AdapterError('invalid', { kind: 'invalid_request', provider: 'scripted', status: 400 })
    const adapter = new ScriptedAdapter([{ events: [], error: bad }, textTurn('fine now')])
    const agent = createAgent({ retry: fastRetry }, { adapter, persister })
    const session = await agent.createSession()
    await expect(session.send('first')).rejects.toMatchObject({
      kind: 'invalid_request',
      retryable: false,
      provider: 'scripted',
    })
    expect(adapter.calls).toHaveLength(1)
    expect(session.state).toBe('error')
    const result = await session.send('second')
    expect(result.text).toBe('fine now')
    await session.flush()
    expect((await persister.getMessages(session.id)).map((m) => [m.type, m.content])).toEqual([
      ['user', 'first'],
      ['user', 'second'],
      ['agent', [{ type: 'text', text: 'fine now' }]],
    ])
  })

  it('never retries after the first event; the partial reply is kept as incomplete', async () => {
    const persister = new InMemoryPersister()
    const cut = new AdapterError('stream cut', { kind: 'network', provider: 'scripted' })
    const adapter = new ScriptedAdapter([{ events: [{ type: 'text-delta', text: 'partial ' }], error: cut }])
    const agent = createAgent({ retry: fastRetry }, { adapter, persister })
    const session = await agent.createSession()
    await expect(session.send('hi')).rejects.toBe(cut)
    expect(adapter.calls).toHaveLength(1)
    await session.flush()
    const stored = await persister.getMessages(session.id)
    expect(stored[1]).toMatchObject({
      type: 'agent',
      incomplete: true,
      stopReason: 'error',
      content: [{ type: 'text', text: 'partial ' }],
    })
  })
})

describe('abort', () => {
  it('keeps the partial reply as incomplete, rejects with kind aborted, and accepts the next send', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      { events: textTurn('one two three four five six', { chunkSize: 4 }), delayMs: 15 },
      textTurn('next'),
    ])
    const agent = createAgent({}, { adapter, persister })
    const session = await agent.createSession()
    session.subscribe((event) => {
      if (event.type === 'text-delta' && event.text === 'two ') session.abort()
    })
    const error = await session.send('go').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AdapterError)
    expect(error).toMatchObject({ kind: 'aborted' })
    expect(session.state).toBe('aborted')
    expect(adapter.calls[0]!.options.signal?.aborted).toBe(true)
    await session.flush()
    const stored = await persister.getMessages(session.id)
    expect(stored[1]).toMatchObject({
      type: 'agent',
      incomplete: true,
      stopReason: 'aborted',
      content: [{ type: 'text', text: 'one two ' }],
    })
    expect((await session.send('again')).text).toBe('next')
  })

  it('an AbortSignal in send options aborts too; stream() emits state aborted and ends', async () => {
    const adapter = new ScriptedAdapter([{ events: textTurn('a b c d e f'), delayMs: 20 }])
    const agent = createAgent({}, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    const controller = new AbortController()
    const events: SessionEvent[] = []
    for await (const event of session.stream('go', { signal: controller.signal })) {
      events.push(event)
      if (event.type === 'text-delta') controller.abort()
    }
    expect(events.at(-1)).toEqual({ type: 'state', state: 'aborted', previous: 'active' })
  })

  it('a partial reply with an unanswered tool call is replayed without that tool call', async () => {
    const adapter = new ScriptedAdapter([
      {
        events: [
          { type: 'text-delta', text: 'Let me look' },
          { type: 'tool-call', id: 't1', name: 'clock', input: {} },
        ],
        waitForAbort: true,
      },
      textTurn('fresh start'),
    ])
    const persister = new InMemoryPersister()
    const agent = createAgent({}, { adapter, persister })
    const session = await agent.createSession()
    session.subscribe((event) => event.type === 'tool-call' && session.abort())
    await expect(session.send('first')).rejects.toMatchObject({ kind: 'aborted' })
    await session.send('second')
    const replayed = adapter.calls[1]!.options.history
    expect(replayed.map((m) => m.content)).toEqual(['first', [{ type: 'text', text: 'Let me look' }]])
    await session.flush()
    const stored = await persister.getMessages(session.id)
    expect(stored[1]).toMatchObject({ incomplete: true, stopReason: 'aborted' })
    expect(stored[1]!.content).toEqual([
      { type: 'text', text: 'Let me look' },
      { type: 'tool_use', id: 't1', name: 'clock', input: {} },
    ])
  })

  it('aborts promptly even when the adapter ignores the signal', async () => {
    const stuck = {
      getName: () => 'stuck',
      async *stream() {
        yield { type: 'text-delta' as const, text: 'x' }
        await new Promise(() => undefined)
      },
    }
    const agent = createAgent({}, { adapter: stuck, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    session.subscribe((event) => event.type === 'text-delta' && session.abort())
    await expect(session.send('go')).rejects.toMatchObject({ kind: 'aborted' })
  })
})

describe('close', () => {
  it('aborts a running send, keeps its partial reply, flushes, and rejects later calls', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      { events: [{ type: 'text-delta', text: 'half a rep' }], waitForAbort: true },
    ])
    const agent = createAgent({}, { adapter, persister })
    const session = await agent.createSession()
    const streaming = new Promise<void>((resolve) => {
      session.subscribe((event) => event.type === 'text-delta' && resolve())
    })
    const sent = session.send('long question').catch((e: unknown) => e)
    // Once the reply streams (not after a fixed time, which a loaded machine may not reach).
    await streaming
    await agent.close()
    expect(await sent).toMatchObject({ kind: 'aborted' })
    const stored = await persister.getMessages(session.id)
    expect(stored.map((m) => [m.type, m.incomplete])).toEqual([
      ['user', undefined],
      ['agent', true],
    ])
    expect((await persister.getSession(session.id))!.state).toBe('aborted')
    await expect(agent.createSession()).rejects.toMatchObject({ code: 'AGENT_CLOSED' })
    await expect(agent.close()).resolves.toBeUndefined()
  })
})

describe('concurrency', () => {
  it('a second send while active rejects with SessionBusyError and writes nothing', async () => {
    const persister = new ProbePersister()
    const agent = createAgent(
      {},
      { adapter: new ScriptedAdapter([{ events: textTurn('slow'), delayMs: 10 }]), persister },
    )
    const session = await agent.createSession()
    const first = session.send('one')
    const second = session.send('two')
    const error = await second.catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SessionBusyError)
    expect((error as SessionBusyError).code).toBe('SESSION_BUSY')
    await first
    await session.flush()
    expect((await persister.getMessages(session.id)).map((m) => m.content)).toEqual([
      'one',
      [{ type: 'text', text: 'slow' }],
    ])
    const third = session.stream('three')
    await expect(collect(session.stream('four'))).rejects.toBeInstanceOf(SessionBusyError)
    await collect(third).catch(() => undefined)
  })

  it('two adapters side by side in one process keep their sessions apart', async () => {
    const persister = new InMemoryPersister()
    const claude = new ScriptedAdapter([textTurn('from claude')], { name: 'claude' })
    const openai = new ScriptedAdapter([textTurn('from openai')], { name: 'openai' })
    const a = createAgent({ appName: 'a' }, { adapter: claude, persister })
    const b = createAgent({ appName: 'b' }, { adapter: openai, persister })
    const [sa, sb] = await Promise.all([a.createSession(), b.createSession()])
    const [ra, rb] = await Promise.all([sa.send('hi a'), sb.send('hi b')])
    expect([ra.text, rb.text]).toEqual(['from claude', 'from openai'])
    expect(claude.calls.map((c) => c.prompt)).toEqual(['hi a'])
    expect(openai.calls.map((c) => c.prompt)).toEqual(['hi b'])
  })
})

describe('persistence failures', () => {
  it('a persister that fails twice then succeeds loses nothing', async () => {
    const persister = new ProbePersister()
    const agent = createAgent({}, { adapter: new ScriptedAdapter([textTurn('reply')]), persister })
    const session = await agent.createSession()
    persister.failMessageWrites = 2
    await session.send('hello')
    await session.flush()
    expect((await persister.getMessages(session.id)).map((m) => m.type)).toEqual(['user', 'agent'])
  })

  it('a persister that always fails makes flush() reject, emits persist-error, and leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason)
    }
    process.on('unhandledRejection', onUnhandled)
    try {
      const persister = new ProbePersister()
      const agent = createAgent(
        { writeRetry: { maxDelayMs: 20 } },
        { adapter: new ScriptedAdapter([textTurn('reply')]), persister },
      )
      const session = await agent.createSession()
      persister.alwaysFail = true
      const errors: SessionEvent[] = []
      session.subscribe((event) => event.type === 'persist-error' && errors.push(event))
      const result = await session.send('hello')
      expect(result.text).toBe('reply')
      const error = await session.flush().catch((e: unknown) => e)
      expect(isAgentError(error)).toBe(true)
      expect((error as PersistenceError).message).toContain('disk unplugged')
      expect(errors.length).toBeGreaterThan(0)
      await expect(agent.close()).rejects.toBeDefined()
      // Nothing is dropped: the writes stay queued and land in the background once the store works again.
      persister.alwaysFail = false
      for (let i = 0; i < 100 && (await persister.getMessages(session.id)).length < 2; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      expect((await persister.getMessages(session.id)).map((m) => m.type)).toEqual(['user', 'agent'])
      await new Promise((resolve) => setTimeout(resolve, 20))
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })

  it("with durability 'sync' everything is durable when send resolves", async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    class SlowPersister extends InMemoryPersister {
      override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
        await gate
        return super.saveMessage(sessionId, message)
      }
    }
    const persister = new SlowPersister()
    const agent = createAgent(
      { durability: 'sync' },
      { adapter: new ScriptedAdapter([textTurn('ok')]), persister },
    )
    const session = await agent.createSession()
    let resolved = false
    const sent = session.send('x').then(() => {
      resolved = true
    })
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(resolved).toBe(false)
    release()
    await sent
    expect((await persister.getMessages(session.id)).map((m) => m.type)).toEqual(['user', 'agent'])
  })

  it('checkpoints a long streaming reply as an incomplete agent message under its final id', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      { events: textTurn('word '.repeat(12), { chunkSize: 5 }), delayMs: 10 },
    ])
    const agent = createAgent({ checkpointIntervalMs: 25 }, { adapter, persister })
    const session = await agent.createSession()
    const snapshots: AnyMessage[] = []
    session.subscribe(async (event) => {
      if (event.type === 'text-delta') {
        const stored = await persister.getMessages(session.id)
        if (stored[1]) snapshots.push(stored[1])
      }
    })
    await session.send('talk')
    await session.flush()
    const final = (await persister.getMessages(session.id))[1]!
    expect(snapshots.length).toBeGreaterThan(0)
    expect(snapshots.every((m) => m.incomplete === true && m.id === final.id && m.seq === final.seq)).toBe(
      true,
    )
    expect(final.incomplete).toBeUndefined()
    expect(final.content).toEqual([{ type: 'text', text: 'word '.repeat(12) }])
  })
})

describe('tool loop', () => {
  const clock: Tool<{ zone: string }> = {
    name: 'clock',
    description: 'Current time',
    inputSchema: { type: 'object', properties: { zone: { type: 'string' } } },
    execute: async (input) => `12:00 ${input.zone}`,
  }
  const weather: Tool = {
    name: 'weather',
    description: 'Weather',
    inputSchema: { type: 'object' },
    execute: async () => ({ sky: 'clear', celsius: 21 }),
  }
  const broken: Tool = {
    name: 'broken',
    description: 'Always fails',
    inputSchema: { type: 'object' },
    execute: () => {
      throw new Error('tool exploded')
    },
  }

  it('runs parallel tool calls, turns a throwing tool into an isError result, and loops back to the model', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      toolCallTurn([
        { id: 't1', name: 'clock', input: { zone: 'UTC' } },
        { id: 't2', name: 'weather', input: {} },
        { id: 't3', name: 'broken', input: {} },
      ]),
      textTurn('It is noon and clear.'),
    ])
    const agent = createAgent({ tools: [clock, weather] }, { adapter, persister })
    const session = await agent.createSession({ tools: [broken] })
    const events: SessionEvent[] = []
    session.subscribe((event) => events.push(event))
    const result = await session.send('time and weather?')
    await session.flush()

    expect(result.text).toBe('It is noon and clear.')
    expect(adapter.calls[0]!.options.tools?.map((t) => t.name).sort()).toEqual(['broken', 'clock', 'weather'])
    const stored = await persister.getMessages(session.id)
    expect(stored.map((m) => m.type)).toEqual(['user', 'agent', 'tool', 'agent'])
    expect(stored[2]!.content).toEqual([
      { type: 'tool_result', toolUseId: 't1', content: [{ type: 'text', text: '12:00 UTC' }] },
      {
        type: 'tool_result',
        toolUseId: 't2',
        content: [{ type: 'text', text: '{"sky":"clear","celsius":21}' }],
      },
      {
        type: 'tool_result',
        toolUseId: 't3',
        content: [{ type: 'text', text: 'tool exploded' }],
        isError: true,
      },
    ])
    expect(adapter.calls[1]!.prompt).toEqual(stored[2]!.content)
    expect(adapter.calls[1]!.options.history.map((m) => m.type)).toEqual(['user', 'agent'])
    expect(events.filter((e) => e.type === 'tool-call')).toHaveLength(3)
    expect(
      events
        .filter((e) => e.type === 'tool-result')
        .find((e) => (e as { toolUseId: string }).toolUseId === 't3'),
    ).toMatchObject({ isError: true })
    expect(result.messages.map((m) => m.type)).toEqual(['user', 'agent', 'tool', 'agent'])
  })

  it('runs tools in parallel, not one after another', async () => {
    const started: string[] = []
    let releaseAll!: () => void
    const bothStarted = new Promise<void>((resolve) => {
      releaseAll = resolve
    })
    const slow = (name: string): Tool => ({
      name,
      description: name,
      inputSchema: { type: 'object' },
      execute: async () => {
        started.push(name)
        if (started.length === 2) releaseAll()
        await bothStarted
        return name
      },
    })
    const adapter = new ScriptedAdapter([
      toolCallTurn([
        { id: 'a', name: 'a', input: {} },
        { id: 'b', name: 'b', input: {} },
      ]),
      textTurn('done'),
    ])
    const agent = createAgent(
      { tools: [slow('a'), slow('b')] },
      { adapter, persister: new InMemoryPersister() },
    )
    const result = await (await agent.createSession()).send('go')
    expect(result.text).toBe('done')
    expect(started.sort()).toEqual(['a', 'b'])
  })

  it('maxSteps stops the loop', async () => {
    const adapter = new ScriptedAdapter(
      Array.from({ length: 5 }, (_, i) =>
        toolCallTurn([{ id: `c${i}`, name: 'clock', input: { zone: 'UTC' } }]),
      ),
    )
    const persister = new InMemoryPersister()
    const agent = createAgent({ tools: [clock], maxSteps: 2 }, { adapter, persister })
    const session = await agent.createSession()
    const result = await session.send('loop')
    expect(adapter.calls).toHaveLength(2)
    expect(result.stopReason).toBe('tool_use')
    await session.flush()
    expect((await persister.getMessages(session.id)).map((m) => m.type)).toEqual([
      'user',
      'agent',
      'tool',
      'agent',
      'tool',
    ])
  })
})

describe('package', () => {
  it('@agentx/core has no runtime dependencies', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      dependencies?: Record<string, string>
      peerDependencies?: Record<string, string>
    }
    expect(manifest.dependencies ?? {}).toEqual({})
    expect(manifest.peerDependencies ?? {}).toEqual({})
  })
})

// Keep the persister type referenced for readers of this file.
export type { AgentPersister }
