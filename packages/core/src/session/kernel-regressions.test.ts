// Regression tests for what was observed when the kernel met storage faults and bad input (issue
// "Kernel v2"). Each test injects the fault and then reads the store directly.
import { describe, expect, it } from 'vitest'
import type { AnyMessage } from '../contracts/messages.js'
import type { SessionData } from '../contracts/agent-persister.js'
import { AdapterError } from '../errors/adapter-error.js'
import { isAgentError } from '../errors/agent-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { createAgent } from '../agent/create-agent.js'
import type { SessionEvent } from './session-events.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn, toolCallTurn } from '../testing/stream-helpers.js'

/**
 * A store that can be switched off (every write fails with a retryable error, like a full disk or a
 * lost connection), and that checks after every successful message write that the session's seqs
 * on disk are 0…n-1 with no gap.
 */
class OutagePersister extends InMemoryPersister {
  down = false
  readonly gaps: string[] = []
  messageWrites = 0
  override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
    if (this.down) throw new PersistenceError('disk full', { code: 'PERSISTENCE' })
    await super.saveMessage(sessionId, message)
    this.messageWrites += 1
    const seqs = (await super.getMessages(sessionId)).map((m) => m.seq)
    if (seqs.some((seq, index) => seq !== index)) this.gaps.push(seqs.join(','))
  }
  override async saveSession(session: SessionData): Promise<void> {
    if (this.down) throw new PersistenceError('disk full', { code: 'PERSISTENCE' })
    return super.saveSession(session)
  }
}

const writeRetry = { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 5 }

function longReply(n: number): AdapterMessageTurn {
  return { events: textTurn(`reply ${n} `.repeat(10), { chunkSize: 3 }), delayMs: 1 }
}
type AdapterMessageTurn = { events: ReturnType<typeof textTurn>; delayMs: number }

