// A store that commits a write and then loses its answer (the connection drops after the commit):
// with `durability: 'sync'` the send cannot know whether its user message was stored. The next
// send reads back what the store holds before it writes anything.
import { describe, expect, it } from 'vitest'
import type { AnyMessage } from '../contracts/messages.js'
import type { SessionData } from '../contracts/agent-persister.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { createAgent } from '../agent/create-agent.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn } from '../testing/stream-helpers.js'

/** Commits the first user message, then fails (that write's answer and every write after it) until `recover()`. */
class LostAckPersister extends InMemoryPersister {
  down = false
  /** Whether reads fail too while `down` (a lost connection) or only writes (a full disk). */
  readsFail = true
  loseUserAck = true
  override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
    if (this.down) throw new PersistenceError('connection reset', { code: 'PERSISTENCE' })
    await super.saveMessage(sessionId, message)
    if (message.type === 'user' && this.loseUserAck) {
      this.loseUserAck = false
      this.down = true
      throw new PersistenceError('connection reset', { code: 'PERSISTENCE' })
    }
  }
  override async saveSession(session: SessionData): Promise<void> {
    if (this.down) throw new PersistenceError('connection reset', { code: 'PERSISTENCE' })
    return super.saveSession(session)
  }
  override async getMessages(...args: Parameters<InMemoryPersister['getMessages']>): Promise<AnyMessage[]> {
    if (this.down && this.readsFail) throw new PersistenceError('connection reset', { code: 'PERSISTENCE' })
    return super.getMessages(...args)
  }
}

const writeRetry = { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 5 }

async function failedFirstSend(turns = [textTurn('the answer')]) {
  const persister = new LostAckPersister()
  const adapter = new ScriptedAdapter(turns)
  const agent = createAgent({ durability: 'sync', writeRetry }, { adapter, persister })
  const session = await agent.createSession()
  await expect(session.send('hello')).rejects.toMatchObject({ code: 'PERSISTENCE' })
  // The store holds the user message although the send was told it is not durable.
  expect(
    (await InMemoryPersister.prototype.getMessages.call(persister, session.id)).map((m) => m.content),
  ).toEqual(['hello'])
  return { persister, adapter, agent, session }
}

const stored = async (persister: InMemoryPersister, id: string) =>
  (await InMemoryPersister.prototype.getMessages.call(persister, id)).map((m) => [m.type, m.content, m.seq])

describe("a lost acknowledgement of the user message (durability 'sync')", () => {
  it('the app sends the same message again: it is stored once and answered', async () => {
    const { persister, adapter, agent, session } = await failedFirstSend()
    persister.down = false
    const result = await session.send('hello')
    expect(result.text).toBe('the answer')
    expect(adapter.calls).toHaveLength(1)
    expect(adapter.calls[0]!.prompt).toBe('hello')
    expect(adapter.calls[0]!.options.history).toEqual([])
    expect(result.messages.map((m) => [m.type, m.seq])).toEqual([
      ['user', 0],
      ['agent', 1],
    ])
    expect((await session.getMessages()).map((m) => m.seq)).toEqual([0, 1])
    await agent.close()
    expect(await stored(persister, session.id)).toEqual([
      ['user', 'hello', 0],
      ['agent', [{ type: 'text', text: 'the answer' }], 1],
    ])
  })

  it('the app sends something else: the stored message is kept before it, and the model sees both', async () => {
    const { persister, adapter, agent, session } = await failedFirstSend()
    persister.down = false
    await session.send('something else')
    await agent.close()
    expect(await stored(persister, session.id)).toEqual([
      ['user', 'hello', 0],
      ['user', 'something else', 1],
      ['agent', [{ type: 'text', text: 'the answer' }], 2],
    ])
    expect(adapter.calls[0]!.options.history.map((m) => m.content)).toEqual(['hello'])
    expect(adapter.calls[0]!.prompt).toBe('something else')
  })

  it('retry() answers the stored message', async () => {
    const { persister, adapter, agent, session } = await failedFirstSend()
    persister.down = false
    expect((await session.retry()).text).toBe('the answer')
    expect(adapter.calls).toHaveLength(1)
    await agent.close()
    expect(await stored(persister, session.id)).toEqual([
      ['user', 'hello', 0],
      ['agent', [{ type: 'text', text: 'the answer' }], 1],
    ])
  })

  it('while the store is still down the next send fails before it writes or asks the model, and the one after that goes on', async () => {
    const { persister, adapter, agent, session } = await failedFirstSend()
    await expect(session.send('hello')).rejects.toMatchObject({ code: 'PERSISTENCE' })
    expect(adapter.calls).toHaveLength(0)
    persister.down = false
    expect((await session.send('hello')).text).toBe('the answer')
    await agent.close()
    expect(await stored(persister, session.id)).toEqual([
      ['user', 'hello', 0],
      ['agent', [{ type: 'text', text: 'the answer' }], 1],
    ])
  })

  it('a write that failed without committing (a full disk): nothing is taken in, and the same content later is a new exchange', async () => {
    const persister = new LostAckPersister()
    persister.loseUserAck = false
    persister.readsFail = false
    const adapter = new ScriptedAdapter([textTurn('the answer'), textTurn('the second answer')])
    const agent = createAgent({ durability: 'sync', writeRetry }, { adapter, persister })
    const session = await agent.createSession()
    persister.down = true
    await expect(session.send('hello')).rejects.toMatchObject({ code: 'PERSISTENCE' })
    persister.down = false
    expect((await session.send('hello')).messages.map((m) => m.seq)).toEqual([0, 1])
    // The same content again, now that nothing is unsure: a new exchange.
    expect((await session.send('hello')).text).toBe('the second answer')
    await agent.close()
    expect(await stored(persister, session.id)).toEqual([
      ['user', 'hello', 0],
      ['agent', [{ type: 'text', text: 'the answer' }], 1],
      ['user', 'hello', 2],
      ['agent', [{ type: 'text', text: 'the second answer' }], 3],
    ])
  })
})
