// agent.withScope() (DESIGN §10.2, seed 001: one process, many users): views that see and create
// only their scope's sessions, sharing the agent's plugins, cache and lifecycle.
import { describe, expect, it } from 'vitest'
import { isAgentError } from '../errors/agent-error.js'
import { ValidationError } from '../errors/validation-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import type { SessionEvent } from '../session/session-events.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn } from '../testing/stream-helpers.js'
import type { AgentCore } from './agent-core.js'
import { createAgent } from './create-agent.js'

function setup(config: { userId?: string; appName?: string } = {}) {
  const persister = new InMemoryPersister()
  const adapter = new ScriptedAdapter([textTurn('one'), textTurn('two'), textTurn('three'), textTurn('four')])
  const agent = createAgent({ appName: 'support', ...config }, { adapter, persister })
  return { persister, adapter, agent }
}

const codeOf = (error: unknown) => (isAgentError(error) ? error.code : String(error))

describe('agent.withScope()', () => {
  it('a view creates sessions in its scope and stores the scope with them', async () => {
    const { persister, agent } = setup()
    const alice = agent.withScope({ userId: 'alice' })
    const session = await alice.createSession()
    const stored = (await persister.getSession(session.id))!
    expect(stored.userId).toBe('alice')
    expect(stored.appName).toBe('support')
    expect(session.userId).toBe('alice')
  })

  it("a view sees only its own sessions: getSession, getSessions and deleteSession ignore another user's", async () => {
    const { persister, agent } = setup()
    const alice = agent.withScope({ userId: 'alice' })
    const bob = agent.withScope({ userId: 'bob' })
    const a = await alice.createSession({ summary: 'a' })
    const b = await bob.createSession({ summary: 'b' })

    expect(await alice.getSession(b.id)).toBeUndefined()
    expect(await bob.getSession(a.id)).toBeUndefined()
    expect((await alice.getSessions()).map((s) => s.id)).toEqual([a.id])
    expect((await bob.getSessions()).map((s) => s.id)).toEqual([b.id])
    await alice.deleteSession(b.id)
    expect(await persister.getSession(b.id)).not.toBeNull()
    // The agent itself sees both.
    expect((await agent.getSessions()).map((s) => s.id).sort()).toEqual([a.id, b.id].sort())
  })

  it('a view does not see a session another view holds in memory (the cache is shared, the scope is checked)', async () => {
    const { agent } = setup()
    const alice = agent.withScope({ userId: 'alice' })
    const bob = agent.withScope({ userId: 'bob' })
    const a = await alice.createSession()
    expect((agent as AgentCore).sessionCacheStats().isKept(a.id)).toBe(true)
    expect(await bob.getSession(a.id)).toBeUndefined()
  })

  it('views share the session cache: the agent and every view return the same object', async () => {
    const { agent } = setup()
    const alice = agent.withScope({ userId: 'alice' })
    const again = agent.withScope({ userId: 'alice' })
    const session = await alice.createSession()
    expect(await again.getSession(session.id)).toBe(session)
    expect(await agent.getSession(session.id)).toBe(session)
    expect((await again.getSessions())[0]).toBe(session)
  })

  it('views share the plugins: one initialize, one adapter, one persister', async () => {
    const { persister, adapter, agent } = setup()
    const alice = agent.withScope({ userId: 'alice' }) as AgentCore
    expect(await alice.getPersister()).toBe(persister)
    expect(await alice.getAdapter()).toBe(adapter)
    const session = await alice.createSession()
    await session.send('hello')
    expect(adapter.calls).toHaveLength(1)
  })

  it('chat on a view creates the session in its scope', async () => {
    const { persister, agent } = setup()
    const session = await agent.withScope({ userId: 'carol' }).chat('hi')
    expect((await persister.getSession(session.id))!.userId).toBe('carol')
  })

  it("a view's subscribe hears only its scope's sessions; the agent's hears all", async () => {
    const { agent } = setup()
    const alice = agent.withScope({ userId: 'alice' })
    const bob = agent.withScope({ userId: 'bob' })
    const heardByAlice: string[] = []
    const heardByAgent: string[] = []
    alice.subscribe((event: SessionEvent, session) => {
      if (event.type === 'done') heardByAlice.push(session.id)
    })
    agent.subscribe((event, session) => {
      if (event.type === 'done') heardByAgent.push(session.id)
    })
    const a = await alice.createSession()
    const b = await bob.createSession()
    await a.send('one')
    await b.send('two')
    expect(heardByAlice).toEqual([a.id])
    expect(heardByAgent).toEqual([a.id, b.id])
  })

  it('one listener subscribed on the agent and on a view: each subscription keeps its own scope and unsubscribes alone', async () => {
    const { agent } = setup()
    const alice = agent.withScope({ userId: 'alice' })
    const heard: string[] = []
    const listener = (event: SessionEvent, session: { id: string }) => {
      if (event.type === 'done') heard.push(session.id)
    }
    const stopAgent = agent.subscribe(listener)
    const stopAlice = alice.subscribe(listener)
    const a = await alice.createSession()
    const b = await agent.withScope({ userId: 'bob' }).createSession()
    await a.send('one')
    await b.send('two')
    expect(heard).toEqual([a.id, a.id, b.id])
    stopAgent()
    heard.length = 0
    await a.send('three')
    expect(heard).toEqual([a.id])
    stopAlice()
    await a.send('four')
    expect(heard).toEqual([a.id])
  })

  it('pruneSessions on a view deletes only its scope', async () => {
    const { persister, agent } = setup()
    const a = await agent.withScope({ userId: 'alice' }).createSession()
    const b = await agent.withScope({ userId: 'bob' }).createSession()
    const removed = await agent
      .withScope({ userId: 'alice' })
      .pruneSessions({ before: '2999-01-01T00:00:00.000Z' })
    expect(removed).toBe(1)
    expect(await persister.getSession(a.id)).toBeNull()
    expect(await persister.getSession(b.id)).not.toBeNull()
  })

  it('only narrows: a dimension the agent fixed can be repeated but not changed (ValidationError)', async () => {
    const { persister, agent } = setup({ userId: 'alice' })
    expect(() => agent.withScope({ userId: 'bob' })).toThrow(ValidationError)
    expect(() => agent.withScope({ appName: 'billing' })).toThrow(ValidationError)
    const same = agent.withScope({ userId: 'alice' })
    expect((await same.createSession()).userId).toBe('alice')
    // A view of a view narrows further and can never widen.
    const view = createAgent({}, { adapter: new ScriptedAdapter([]), persister }).withScope({ appName: 'x' })
    const narrower = view.withScope({ userId: 'dave' })
    const session = await narrower.createSession()
    expect(await persister.getSession(session.id)).toMatchObject({ userId: 'dave', appName: 'x' })
    expect(() => narrower.withScope({ appName: 'y' })).toThrow(ValidationError)
  })

  it('rejects a malformed scope with ValidationError', () => {
    const { agent } = setup()
    for (const scope of [undefined, null, 'alice', { userId: '' }, { userId: 5 }, { user: 'alice' }]) {
      expect(() => agent.withScope(scope as never)).toThrow(ValidationError)
    }
  })

  it('close() on a view rejects with SCOPED_VIEW and leaves the agent running; closing the agent closes every view', async () => {
    const { persister, agent } = setup()
    const alice = agent.withScope({ userId: 'alice' })
    const session = await alice.createSession()
    expect(codeOf(await alice.close().catch((error: unknown) => error))).toBe('SCOPED_VIEW')
    await session.send('still works')
    expect(await alice.getSession(session.id)).toBe(session)

    await agent.close()
    expect(codeOf(await alice.createSession().catch((error: unknown) => error))).toBe('AGENT_CLOSED')
    expect(codeOf(await alice.getSessions().catch((error: unknown) => error))).toBe('AGENT_CLOSED')
    expect(codeOf(await session.send('x').catch((error: unknown) => error))).toBe('AGENT_CLOSED')
    // A view made after close is no way around it.
    const late = agent.withScope({ userId: 'late' })
    expect(codeOf(await late.createSession().catch((error: unknown) => error))).toBe('AGENT_CLOSED')
    expect(await persister.getAllSessions()).toHaveLength(1)
  })

  it('a view made before initialize() initializes the shared agent once', async () => {
    const { persister, agent } = setup()
    const views = ['u1', 'u2', 'u3'].map((userId) => agent.withScope({ userId }))
    await Promise.all(views.map((view) => view.createSession()))
    expect(await persister.getAllSessions()).toHaveLength(3)
    expect(await (agent as AgentCore).getPersister()).toBe(persister)
    expect((agent as AgentCore).sessionCacheStats().kept).toBe(3)
  })
})