describe('kernel v2 regressions: the write path', () => {
  it('an outage longer than the retry budget never rewrites finished replies with stale checkpoints', async () => {
    const persister = new OutagePersister()
    const replies = Array.from({ length: 10 }, (_, i) => longReply(i))
    const agent = createAgent(
      { checkpointIntervalMs: 0, writeRetry },
      { adapter: new ScriptedAdapter(replies), persister },
    )
    const session = await agent.createSession()
    persister.down = true
    const texts: string[] = []
    for (let i = 0; i < 10; i++) texts.push((await session.send(`question ${i}`)).text)
    // Longer than the queue's retry budget: the writes are reported as failed, then the store recovers.
    await new Promise((resolve) => setTimeout(resolve, 60))
    persister.down = false
    await session.flush()
    await agent.close()
    const agentMessages = (await persister.getMessages(session.id)).filter((m) => m.type === 'agent')
    expect(agentMessages).toHaveLength(10)
    for (const [i, message] of agentMessages.entries()) {
      expect(message.incomplete).toBeUndefined()
      expect(message.content).toEqual([{ type: 'text', text: texts[i] }])
    }
    expect(persister.gaps).toEqual([])
  })

  it('flush() and close() do not reject with errors of writes that have since succeeded', async () => {
    const persister = new OutagePersister()
    const agent = createAgent(
      { writeRetry },
      { adapter: new ScriptedAdapter([textTurn('one'), textTurn('two')]), persister },
    )
    const session = await agent.createSession()
    const failures: SessionEvent[] = []
    session.subscribe((event) => event.type === 'persist-error' && failures.push(event))
    persister.down = true
    await session.send('first')
    // Longer than any retry budget: the writes are reported as failed for good.
    await new Promise((resolve) => setTimeout(resolve, 250))
    expect(failures.length).toBeGreaterThan(0)
    persister.down = false
    await session.send('second')
    await session.flush()
    await agent.close()
    expect((await persister.getMessages(session.id)).map((m) => m.type)).toEqual([
      'user',
      'agent',
      'user',
      'agent',
    ])
  })

  it("with durability 'sync' the first send after an outage resolves, and is stored once", async () => {
    const persister = new OutagePersister()
    const adapter = new ScriptedAdapter([textTurn('answer')])
    const agent = createAgent({ durability: 'sync', writeRetry }, { adapter, persister })
    const session = await agent.createSession()
    persister.down = true
    await expect(session.send('lost')).rejects.toMatchObject({ code: 'PERSISTENCE' })
    persister.down = false
    const result = await session.send('again')
    expect(result.text).toBe('answer')
    expect(adapter.calls).toHaveLength(1)
    await agent.close()
    const stored = await persister.getMessages(session.id)
    expect(stored.map((m) => [m.type, m.content])).toEqual([
      ['user', 'again'],
      ['agent', [{ type: 'text', text: 'answer' }]],
    ])
  })

  it('failed writes are retried in the background, in order: no seq gap is ever visible in the store', async () => {
    const persister = new OutagePersister()
    const agent = createAgent(
      { writeRetry },
      { adapter: new ScriptedAdapter(Array.from({ length: 6 }, (_, i) => textTurn(`r${i}`))), persister },
    )
    const session = await agent.createSession()
    await session.send('a')
    persister.down = true
    await session.send('b')
    await session.send('c')
    await new Promise((resolve) => setTimeout(resolve, 250))
    persister.down = false
    await session.send('d')
    // No explicit flush: the background retry catches up by itself.
    for (let i = 0; i < 100 && persister.messageWrites < 8; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    expect((await persister.getMessages(session.id)).map((m) => m.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
    expect(persister.gaps).toEqual([])
    await agent.close()
  })

  it('the user message of a send that failed on a full disk is removed, never written later', async () => {
    const persister = new OutagePersister()
    const adapter = new ScriptedAdapter([textTurn('hello back')])
    const agent = createAgent({ durability: 'sync', writeRetry }, { adapter, persister })
    const session = await agent.createSession()
    persister.down = true
    for (let i = 0; i < 3; i++) await expect(session.send(`try ${i}`)).rejects.toBeDefined()
    persister.down = false
    await session.send('hello')
    await agent.close()
    expect(adapter.calls).toHaveLength(1)
    expect(adapter.calls[0]!.options.history).toEqual([])
    expect((await persister.getMessages(session.id)).map((m) => m.content)).toEqual([
      'hello',
      [{ type: 'text', text: 'hello back' }],
    ])
  })
})

/**
 * One process's view of a shared store: `before` runs ahead of each call (it may throw or wait),
 * `after` once a call succeeded; once `dead` (the process was killed), every call fails.
 */
function processView(
  store: InMemoryPersister,
  before?: (name: string | symbol, args: unknown[]) => Promise<void> | void,
  after?: (name: string | symbol, args: unknown[]) => void,
) {
  const process = {
    dead: false,
    view: new Proxy(store, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver)
        if (typeof value !== 'function') return value
        return async (...args: unknown[]) => {
          if (process.dead) throw new PersistenceError('process gone', { code: 'PERSISTENCE' })
          await before?.(name, args)
          const result = await value.apply(target, args)
          after?.(name, args)
          return result
        }
      },
    }),
  }
  return process
}

/** A store that refuses for good (not retryable) any message whose content is over 1000 characters of JSON. */
class Limited extends InMemoryPersister {
  override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
    if (JSON.stringify(message.content).length > 1000) {
      throw new PersistenceError('row too large', { code: 'VALIDATION', retryable: false })
    }
    return super.saveMessage(sessionId, message)
  }
}

