// What a `message` event promises (DESIGN §3): with `durability: 'sync'` the message is durable
// when it is shown; with `'async'` the ordered write queue has accepted it.
import { describe, expect, it } from 'vitest'
import { createAgent } from '../agent/create-agent.js'
import type { AnyMessage } from '../contracts/messages.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { collect, textTurn, toolCallTurn } from '../testing/stream-helpers.js'
import type { SessionEvent } from './session-events.js'

/** A store whose message writes take a while, and can be made to fail. */
class SlowPersister extends InMemoryPersister {
  failMessages = false
  /** Ids of the messages written so far (readable synchronously). */
  readonly written = new Set<string>()
  override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 15))
    if (this.failMessages) throw new PersistenceError('disk full', { code: 'PERSISTENCE' })
    await super.saveMessage(sessionId, message)
    this.written.add(message.id)
  }
}

const writeRetry = { maxAttempts: 1, initialDelayMs: 1, maxDelayMs: 1 }

function toolLoop() {
  return new ScriptedAdapter([
    toolCallTurn([{ id: 'c1', name: 'lookup', input: { q: 'x' } }]),
    textTurn('found it'),
  ])
}
const lookup = {
  name: 'lookup',
  description: 'looks up',
  inputSchema: { type: 'object' },
  execute: () => 'x',
}

describe('message events and durability', () => {
  it("in 'sync' durability every message shown is already in the store", async () => {
    const persister = new SlowPersister()
    const agent = createAgent({ durability: 'sync', tools: [lookup] }, { adapter: toolLoop(), persister })
    const session = await agent.createSession()
    const checks: Array<Promise<{ type: string; stored: boolean }>> = []
    session.subscribe((event) => {
      if (event.type !== 'message') return
      // Read the store the moment the event arrives (a listener cannot await).
      checks.push(
        persister.getMessages(session.id).then((stored) => ({
          type: event.message.type,
          stored: stored.some((m) => m.id === event.message.id),
        })),
      )
    })
    await session.send('find x')
    expect(await Promise.all(checks)).toEqual([
      { type: 'user', stored: true },
      { type: 'agent', stored: true },
      { type: 'tool', stored: true },
      { type: 'agent', stored: true },
    ])
    await agent.close()
  })

  it("in 'sync' durability a message whose write failed is never shown", async () => {
    const persister = new SlowPersister()
    const agent = createAgent(
      { durability: 'sync', writeRetry },
      { adapter: new ScriptedAdapter([textTurn('never asked')]), persister },
    )
    const session = await agent.createSession()
    persister.failMessages = true
    const events: SessionEvent[] = []
    session.subscribe((event) => events.push(event))
    await expect(session.send('hello')).rejects.toBeInstanceOf(PersistenceError)
    expect(events.filter((event) => event.type === 'message')).toEqual([])
    expect(events.map((event) => event.type)).toContain('error')
    expect(await persister.getMessages(session.id)).toEqual([])
    persister.failMessages = false
    await agent.close()
  })

  it("in 'sync' durability the events keep their order: the user message, then state active", async () => {
    const persister = new SlowPersister()
    const agent = createAgent(
      { durability: 'sync' },
      { adapter: new ScriptedAdapter([textTurn('hi')]), persister },
    )
    const session = await agent.createSession()
    const events = await collect(session.stream('hello'))
    const kinds = events
      .filter((event) => event.type === 'message' || event.type === 'state')
      .map((event) => (event.type === 'message' ? `message:${event.message.type}` : `state:${event.state}`))
    expect(kinds).toEqual(['message:user', 'state:active', 'message:agent', 'state:idle'])
    await agent.close()
  })

  it("in 'sync' durability a partial reply kept after a failure is shown once stored", async () => {
    const persister = new SlowPersister()
    const adapter = new ScriptedAdapter([
      { events: textTurn('half a reply').slice(0, 2), error: new Error('connection reset') },
    ])
    const agent = createAgent({ durability: 'sync', retry: { maxRetries: 0 } }, { adapter, persister })
    const session = await agent.createSession()
    const shown: Array<Promise<boolean>> = []
    session.subscribe((event) => {
      if (event.type === 'message' && event.message.incomplete) {
        shown.push(
          persister.getMessages(session.id).then((stored) => stored.some((m) => m.id === event.message.id)),
        )
      }
    })
    await expect(session.send('go')).rejects.toThrow()
    expect(await Promise.all(shown)).toEqual([true])
    await agent.close()
  })

  it("in 'async' durability a message is shown at once, before its write lands", async () => {
    const persister = new SlowPersister()
    const agent = createAgent({}, { adapter: new ScriptedAdapter([textTurn('hi')]), persister })
    const session = await agent.createSession()
    const storedWhenShown: boolean[] = []
    session.subscribe((event) => {
      // Synchronous look at the store: the write has not landed yet.
      if (event.type === 'message') storedWhenShown.push(persister.written.has(event.message.id))
    })
    await session.send('hello')
    expect(storedWhenShown).toEqual([false, false])
    await session.flush()
    expect((await persister.getMessages(session.id)).map((m) => m.type)).toEqual(['user', 'agent'])
    await agent.close()
  })
})
