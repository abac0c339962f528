// When a send is over for its caller (DESIGN §3): once its final `state` event is out the session
// is no longer `active`, so a listener of that event, of `done` or of `error` may send again; with
// leases, the lease passes to that send instead of being released under it.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { createAgent } from '../agent/create-agent.js'
import { SessionStateError } from '../errors/session-state-error.js'
import type { SessionData } from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn, toolCallTurn } from '../testing/stream-helpers.js'
import type { SendResult } from './session-events.js'

const run = promisify(execFile)

describe('a send settles before its last events', () => {
  it('a for-await loop can send again from the done event', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([textTurn('first'), textTurn('second')])
    const agent = createAgent({}, { adapter, persister })
    const session = await agent.createSession()
    let next: Promise<SendResult> | undefined
    for await (const event of session.stream('one')) {
      if (event.type === 'done') next = session.send('two')
    }
    expect((await next)?.text).toBe('second')
    await session.flush()
    const stored = await persister.getMessages(session.id)
    expect(stored.map((m) => [m.seq, m.type])).toEqual([
      [0, 'user'],
      [1, 'agent'],
      [2, 'user'],
      [3, 'agent'],
    ])
    await agent.close()
  })

  it("a listener can send again on 'state: idle' and on 'error'", async () => {
    const adapter = new ScriptedAdapter([
      textTurn('first'),
      { events: [], error: new Error('model down') },
      textTurn('third'),
    ])
    const agent = createAgent({ retry: { maxRetries: 0 } }, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    const chained: Array<Promise<SendResult>> = []
    let idles = 0
    session.subscribe((event) => {
      if (event.type === 'state' && event.state === 'idle' && ++idles === 1) chained.push(session.send('two'))
      if (event.type === 'error') chained.push(session.send('three'))
    })
    await session.send('one')
    await expect(chained[0]).rejects.toThrow('model down')
    await expect.poll(() => chained.length).toBe(2)
    expect((await chained[1])?.text).toBe('third')
    expect(session.state).toBe('idle')
    await agent.close()
  })

  it('a second send in the same done handler is still refused as busy', async () => {
    const adapter = new ScriptedAdapter([textTurn('first'), textTurn('second')])
    const agent = createAgent({}, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    const outcomes: Array<Promise<unknown>> = []
    session.subscribe((event) => {
      if (event.type === 'done' && outcomes.length === 0) {
        outcomes.push(session.send('two'), session.send('three'))
      }
    })
    await session.send('one')
    const [second, third] = await Promise.allSettled(outcomes)
    expect(second?.status).toBe('fulfilled')
    expect(third).toMatchObject({ status: 'rejected', reason: { code: 'SESSION_BUSY' } })
    await agent.close()
  })

  it('with leases, the lease passes to the send started from done, and is released after it', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      { events: textTurn('first'), delayMs: 1 },
      { events: textTurn('second'), delayMs: 20 },
      textTurn('other'),
    ])
    const mine = createAgent({}, { adapter, persister })
    const other = createAgent({}, { adapter, persister })
    const session = await mine.createSession()
    let next: Promise<SendResult> | undefined
    session.subscribe((event) => {
      if (event.type === 'done' && next === undefined) next = session.send('two')
    })
    await session.send('one')
    // The chained send runs: another agent over the same store is refused.
    const theirs = await other.getSession(session.id)
    await expect(theirs!.send('meanwhile')).rejects.toMatchObject({ code: 'SESSION_BUSY' })
    await next
    // Released at its end: the other agent can send now.
    expect((await theirs!.send('after')).text).toBe('other')
    await mine.close()
    await other.close()
  })

  it('getPending() from the done handler of a send that waits returns the calls', async () => {
    const adapter = new ScriptedAdapter([toolCallTurn([{ id: 'c1', name: 'ask', input: { q: 'color?' } }])])
    const ask = { name: 'ask', description: 'asks the user', inputSchema: { type: 'object' } }
    const agent = createAgent({ tools: [ask] }, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    let pending: Promise<unknown> | undefined
    session.subscribe((event) => {
      if (event.type === 'done') pending = session.getPending()
    })
    await session.send('paint it')
    expect(await pending).toEqual([
      { toolUseId: 'c1', name: 'ask', input: { q: 'color?' }, kind: 'client', sessionId: session.id },
    ])
    await agent.close()
  })

  it('retry() while a send runs rejects with SessionStateError (the session is active)', async () => {
    const adapter = new ScriptedAdapter([{ events: textTurn('slow'), delayMs: 10 }])
    const agent = createAgent({}, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    const sending = session.send('go')
    await expect(session.retry()).rejects.toBeInstanceOf(SessionStateError)
    await sending
    await agent.close()
  })
})