describe('a store outage longer than the retry budget, with leases', () => {
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  it("a reply the store refuses for good: the next flush() says so once (the send's own end does not swallow it)", async () => {
    const persister = new Limited()
    const agent = createAgent(
      {},
      { adapter: new ScriptedAdapter([textTurn('x'.repeat(2000)), textTurn('small')]), persister },
    )
    const session = await agent.createSession()
    const errors: string[] = []
    session.subscribe((event) => event.type === 'persist-error' && errors.push(event.error.code))
    expect((await session.send('big')).text).toHaveLength(2000)
    // Before, flush() resolved although the reply send() returned was never stored.
    await expect(session.flush()).rejects.toMatchObject({ code: 'VALIDATION' })
    await expect(session.flush()).resolves.toBeUndefined()
    expect(errors).toEqual(['VALIDATION'])
    // The session goes on: its later writes land, and its lease was released (another agent sends).
    await session.send('small')
    const other = createAgent({}, { adapter: new ScriptedAdapter([textTurn('from the other')]), persister })
    expect((await (await other.getSession(session.id))!.send('hi')).text).toBe('from the other')
    await other.close()
    await agent.close()
  })

  it('refused messages are stood in for: no seq gap on disk, and after a restart every tool call still has its result', async () => {
    const persister = new Limited()
    const big = 'x'.repeat(2000)
    const echo = {
      name: 'echo',
      description: 'echo',
      inputSchema: { type: 'object' },
      execute: async (input: unknown) => `${(input as { text: string }).text}!`,
    }
    const agent = createAgent(
      { tools: [echo] },
      {
        adapter: new ScriptedAdapter([
          toolCallTurn([{ id: 'c1', name: 'echo', input: { text: big } }]),
          textTurn('done'),
        ]),
        persister,
      },
    )
    const session = await agent.createSession()
    expect((await session.send('go')).text).toBe('done')
    await expect(agent.close()).rejects.toMatchObject({ code: 'VALIDATION' })
    const stored = await persister.getMessages(session.id)
    expect(stored.map((m) => [m.seq, m.type])).toEqual([
      [0, 'user'],
      [1, 'agent'],
      [2, 'tool'],
      [3, 'agent'],
    ])
    const note = '[This message was not stored: the store refused it (VALIDATION).]'
    expect(stored[1]!.content).toEqual([
      { type: 'text', text: note },
      { type: 'tool_use', id: 'c1', name: 'echo', input: {} },
    ])
    expect(stored[2]!.content).toEqual([
      { type: 'tool_result', toolUseId: 'c1', content: note, isError: true },
    ])
    // A restart: the next request gets a history in which the call has its result.
    const adapter = new ScriptedAdapter([textTurn('next')])
    const restarted = createAgent({ tools: [echo] }, { adapter, persister })
    expect((await (await restarted.getSession(session.id))!.send('and now')).text).toBe('next')
    expect(adapter.calls[0]!.options.history.map((m) => m.seq)).toEqual([0, 1, 2, 3])
    await restarted.close()
  })

  it('a process that dies while the reply cannot be written leaves the send active on disk: the next process finds it interrupted', async () => {
    const store = new InMemoryPersister()
    // The first process's view of the store: its reply writes fail, then every call (it died).
    let replyDown = false
    const process = processView(store, async (name, args) => {
      if (name === 'saveMessage' && replyDown && (args[1] as AnyMessage).type === 'agent') {
        throw new PersistenceError('connection reset', { code: 'PERSISTENCE' })
      }
      // A store slower than the model: the reply is queued while the record saying 'active' is written.
      if (name === 'saveSession') await wait(5)
    })
    const view = process.view
    const first = createAgent(
      { leaseTtlMs: 150, writeRetry },
      { adapter: new ScriptedAdapter([textTurn('one'), textTurn('two')]), persister: view },
    )
    const session = await first.createSession()
    await session.send('first question')
    replyDown = true
    // Async durability: the send resolves while its reply is still queued.
    expect((await session.send('second question')).text).toBe('two')
    await wait(20)
    // Before, the record that said 'idle' had gone ahead of the reply: the store showed the send over.
    expect((await store.getSession(session.id))!.state).toBe('active')
    expect((await store.getMessages(session.id)).map((m) => m.type)).toEqual(['user', 'agent', 'user'])
    process.dead = true
    await wait(300)
    const second = createAgent(
      {},
      { adapter: new ScriptedAdapter([textTurn('two, again')]), persister: store },
    )
    await second.initialize()
    const reopened = (await second.getSession(session.id))!
    expect(reopened.state).toBe('interrupted')
    expect((await reopened.retry()).text).toBe('two, again')
    expect((await store.getMessages(session.id)).map((m) => m.content)).toEqual([
      'first question',
      [{ type: 'text', text: 'one' }],
      'second question',
      [{ type: 'text', text: 'two, again' }],
    ])
    await second.close()
  })

  for (const durability of ['async', 'sync'] as const) {
    it(`a process that dies right after the user message is stored (${durability}): the next process finds the send interrupted, and retry() answers it`, async () => {
      const store = new InMemoryPersister()
      let armed = false
      const process = processView(store, undefined, (name, args) => {
        if (name === 'saveMessage' && armed && (args[1] as AnyMessage).type === 'user') process.dead = true
      })
      const first = createAgent(
        { leaseTtlMs: 100, durability },
        {
          adapter: new ScriptedAdapter([textTurn('one'), { events: [], waitForAbort: true }]),
          persister: process.view,
        },
      )
      const session = await first.createSession()
      await session.send('first question')
      armed = true
      void session.send('second question').catch(() => undefined)
      for (let i = 0; i < 100 && !process.dead; i++) await wait(2)
      // Before, the record saying 'active' was queued behind the user message: the store said 'idle'.
      expect((await store.getSession(session.id))!.state).toBe('active')
      await wait(250)
      const second = createAgent({}, { adapter: new ScriptedAdapter([textTurn('two')]), persister: store })
      await second.initialize()
      const reopened = (await second.getSession(session.id))!
      expect(reopened.state).toBe('interrupted')
      expect((await reopened.retry()).text).toBe('two')
      expect((await store.getMessages(session.id)).map((m) => m.type)).toEqual([
        'user',
        'agent',
        'user',
        'agent',
      ])
      await second.close()
      first.close().catch(() => undefined)
    })
  }

  it('the lease is released once the writes land; another agent then sends, and nothing renews it any more', async () => {
    const persister = new OutagePersister()
    let claims = 0
    let releases = 0
    const claimSession = persister.claimSession.bind(persister)
    const releaseSession = persister.releaseSession.bind(persister)
    persister.claimSession = async (...args) => {
      claims += 1
      return claimSession(...args)
    }
    persister.releaseSession = async (...args) => {
      releases += 1
      return releaseSession(...args)
    }
    const first = createAgent(
      { leaseTtlMs: 90, writeRetry: { maxAttempts: 2, initialDelayMs: 5, maxDelayMs: 20 } },
      { adapter: new ScriptedAdapter([textTurn('first reply')]), persister },
    )
    const session = await first.createSession({ id: 's' })
    persister.down = true
    // Default durability: the send resolves; its writes are not durable at its end.
    expect((await session.send('hello')).text).toBe('first reply')
    await expect(session.flush()).rejects.toMatchObject({ code: 'PERSISTENCE' })
    expect(releases).toBe(0)
    persister.down = false
    // Before, the lease was kept and renewed for as long as the process lived.
    for (let i = 0; i < 100 && releases === 0; i++) await wait(10)
    expect(releases).toBe(1)
    expect((await persister.getMessages('s')).map((m) => [m.seq, m.type])).toEqual([
      [0, 'user'],
      [1, 'agent'],
    ])
    const second = createAgent(
      { leaseTtlMs: 90 },
      { adapter: new ScriptedAdapter([textTurn('second reply')]), persister },
    )
    const other = (await second.getSession('s'))!
    expect((await other.send('again')).text).toBe('second reply')
    await first.close()
    const claimsAfterClose = claims
    await wait(120)
    expect(claims).toBe(claimsAfterClose)
    expect(persister.gaps).toEqual([])
    await second.close()
  })

  it("agent.close() after the outage releases a lease the session's send left held", async () => {
    const persister = new OutagePersister()
    const first = createAgent(
      { leaseTtlMs: 5_000, writeRetry: { maxAttempts: 2, initialDelayMs: 1_000, maxDelayMs: 1_000 } },
      { adapter: new ScriptedAdapter([textTurn('reply')]), persister },
    )
    const session = await first.createSession({ id: 's' })
    persister.down = true
    await session.send('hello')
    persister.down = false
    // The background retry is a second away; close() writes now and lets the lease go.
    await first.close()
    const second = createAgent({}, { adapter: new ScriptedAdapter([textTurn('second')]), persister })
    expect((await (await second.getSession('s'))!.send('next')).text).toBe('second')
    await second.close()
  })
})

