// A third-party store's own errors reach the application as PersistenceErrors (DESIGN §6: every
// thrown error extends AgentError), never raw, and never as a provider failure.
import { describe, expect, it } from 'vitest'
import type { AgentCore } from '../agent/agent-core.js'
import { createAgent } from '../agent/create-agent.js'
import type { AnyMessage } from '../contracts/messages.js'
import type { GetMessagesQuery, SessionData } from '../contracts/agent-persister.js'
import { AdapterError } from '../errors/adapter-error.js'
import { isAgentError } from '../errors/agent-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn } from '../testing/stream-helpers.js'
import { guardPersister } from './guard-persister.js'
import { InMemoryPersister } from './in-memory-persister.js'

/** A store that throws a driver's plain `Error`s while `broken` is set. */
class BrokenStore extends InMemoryPersister {
  broken = false
  #check(): void {
    if (this.broken) throw new Error('ECONNRESET: socket hang up')
  }
  override async getSession(id: string): Promise<SessionData | null> {
    this.#check()
    return super.getSession(id)
  }
  override async listSessions(
    query: Parameters<InMemoryPersister['listSessions']>[0],
  ): Promise<SessionData[]> {
    this.#check()
    return super.listSessions(query)
  }
  override async getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]> {
    this.#check()
    return super.getMessages(sessionId, query)
  }
  override async deleteSession(id: string): Promise<void> {
    this.#check()
    return super.deleteSession(id)
  }
  override async markInterrupted(): Promise<number> {
    this.#check()
    return super.markInterrupted()
  }
}

async function expectPersistenceError(call: Promise<unknown>): Promise<void> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(PersistenceError)
  expect(error).not.toBeInstanceOf(AdapterError)
  expect(isAgentError(error)).toBe(true)
  expect((error as PersistenceError).code).toBe('PERSISTENCE')
  expect((error as PersistenceError).message).toContain('ECONNRESET')
  expect((error as { cause?: unknown }).cause).toBeInstanceOf(Error)
}

describe('errors of a third-party persister', () => {
  it('reach every agent and session call as PersistenceError', async () => {
    const store = new BrokenStore()
    const setup = createAgent({}, { adapter: new ScriptedAdapter([textTurn('hi')]), persister: store })
    const existing = await setup.createSession()
    await existing.send('hello')
    await setup.close()

    store.broken = true
    const agent = createAgent({}, { adapter: new ScriptedAdapter([textTurn('again')]), persister: store })
    await expectPersistenceError(agent.initialize())
    store.broken = false
    await agent.initialize()
    store.broken = true
    await expectPersistenceError(agent.getSession(existing.id))
    await expectPersistenceError(agent.getSessions({ limit: 10 }))
    await expectPersistenceError(agent.deleteSession(existing.id))
    store.broken = false
    const session = await agent.getSession(existing.id)
    store.broken = true
    await expectPersistenceError(session!.getMessages({ limit: 1, beforeSeq: 1 }))
    store.broken = false
    await agent.close()
  })

  it('a send that fails reading the store fails with a PersistenceError, not as the provider', async () => {
    const store = new BrokenStore()
    const first = createAgent({}, { adapter: new ScriptedAdapter([textTurn('hi')]), persister: store })
    const id = (await first.chat('hello')).id
    await first.close()
    const adapter = new ScriptedAdapter([textTurn('never asked')])
    const agent = createAgent({}, { adapter, persister: store })
    const session = await agent.getSession(id)
    store.broken = true
    await expectPersistenceError(session!.send('again'))
    expect(adapter.calls).toHaveLength(0)
    store.broken = false
    await agent.close()
  })

  it('leaves AgentErrors as they are and keeps the capabilities the store has', async () => {
    const notFound = new PersistenceError('no such session', { code: 'NOT_FOUND' })
    const store = {
      saveSession: async () => undefined,
      getSession: async () => null,
      getAllSessions: async () => [],
      listSessions: async () => [],
      deleteSession: async () => undefined,
      saveMessage: async () => {
        throw notFound
      },
      getMessages: async () => [],
      deleteMessages: async () => undefined,
    }
    const guarded = guardPersister(store)
    await expect(guarded.saveMessage('s', {} as AnyMessage)).rejects.toBe(notFound)
    expect(guarded.claimSession).toBeUndefined()
    expect(guarded.deleteSessions).toBeUndefined()
    expect(guarded.close).toBeUndefined()
    expect(typeof guardPersister(new InMemoryPersister()).claimSession).toBe('function')
  })

  it('turns a synchronous throw into a rejection', async () => {
    const guarded = guardPersister({
      ...new InMemoryPersister(),
      getSession: () => {
        throw new TypeError('driver bug')
      },
    } as never)
    await expect(guarded.getSession('x')).rejects.toBeInstanceOf(PersistenceError)
  })

  it('getPersister() still returns the instance the application gave', async () => {
    const store = new InMemoryPersister()
    const agent = createAgent({}, { adapter: new ScriptedAdapter([]), persister: store }) as AgentCore
    expect(await agent.getPersister()).toBe(store)
    await agent.close()
  })
})