describe('waiting for writes while the store is down', () => {
  // A plain script awaiting a write that keeps failing gets its rejection: the retry timer keeps the
  // process alive while someone waits (background retries alone do not).
  const script = (body: string) => `
    import { createAgent, InMemoryPersister, PersistenceError } from ${JSON.stringify(new URL('../../dist/index.js', import.meta.url).href)}
    import { ScriptedAdapter, textTurn } from ${JSON.stringify(new URL('../../dist/testing/index.js', import.meta.url).href)}
    class Down extends InMemoryPersister {
      down = false
      async saveMessage(id, m) { if (this.down) throw new PersistenceError('disk full', { code: 'PERSISTENCE' }); return super.saveMessage(id, m) }
      async saveSession(s) { if (this.down) throw new PersistenceError('disk full', { code: 'PERSISTENCE' }); return super.saveSession(s) }
    }
    const persister = new Down()
    ${body}
    console.log('settled')
  `

  it('await flush() rejects instead of the process exiting under it', async () => {
    const { stdout } = await run(process.execPath, [
      '--input-type=module',
      '-e',
      script(`
        const agent = createAgent({ writeRetry: { maxAttempts: 3, initialDelayMs: 20, maxDelayMs: 50 } }, { adapter: new ScriptedAdapter([textTurn('hi')]), persister })
        const session = await agent.createSession()
        persister.down = true
        await session.send('hello')
        await session.flush().then(() => console.log('flushed'), (error) => console.log('flush rejected', error.code))
      `),
    ])
    expect(stdout.trim().split('\n')).toEqual(['flush rejected PERSISTENCE', 'settled'])
  })

  it("await send() in 'sync' durability rejects instead of the process exiting under it", async () => {
    const { stdout } = await run(process.execPath, [
      '--input-type=module',
      '-e',
      script(`
        const agent = createAgent({ durability: 'sync', writeRetry: { maxAttempts: 3, initialDelayMs: 20, maxDelayMs: 50 } }, { adapter: new ScriptedAdapter([textTurn('hi')]), persister })
        const session = await agent.createSession()
        persister.down = true
        await session.send('hello').then(() => console.log('sent'), (error) => console.log('send rejected', error.code))
      `),
    ])
    expect(stdout.trim().split('\n')).toEqual(['send rejected PERSISTENCE', 'settled'])
  })

  it("await send() in 'sync' durability rejects when the store goes down mid-reply (the kept partial reply's write is waited for too)", async () => {
    const { stdout } = await run(process.execPath, [
      '--input-type=module',
      '-e',
      script(`
        const words = Array.from({ length: 12 }, (_, i) => ({ type: 'text-delta', text: 'w' + i + ' ' }))
        const adapter = new ScriptedAdapter([{ events: words, delayMs: 15 }])
        const agent = createAgent({ durability: 'sync', checkpointIntervalMs: 20, writeRetry: { maxAttempts: 3, initialDelayMs: 20, maxDelayMs: 50 } }, { adapter, persister })
        const session = await agent.createSession()
        session.subscribe((event) => { if (event.type === 'text-delta') persister.down = true })
        await session.send('hello').then(() => console.log('sent'), (error) => console.log('send rejected', error.code))
      `),
    ])
    // Before, the process exited while the send waited for the partial reply's write (code 13).
    expect(stdout.trim().split('\n')).toEqual(['send rejected PERSISTENCE', 'settled'])
  })

  it('await update() and complete() resolve after a failed write is retried, instead of the process exiting under them', async () => {
    const { stdout } = await run(process.execPath, [
      '--input-type=module',
      '-e',
      script(`
        let failures = 0
        const save = persister.saveSession.bind(persister)
        persister.saveSession = async (data) => {
          if (failures > 0) { failures -= 1; throw new PersistenceError('connection reset', { code: 'PERSISTENCE' }) }
          return save(data)
        }
        const agent = createAgent({ writeRetry: { maxAttempts: 3, initialDelayMs: 20, maxDelayMs: 50 } }, { adapter: new ScriptedAdapter([]), persister })
        const session = await agent.createSession()
        failures = 1
        await session.update({ summary: 'renamed' }).then(() => console.log('updated'), (error) => console.log('update rejected', error.code))
        failures = 1
        await session.complete().then(() => console.log('completed'), (error) => console.log('complete rejected', error.code))
        const stored = await persister.getSession(session.id)
        console.log(stored.summary, stored.state)
      `),
    ])
    // Before, the process exited at the update (unsettled top-level await, code 13): the write's
    // retry timer did not keep it alive while update() waited.
    expect(stdout.trim().split('\n')).toEqual(['updated', 'completed', 'renamed completed', 'settled'])
  })
})