describe('kernel v2 regressions: input is validated before anything is stored', () => {
  const bad: Array<[string, unknown]> = [
    ["['hi']", ['hi']],
    ["[{ type: 'bogus' }]", [{ type: 'bogus' }]],
    ["[{ type: 'text' }]", [{ type: 'text' }]],
    ["''", ''],
    ['[]', []],
    ['[null]', [null]],
    ['42', 42],
    ['a text block with a function', [{ type: 'text', text: 'x', providerMetadata: { f: () => 1 } }]],
    ["an image with mediaType 'foo'", [{ type: 'image', mediaType: 'foo', data: 'AAAA' }]],
    ["an image with mediaType 'text/plain'", [{ type: 'image', mediaType: 'text/plain', data: 'AAAA' }]],
    ['an image whose data is not base64', [{ type: 'image', mediaType: 'image/png', data: '!!!' }]],
    [
      'an image whose data is a data URL',
      [{ type: 'image', mediaType: 'image/png', data: 'data:image/png;base64,AAAA' }],
    ],
    ["an image with url 'not a url'", [{ type: 'image', mediaType: 'image/png', url: 'not a url' }]],
    [
      'an image with a javascript: url',
      [{ type: 'image', mediaType: 'image/png', url: 'javascript:alert(1)' }],
    ],
    [
      'an image with a data URL that is not base64',
      [{ type: 'image', mediaType: 'image/png', url: 'data:image/png,%89PNG' }],
    ],
  ]
  for (const [label, content] of bad) {
    it(`send(${label}) rejects with ValidationError, stores nothing, and does not poison the session`, async () => {
      const persister = new InMemoryPersister()
      const adapter = new ScriptedAdapter([textTurn('fine')])
      const agent = createAgent({}, { adapter, persister })
      const session = await agent.createSession()
      const error = await session.send(content as string).catch((e: unknown) => e)
      expect(isAgentError(error) && error.name).toBe('ValidationError')
      expect((error as { code: string }).code).toBe('VALIDATION')
      expect(adapter.calls).toHaveLength(0)
      expect(await persister.getMessages(session.id)).toEqual([])
      expect(session.state).toBe('created')
      // A later good send works, also after a restart.
      await session.send('hello')
      await agent.close()
      const again = createAgent({}, { adapter: new ScriptedAdapter([textTurn('still fine')]), persister })
      const reopened = (await again.getSession(session.id))!
      expect((await reopened.send('more')).text).toBe('still fine')
      await again.close()
    })
  }

  it('well-formed images are taken: base64 data (padded or not), https and base64 data URLs', async () => {
    const images = [
      { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
      { type: 'image', mediaType: 'image/jpeg', data: 'AAAAAA' },
      { type: 'image', mediaType: 'image/svg+xml', url: 'https://example.com/a.svg?x=%20' },
      { type: 'image', mediaType: 'image/gif', url: 'data:image/gif;base64,R0lGODlh' },
    ] as const
    const adapter = new ScriptedAdapter([textTurn('seen')])
    const agent = createAgent({}, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    expect((await session.send([{ type: 'text', text: 'look' }, ...images])).text).toBe('seen')
    await agent.close()
  })

  it('bad send options reject with ValidationError before anything is stored', async () => {
    const persister = new InMemoryPersister()
    const agent = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    const session = await agent.createSession()
    for (const options of [
      { model: '' },
      { model: 42 },
      { systemPrompt: { text: 'x' } },
      { maxSteps: 0 },
      { temperature: 'hot' },
      { signal: 'stop' },
      { tools: [{ name: 'x' }] },
      { sytemPrompt: 'typo' },
    ]) {
      const error = await session.send('hi', options as never).catch((e: unknown) => e)
      expect(error, JSON.stringify(options)).toMatchObject({ name: 'ValidationError', code: 'VALIDATION' })
    }
    expect(await persister.getMessages(session.id)).toEqual([])
    expect(session.state).toBe('created')
  })

  it('a function in session metadata is a ValidationError, not a raw DOMException', async () => {
    const agent = createAgent({}, { adapter: new ScriptedAdapter([]), persister: new InMemoryPersister() })
    const error = await agent.createSession({ metadata: { callback: () => 1 } }).catch((e: unknown) => e)
    expect(error).toMatchObject({ name: 'ValidationError', code: 'VALIDATION' })
  })

  it('createAgent rejects a wrong model type, a non-string systemPrompt and misspelled keys', () => {
    expect(() => createAgent({ model: 42 } as never)).toThrow(/model/)
    expect(() => createAgent({ model: 42 } as never)).toThrow(
      expect.objectContaining({ code: 'CONFIGURATION' }),
    )
    expect(() => createAgent({ systemPrompt: { text: 'x' } } as never)).toThrow(/systemPrompt/)
    expect(() => createAgent({ sytemPrompt: 'x' } as never)).toThrow(/did you mean 'systemPrompt'/)
    expect(() => createAgent({ maxStep: 3 } as never)).toThrow(/did you mean 'maxSteps'/)
    expect(() => createAgent({}, { persistor: new InMemoryPersister() } as never)).toThrow(
      /did you mean 'persister'/,
    )
  })

  it('session ids, listeners and tool lists are checked too', async () => {
    const persister = new InMemoryPersister()
    const agent = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    for (const id of [5, '', null, undefined]) {
      await expect(agent.getSession(id as never)).rejects.toMatchObject({ name: 'ValidationError' })
      await expect(agent.deleteSession(id as never)).rejects.toMatchObject({ name: 'ValidationError' })
    }
    expect(() => agent.subscribe('x' as never)).toThrow(expect.objectContaining({ code: 'VALIDATION' }))
    const session = await agent.createSession()
    expect(() => session.subscribe(42 as never)).toThrow(expect.objectContaining({ code: 'VALIDATION' }))
    const twice = [
      { name: 'a', description: 'a', inputSchema: { type: 'object' }, execute: () => '1' },
      { name: 'a', description: 'a', inputSchema: { type: 'object' }, execute: () => '2' },
    ]
    expect(() => createAgent({ tools: twice })).toThrow(expect.objectContaining({ code: 'CONFIGURATION' }))
    await expect(session.send('hi', { tools: twice })).rejects.toMatchObject({ code: 'VALIDATION' })
    expect(await persister.getMessages(session.id)).toEqual([])
    await agent.close()
  })
})

describe('kernel v2 regressions: closed agents and the stream', () => {
  it('session.send() after agent.close() rejects with AGENT_CLOSED and reaches neither provider nor store', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([textTurn('no')])
    const agent = createAgent({}, { adapter, persister })
    const session = await agent.createSession()
    await agent.close()
    await expect(session.send('hi')).rejects.toMatchObject({ code: 'AGENT_CLOSED' })
    const streamed = session.stream('hi')[Symbol.asyncIterator]().next()
    await expect(streamed).rejects.toMatchObject({ code: 'AGENT_CLOSED' })
    await expect(session.getMessages()).rejects.toMatchObject({ code: 'AGENT_CLOSED' })
    await expect(session.flush()).rejects.toMatchObject({ code: 'AGENT_CLOSED' })
    expect(adapter.calls).toHaveLength(0)
    expect(await persister.getMessages(session.id)).toEqual([])
  })

  it('stream() yields the error event and then throws it, so a for-await loop sees the failure', async () => {
    const failure = new AdapterError('invalid x-api-key', {
      kind: 'authentication',
      status: 401,
      provider: 'scripted',
    })
    const agent = createAgent(
      {},
      { adapter: new ScriptedAdapter([{ events: [], error: failure }]), persister: new InMemoryPersister() },
    )
    const session = await agent.createSession()
    const seen: SessionEvent['type'][] = []
    const thrown = await (async () => {
      for await (const event of session.stream('hi')) seen.push(event.type)
    })().catch((e: unknown) => e)
    expect(thrown).toBe(failure)
    expect(seen.at(-1)).toBe('error')
  })

  it('an aborted stream() ends quietly after state aborted', async () => {
    const agent = createAgent(
      {},
      {
        adapter: new ScriptedAdapter([{ events: textTurn('slow'), waitForAbort: true }]),
        persister: new InMemoryPersister(),
      },
    )
    const session = await agent.createSession()
    const seen: SessionEvent[] = []
    for await (const event of session.stream('hi')) {
      seen.push(event)
      if (event.type === 'text-delta') session.abort()
    }
    expect(seen.at(-1)).toMatchObject({ type: 'state', state: 'aborted' })
  })
})

describe('the last write of a send fails (sync durability)', () => {
  /** A store that refuses the session record in one state, for good. */
  class RefusesState extends InMemoryPersister {
    readonly refused: SessionData['state']
    constructor(refused: SessionData['state']) {
      super()
      this.refused = refused
    }
    override async saveSession(session: SessionData): Promise<void> {
      if (session.state === this.refused) throw new PersistenceError('disk full', { code: 'PERSISTENCE' })
      return super.saveSession(session)
    }
  }

  for (const refused of ['waiting_input', 'idle'] as const) {
    it(`a refused '${refused}' record: the send fails from active, never announcing a state it did not store`, async () => {
      const persister = new RefusesState(refused)
      const { toolCallTurn } = await import('../testing/stream-helpers.js')
      const turn =
        refused === 'waiting_input'
          ? toolCallTurn([{ id: 'c1', name: 'deploy', input: {} }])
          : textTurn('done')
      const agent = createAgent(
        {
          durability: 'sync',
          writeRetry: { maxAttempts: 1 },
          tools: [
            {
              name: 'deploy',
              description: 'd',
              inputSchema: { type: 'object' },
              needsApproval: true,
              execute: () => 'ok',
            },
          ],
        },
        { adapter: new ScriptedAdapter([turn]), persister },
      )
      const session = await agent.createSession()
      const states: string[] = []
      session.subscribe((event) => {
        if (event.type === 'state') states.push(`${event.previous}->${event.state}`)
      })
      await expect(session.send('go')).rejects.toMatchObject({ code: 'PERSISTENCE' })
      // Before: created->active, waiting_input->active, active->error (waiting_input never announced).
      expect(states).toEqual(['created->active', 'active->error'])
      expect(session.state).toBe('error')
      await agent.close().catch(() => undefined)
    })
  }

  it('a reply stored after its send gave up on it: retry() says the exchange is answered, and the next send goes on', async () => {
    const persister = new OutagePersister()
    const saveMessage = persister.saveMessage.bind(persister)
    let replyRefused = true
    persister.saveMessage = async (sessionId, message) => {
      if (message.type === 'agent' && replyRefused)
        throw new PersistenceError('disk full', { code: 'PERSISTENCE' })
      return saveMessage(sessionId, message)
    }
    const agent = createAgent(
      { durability: 'sync', writeRetry: { maxAttempts: 2, initialDelayMs: 5, maxDelayMs: 5 } },
      { adapter: new ScriptedAdapter([textTurn('the reply'), textTurn('next reply')]), persister },
    )
    const session = await agent.createSession()
    await expect(session.send('hi')).rejects.toMatchObject({ code: 'PERSISTENCE' })
    replyRefused = false
    await session.flush().catch(() => undefined)
    await session.flush()
    expect((await persister.getMessages(session.id)).map((m) => [m.type, m.incomplete])).toEqual([
      ['user', undefined],
      ['agent', undefined],
    ])
    // Before: "has no user message to retry", although there was one.
    await expect(session.retry()).rejects.toThrow(
      /already answered by a complete reply; send the next message/,
    )
    expect((await session.send('and then')).text).toBe('next reply')
    await agent.close()
  })
})
