import { describe, expect, it, vi } from 'vitest'
import type { AdapterMessage, AgentAdapter } from '../contracts/agent-adapter.js'
import type { AnyMessage } from '../contracts/messages.js'
import { createAgent } from '../agent/create-agent.js'
import { SessionManager } from '../agent/session-manager.js'
import { AdapterError } from '../errors/adapter-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn, toolCallTurn, usage } from '../testing/stream-helpers.js'
import { DefaultSessionFactory } from './default-session-factory.js'
import { DEFAULT_RETRY } from '../retry/retry-options.js'

/** An adapter that streams `chunks` one-character deltas and counts how many were pulled. */
function countingAdapter(chunks: number, pauseEvery = 0): AgentAdapter & { pulled: number } {
  const adapter = {
    pulled: 0,
    getName: () => 'counting',
    async *stream(): AsyncIterable<AdapterMessage> {
      for (let i = 0; i < chunks; i++) {
        adapter.pulled += 1
        if (pauseEvery > 0 && i % pauseEvery === 0) await new Promise((resolve) => setTimeout(resolve, 1))
        yield { type: 'text-delta', text: 'x' }
      }
      yield { type: 'message', content: [{ type: 'text', text: 'x'.repeat(chunks) }], stopReason: 'end_turn' }
    },
  }
  return adapter
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('stream() backpressure', () => {
  it('a consumer that stops reading holds the model stream back at a bounded buffer', async () => {
    const adapter = countingAdapter(50_000)
    const agent = createAgent({}, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    const iterator = session.stream('go')[Symbol.asyncIterator]()
    await iterator.next()
    await wait(50)
    // Far less than the reply: the kernel waits for its consumer instead of buffering everything.
    expect(adapter.pulled).toBeLessThan(2_000)
    let events = 1
    for (;;) {
      const next = await iterator.next()
      if (next.done) break
      events += 1
    }
    expect(adapter.pulled).toBe(50_000)
    expect(events).toBeGreaterThan(50_000)
    await agent.close()
  })

  it('checkpoints keep their schedule while the consumer lags', async () => {
    const persister = new InMemoryPersister()
    const adapter = countingAdapter(5_000, 500)
    const agent = createAgent({ checkpointIntervalMs: 10 }, { adapter, persister })
    const session = await agent.createSession()
    const iterator = session.stream('go')[Symbol.asyncIterator]()
    await iterator.next()
    await wait(80)
    // The consumer has read one event; the partial reply streamed so far is already stored.
    const stored = await persister.getMessages(session.id)
    const partial = stored.find((m) => m.type === 'agent')
    expect(partial?.incomplete).toBe(true)
    expect(JSON.stringify(partial?.content)).toContain('xxxx')
    await iterator.return?.()
    await session.flush()
    await agent.close()
  })

  it('breaking out of the loop aborts the send and keeps the partial reply', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([{ events: textTurn('a b c d e f', { chunkSize: 1 }), delayMs: 2 }])
    const agent = createAgent({}, { adapter, persister })
    const session = await agent.createSession()
    for await (const event of session.stream('go')) if (event.type === 'text-delta') break
    await session.flush()
    expect(session.state).toBe('aborted')
    const stored = await persister.getMessages(session.id)
    expect(stored.map((m) => [m.type, m.incomplete])).toEqual([
      ['user', undefined],
      ['agent', true],
    ])
    await agent.close()
  })
})

describe('getMessages(query)', () => {
  async function sessionWith(count: number) {
    const persister = new InMemoryPersister()
    const agent = createAgent(
      {},
      { adapter: new ScriptedAdapter(Array.from({ length: count }, (_, i) => textTurn(`r${i}`))), persister },
    )
    const session = await agent.createSession()
    for (let i = 0; i < count; i++) await session.send(`q${i}`)
    return { agent, session, persister }
  }

  it('pages backward from the latest and forward from a seq, always in seq order', async () => {
    const { agent, session } = await sessionWith(10)
    const seqs = (messages: AnyMessage[]) => messages.map((m) => m.seq)
    expect(seqs(await session.getMessages())).toEqual([...Array(20).keys()])
    expect(seqs(await session.getMessages({ limit: 3 }))).toEqual([17, 18, 19])
    expect(seqs(await session.getMessages({ limit: 3, beforeSeq: 5 }))).toEqual([2, 3, 4])
    expect(seqs(await session.getMessages({ limit: 10, beforeSeq: 2 }))).toEqual([0, 1])
    expect(seqs(await session.getMessages({ afterSeq: 15 }))).toEqual([16, 17, 18, 19])
    expect(seqs(await session.getMessages({ afterSeq: 3, limit: 2 }))).toEqual([4, 5])
    expect(await session.getMessages({ limit: 0 })).toEqual([])
    await agent.close()
  })

  it('a page of a session not yet loaded reads only that page from the store', async () => {
    const { agent, session, persister } = await sessionWith(30)
    await agent.close()
    const reads: Array<Record<string, unknown> | undefined> = []
    const getMessages = persister.getMessages.bind(persister)
    persister.getMessages = async (id, query) => {
      reads.push(query as Record<string, unknown> | undefined)
      return getMessages(id, query)
    }
    const reopened = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    const again = (await reopened.getSession(session.id))!
    expect((await again.getMessages({ limit: 3 })).map((m) => m.seq)).toEqual([57, 58, 59])
    expect((await again.getMessages({ limit: 2, beforeSeq: 10 })).map((m) => m.seq)).toEqual([8, 9])
    expect((await again.getMessages({ afterSeq: 55, limit: 2 })).map((m) => m.seq)).toEqual([56, 57])
    expect(reads).toEqual([
      { beforeSeq: Number.MAX_SAFE_INTEGER, limit: 3 },
      { beforeSeq: 10, limit: 2 },
      { afterSeq: 55, limit: 2 },
    ])
    await reopened.close()
  })

  it('rejects a bad query with ValidationError', async () => {
    const { agent, session } = await sessionWith(1)
    for (const query of [{ limit: -1 }, { beforeSeq: 1.5 }, { after: 2 }, 'all']) {
      await expect(session.getMessages(query as never)).rejects.toMatchObject({ code: 'VALIDATION' })
    }
    await agent.close()
  })

  it('returns immutable messages: the kernel shares them without copies, and nobody can change its history', async () => {
    const { agent, session } = await sessionWith(1)
    const [first] = await session.getMessages()
    expect(Object.isFrozen(first)).toBe(true)
    expect(() => {
      ;(first as { content: unknown }).content = 'changed'
    }).toThrow(TypeError)
    expect((await session.getMessages())[0]!.content).toBe('q0')
    await agent.close()
  })
})

describe('agent.close()', () => {
  it('lets go of every session it holds', async () => {
    const persister = new InMemoryPersister()
    await persister.saveSession({
      id: 'stored',
      summary: '',
      createdAt: new Date().toISOString(),
      lastActivity: new Date().toISOString(),
      state: 'idle',
      tokenUsage: usage(0, 0),
    })
    const manager = new SessionManager({
      adapter: new ScriptedAdapter([textTurn('hi')]),
      persister,
      factory: new DefaultSessionFactory(),
      runtime: {
        model: 'm',
        tools: [],
        maxSteps: 20,
        retry: DEFAULT_RETRY,
        durability: 'async',
        checkpointIntervalMs: 250,
      },
    })
    const created = await manager.createSession()
    await created.send('hello')
    await manager.getSession('stored')
    expect(manager.size).toBe(2)
    await manager.releaseAll()
    expect(manager.size).toBe(0)
    expect((await persister.getMessages(created.id)).length).toBe(2)
  })
})

describe('step events and agent.subscribe', () => {
  it('each model request is framed by step-start and step-finish, and the agent hears every session', async () => {
    const adapter = new ScriptedAdapter([
      [
        { type: 'tool-call', id: 't1', name: 'echo', input: { x: 1 } },
        {
          type: 'message',
          content: [{ type: 'tool_use', id: 't1', name: 'echo', input: { x: 1 } }],
          stopReason: 'tool_use',
        },
        { type: 'usage', usage: usage(3, 1) },
      ],
      textTurn('done', { usage: usage(5, 2) }),
      { events: [], error: new Error('boom') },
    ])
    const agent = createAgent(
      {
        model: 'm1',
        retry: { maxRetries: 0 },
        tools: [
          { name: 'echo', description: 'echo', inputSchema: { type: 'object' }, execute: (input) => input },
        ],
      },
      { adapter, persister: new InMemoryPersister() },
    )
    const heard: Array<[string, string]> = []
    const stop = agent.subscribe((event, session) => heard.push([session.id, event.type]))
    const session = await agent.createSession()
    const events: unknown[] = []
    session.subscribe((event) => {
      if (event.type === 'step-start' || event.type === 'step-finish') events.push(event)
    })
    await session.send('go')
    expect(events).toEqual([
      { type: 'step-start', step: 1, agent: 'default', model: 'm1', provider: 'scripted' },
      { type: 'step-finish', step: 1, usage: usage(3, 1), stopReason: 'tool_use' },
      { type: 'step-start', step: 2, agent: 'default', model: 'm1', provider: 'scripted' },
      { type: 'step-finish', step: 2, usage: usage(5, 2), stopReason: 'end_turn' },
    ])
    await expect(session.send('again')).rejects.toThrow('boom')
    expect(events.slice(4)).toEqual([
      { type: 'step-start', step: 1, agent: 'default', model: 'm1', provider: 'scripted' },
      { type: 'step-finish', step: 1, stopReason: 'error' },
    ])
    expect(heard.every(([id]) => id === session.id)).toBe(true)
    expect(heard.map(([, type]) => type)).toContain('done')
    expect(heard.map(([, type]) => type)).toContain('error')
    const count = heard.length
    stop()
    await session.flush()
    const other = await agent.createSession()
    await other.send('x').catch(() => undefined)
    expect(heard.length).toBe(count)
    await agent.close()
  })
  it('a listener that changes the tool-call, tool-result and step-finish events it is shown changes nothing stored', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      // The adapter's final message shares the input object of its tool-call event.
      toolCallTurn([{ id: 't1', name: 'echo', input: { secret: 'abc' } }]),
      textTurn('done', { usage: usage(9, 2) }),
      [
        { type: 'tool-call', id: 't2', name: 'echo', input: { bad: () => 1 } },
        { type: 'message', content: [], stopReason: 'tool_use' },
      ],
    ])
    const tools = [
      {
        name: 'echo',
        description: 'echo',
        inputSchema: { type: 'object' },
        execute: () => [{ type: 'text' as const, text: 'the secret is abc' }],
      },
    ]
    const agent = createAgent({ tools, retry: { maxRetries: 0 } }, { adapter, persister })
    const session = await agent.createSession()
    const threw: string[] = []
    session.subscribe((event) => {
      try {
        // A listener that redacts what it shows.
        if (event.type === 'tool-call') (event.input as { secret: string }).secret = 'REDACTED'
        if (event.type === 'tool-result') (event.content as Array<{ text: string }>)[0]!.text = 'REDACTED'
        if (event.type === 'step-finish' && event.usage) event.usage.inputTokens = 0
      } catch (error) {
        threw.push(`${event.type}: ${(error as Error).constructor.name}`)
      }
    })
    await session.send('go')
    await session.flush()
    const stored = await persister.getMessages(session.id)
    expect(stored.map((message) => message.content)).toEqual([
      'go',
      [{ type: 'tool_use', id: 't1', name: 'echo', input: { secret: 'abc' } }],
      [{ type: 'tool_result', toolUseId: 't1', content: [{ type: 'text', text: 'the secret is abc' }] }],
      [{ type: 'text', text: 'done' }],
    ])
    expect(adapter.calls[1]!.options.history![1]!.content).toEqual(stored[1]!.content)
    // The result the tool message stores is frozen before it is shown.
    expect(threw).toEqual(['tool-call: TypeError', 'tool-result: TypeError', 'step-finish: TypeError'])
    expect(stored[3]!.usage).toEqual(usage(9, 2))
    // Input JSON cannot hold is the adapter's malformed output, not a failed write later.
    const failed = await session.send('again').catch((error: unknown) => error)
    expect(failed).toMatchObject({ code: 'ADAPTER_UNKNOWN' })
    expect((failed as Error).message).toMatch(/tool-call event's input\.bad is a function/)
    await agent.close()
  })

  it('a response that fails or is aborted after reporting usage keeps it: on its stored reply and its step-finish', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      {
        events: [
          { type: 'usage', usage: usage(40, 0) },
          { type: 'text-delta', text: 'half a rep' },
          { type: 'usage', usage: usage(0, 3) },
        ],
        error: new AdapterError('connection reset', {
          kind: 'network',
          provider: 'scripted',
          retryable: true,
        }),
      },
      {
        events: [
          { type: 'usage', usage: usage(7, 1) },
          { type: 'text-delta', text: 'stop me' },
        ],
        waitForAbort: true,
      },
    ])
    const agent = createAgent({}, { adapter, persister })
    const session = await agent.createSession()
    const finished: unknown[] = []
    session.subscribe((event) => {
      if (event.type === 'step-finish') finished.push(event)
      if (event.type === 'text-delta' && event.text === 'stop me') session.abort()
    })
    await expect(session.send('hi')).rejects.toThrow('connection reset')
    await session.send('again').catch(() => undefined)
    expect(finished).toEqual([
      { type: 'step-finish', step: 1, usage: usage(40, 3), stopReason: 'error' },
      { type: 'step-finish', step: 1, usage: usage(7, 1), stopReason: 'aborted' },
    ])
    await session.flush()
    const stored = await persister.getMessages(session.id)
    const replies = stored.filter((message) => message.type === 'agent')
    expect(replies.map((message) => [message.stopReason, message.incomplete, message.usage])).toEqual([
      ['error', true, usage(40, 3)],
      ['aborted', true, usage(7, 1)],
    ])
    // The session's usage is the sum of its messages' usage.
    expect((await persister.getSession(session.id))!.tokenUsage).toEqual(usage(47, 4))
    await agent.close()
  })
})

describe('stream() left on the last events of a failed send', () => {
  it('the send stays failed (state error, its error stored), not turned into an abort', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      {
        events: [{ type: 'text-delta', text: 'half a rep' }],
        error: new AdapterError('connection reset', {
          kind: 'network',
          provider: 'scripted',
          retryable: true,
        }),
      },
    ])
    const agent = createAgent({}, { adapter, persister })
    const session = await agent.createSession()
    for await (const event of session.stream('hi')) {
      // The partial reply is shown as the send fails: a consumer may stop reading here.
      if (event.type === 'message' && event.message.type === 'agent') break
    }
    await vi.waitFor(() => expect(session.state).not.toBe('active'))
    // Before, leaving the loop here aborted a send that had already failed: state `aborted`.
    expect(session.state).toBe('error')
    await session.flush()
    expect((await persister.getSession(session.id))!.state).toBe('error')
    await agent.close()
  })
})