describe('close() while the store is down', () => {
  class Down extends InMemoryPersister {
    down = false
    override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
      if (this.down) throw new PersistenceError('disk full', { code: 'PERSISTENCE' })
      return super.saveMessage(sessionId, message)
    }
    override async saveSession(session: SessionData): Promise<void> {
      if (this.down) throw new PersistenceError('disk full', { code: 'PERSISTENCE' })
      return super.saveSession(session)
    }
  }

  it('rejects, drops nothing, and the next close() writes what was accepted', async () => {
    const persister = new Down()
    const agent = createAgent(
      { writeRetry: { maxAttempts: 2, initialDelayMs: 5, maxDelayMs: 60_000 } },
      { adapter: new ScriptedAdapter([textTurn('the reply')]), persister },
    )
    const session = await agent.createSession()
    persister.down = true
    expect((await session.send('hello')).text).toBe('the reply')
    await expect(agent.close()).rejects.toMatchObject({ code: 'PERSISTENCE' })
    // Closed all the same: nothing new is accepted.
    await expect(session.send('more')).rejects.toMatchObject({ code: 'AGENT_CLOSED' })
    await expect(agent.getSessions()).rejects.toMatchObject({ code: 'AGENT_CLOSED' })
    // The background retry waits a minute here: only close() can write it now.
    persister.down = false
    expect(await persister.getMessages(session.id)).toEqual([])
    // Before, a second close() returned the first one's rejection and the exchange was lost.
    await agent.close()
    const stored = await persister.getMessages(session.id)
    expect(stored.map((message) => [message.type, message.content])).toEqual([
      ['user', 'hello'],
      ['agent', [{ type: 'text', text: 'the reply' }]],
    ])
    expect((await persister.getSession(session.id))!.state).toBe('idle')
    await agent.close()
  })
})

describe('update() the store refuses for good', () => {
  it('rejects and leaves the session object as it was (and as the store has it)', async () => {
    class Refusing extends InMemoryPersister {
      refuse = false
      override async saveSession(data: SessionData): Promise<void> {
        if (this.refuse) {
          this.refuse = false
          throw new PersistenceError('value refused by the store', { code: 'VALIDATION', retryable: false })
        }
        return super.saveSession(data)
      }
    }
    const persister = new Refusing()
    const agent = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    const session = await agent.createSession({ summary: 'S0', metadata: { v: 0 } })
    persister.refuse = true
    await expect(session.update({ summary: 'S1', metadata: { v: 1 } })).rejects.toMatchObject({
      code: 'VALIDATION',
    })
    // Before, the object showed S1 and { v: 1 }, which the store never got.
    expect([session.summary, session.metadata]).toEqual(['S0', { v: 0 }])
    await session.update({ systemPrompt: 'be brief' })
    const stored = (await persister.getSession(session.id))!
    expect([stored.summary, stored.metadata, stored.systemPrompt]).toEqual(['S0', { v: 0 }, 'be brief'])
    await agent.close()
  })
})
