// createSession({ id }) (DESIGN §10.2, seed 001): a caller-chosen id; an existing id rejects with
// SESSION_EXISTS and writes nothing.
import { describe, expect, it } from 'vitest'
import type { SessionData } from '../contracts/agent-persister.js'
import { AgentError, isAgentError } from '../errors/agent-error.js'
import { ValidationError } from '../errors/validation-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn } from '../testing/stream-helpers.js'
import { createAgent } from './create-agent.js'

/** Counts session writes. */
class CountingPersister extends InMemoryPersister {
  sessionWrites = 0
  override async saveSession(session: SessionData): Promise<void> {
    this.sessionWrites++
    return super.saveSession(session)
  }
}

function setup() {
  const persister = new CountingPersister()
  const agent = createAgent(
    {},
    { adapter: new ScriptedAdapter([textTurn('hi'), textTurn('again')]), persister },
  )
  return { persister, agent }
}

const codeOf = (error: unknown) => (isAgentError(error) ? error.code : String(error))

describe('createSession({ id })', () => {
  it('stores the session under the id exactly as given, and a restarted agent finds it', async () => {
    const { persister, agent } = setup()
    const id = 'app1:user-7:Chat 42 ✓'
    const session = await agent.createSession({ id, summary: 'Mine' })
    expect(session.id).toBe(id)
    expect((await persister.getSession(id))!.summary).toBe('Mine')
    await session.send('hello')
    expect((await persister.getMessages(id)).map((m) => m.sessionId)).toEqual([id, id])
    await agent.close()

    const restarted = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    expect((await restarted.getSession(id))!.summary).toBe('Mine')
  })

  it('an id that is stored rejects with an AgentError of code SESSION_EXISTS and writes nothing', async () => {
    const { persister, agent } = setup()
    const first = await agent.createSession({ id: 'chat-1', summary: 'First', metadata: { n: 1 } })
    await first.send('hello')
    const before = (await persister.getSession('chat-1'))!
    const writes = persister.sessionWrites

    const error = await agent
      .createSession({ id: 'chat-1', summary: 'Second' })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(AgentError)
    expect(codeOf(error)).toBe('SESSION_EXISTS')
    expect(persister.sessionWrites).toBe(writes)
    expect(await persister.getSession('chat-1')).toEqual(before)
    expect(await persister.getMessages('chat-1')).toHaveLength(2)
    expect(await agent.getSession('chat-1')).toBe(first)
  })

  it('an id stored by another process (not in this agent’s memory) is found in the store', async () => {
    const { persister } = setup()
    await persister.saveSession({
      id: 'chat-9',
      summary: 'Elsewhere',
      createdAt: '2026-01-01T00:00:00.000Z',
      lastActivity: '2026-01-01T00:00:00.000Z',
      state: 'idle',
      tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    })
    const agent = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    expect(codeOf(await agent.createSession({ id: 'chat-9' }).catch((caught: unknown) => caught))).toBe(
      'SESSION_EXISTS',
    )
    expect((await persister.getSession('chat-9'))!.summary).toBe('Elsewhere')
  })

  it("an id of another user's session rejects too, and leaves that session alone", async () => {
    const { persister, agent } = setup()
    const bobs = await agent.withScope({ userId: 'bob' }).createSession({ id: 'shared-id' })
    const error = await agent
      .withScope({ userId: 'alice' })
      .createSession({ id: 'shared-id' })
      .catch((caught: unknown) => caught)
    expect(codeOf(error)).toBe('SESSION_EXISTS')
    expect((error as Error).message).not.toContain('bob')
    expect((await persister.getSession(bobs.id))!.userId).toBe('bob')
  })

  it('two creates of the same id at once: exactly one wins', async () => {
    const { persister, agent } = setup()
    const results = await Promise.allSettled([
      agent.createSession({ id: 'race', summary: 'a' }),
      agent.createSession({ id: 'race', summary: 'b' }),
      agent.createSession({ id: 'race', summary: 'c' }),
    ])
    const won = results.filter((result) => result.status === 'fulfilled')
    const lost = results.filter((result) => result.status === 'rejected')
    expect(won).toHaveLength(1)
    expect(lost.map((result) => codeOf((result as PromiseRejectedResult).reason))).toEqual([
      'SESSION_EXISTS',
      'SESSION_EXISTS',
    ])
    const winner = (won[0] as PromiseFulfilledResult<{ summary: string }>).value
    expect((await persister.getSession('race'))!.summary).toBe(winner.summary)
    expect(persister.sessionWrites).toBe(1)
  })

  it('a deleted id can be used again', async () => {
    const { persister, agent } = setup()
    const first = await agent.createSession({ id: 'again', summary: 'one' })
    await agent.deleteSession(first.id)
    const second = await agent.createSession({ id: 'again', summary: 'two' })
    expect(second).not.toBe(first)
    expect((await persister.getSession('again'))!.summary).toBe('two')
    expect(await agent.getSession('again')).toBe(second)
  })

  it('an id whose session left the store (pruned) can be created again, even while its old object is in memory', async () => {
    const { persister, agent } = setup()
    const old = await agent.createSession({ id: 'recycled', summary: 'old' })
    expect(await agent.pruneSessions({ before: '2999-01-01T00:00:00.000Z' })).toBe(1)
    const fresh = await agent.createSession({ id: 'recycled', summary: 'new' })
    expect(fresh).not.toBe(old)
    expect((await persister.getSession('recycled'))!.summary).toBe('new')
    expect(await agent.getSession('recycled')).toBe(fresh)
  })

  it('rejects an id that is not a non-empty string of at most 256 characters without NUL or lone surrogates', async () => {
    const { persister, agent } = setup()
    for (const id of ['', 5, null, {}, 'x'.repeat(257), 'a\u0000b', 'a\ud800b']) {
      const error = await agent.createSession({ id } as never).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(ValidationError)
    }
    expect(await persister.getAllSessions()).toHaveLength(0)
    // Ids are opaque: spaces and case are kept, nothing is trimmed.
    const spaced = await agent.createSession({ id: ' Chat ' })
    expect(spaced.id).toBe(' Chat ')
    expect(await persister.getSession('chat')).toBeNull()
    expect(await persister.getSession(' Chat ')).not.toBeNull()
    expect((await agent.createSession({ id: 'y'.repeat(256) })).id).toHaveLength(256)
  })

  it('chat({ id }) creates the session under that id', async () => {
    const { persister, agent } = setup()
    const session = await agent.chat('hello', { id: 'from-chat' })
    expect(session.id).toBe('from-chat')
    expect(await persister.getMessages('from-chat')).toHaveLength(2)
  })
})
