import { describe, expect, it } from 'vitest'
import type { SessionFactory } from '../contracts/session-factory.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { DefaultSessionFactory } from '../session/default-session-factory.js'
import type { SessionEvent } from '../session/session-events.js'
import { ScriptedAdapter, textTurn } from '../testing/index.js'
import type { AgentCore } from './agent-core.js'
import { createAgent } from './create-agent.js'

/** Whether the agent's session cache keeps the session with this id. */
const kept = (agent: unknown, id: string): boolean => (agent as AgentCore).sessionCacheStats().isKept(id)

/** The event types one listener heard, per session id. */
function recorder() {
  const heard: string[] = []
  const listener = (event: SessionEvent, session: { id: string }): void => {
    heard.push(`${session.id}:${event.type}`)
  }
  return { heard, listener }
}

describe('agent.subscribe: the agent forwards events only while it has listeners', () => {
  it('a listener added after a session ran hears its next send; removed, it hears nothing more', async () => {
    const adapter = new ScriptedAdapter([
      textTurn('one'),
      textTurn('two'),
      textTurn('three'),
      textTurn('four'),
    ])
    const agent = createAgent({}, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession({ id: 's' })
    await session.send('first')

    const a = recorder()
    const b = recorder()
    const stopA = agent.subscribe(a.listener)
    const stopB = agent.subscribe(b.listener)
    await session.send('second')
    expect(a.heard).toContain('s:text-delta')
    expect(a.heard).toContain('s:done')
    expect(b.heard).toEqual(a.heard)

    // One of two removed: the other still hears; both removed: nothing is forwarded.
    stopA()
    const before = a.heard.length
    await session.send('third')
    expect(a.heard).toHaveLength(before)
    expect(b.heard.filter((entry) => entry === 's:done')).toHaveLength(2)
    stopB()
    stopB()
    const c = recorder()
    const stopC = agent.subscribe(c.listener)
    stopC()
    const heardByB = b.heard.length
    const seen: string[] = []
    session.subscribe((event) => seen.push(event.type))
    await session.send('fourth')
    // The session's own listener heard the send; no agent listener did.
    expect(seen).toContain('done')
    expect(b.heard).toHaveLength(heardByB)
    expect(c.heard).toEqual([])
    await agent.close()
  })

  it('a listener added before initialize() hears every session; sessions made later too', async () => {
    const adapter = new ScriptedAdapter([textTurn('one'), textTurn('two')])
    const agent = createAgent({}, { adapter, persister: new InMemoryPersister() })
    const { heard, listener } = recorder()
    agent.subscribe(listener)
    const first = await agent.createSession({ id: 'a' })
    await first.send('hi')
    const second = await agent.createSession({ id: 'b' })
    await second.send('hi')
    expect(heard.filter((entry) => entry.endsWith(':done'))).toEqual(['a:done', 'b:done'])
    await agent.close()
  })

  it('a session the cache dropped but the application holds is reached by a listener added later', async () => {
    const adapter = new ScriptedAdapter([textTurn('one'), textTurn('two'), textTurn('three')])
    const agent = createAgent({ sessionCache: { max: 1 } }, { adapter, persister: new InMemoryPersister() })
    const held = await agent.createSession({ id: 'held' })
    await held.send('hi')
    const other = await agent.createSession({ id: 'other' })
    await other.send('hi')
    expect(kept(agent, 'held')).toBe(false)

    const { heard, listener } = recorder()
    agent.subscribe(listener)
    await held.send('again')
    expect(heard).toContain('held:done')
    await agent.close()
  })

  it("a deleted session's last state event still reaches the agent's listeners, and nothing after", async () => {
    const adapter = new ScriptedAdapter([textTurn('one')])
    const agent = createAgent({}, { adapter, persister: new InMemoryPersister() })
    const { heard, listener } = recorder()
    agent.subscribe(listener)
    const session = await agent.createSession({ id: 'gone' })
    const states: string[] = []
    agent.subscribe((event) => event.type === 'state' && states.push(event.state))
    await agent.deleteSession('gone')
    expect(states.at(-1)).toBe('deleted')
    expect(kept(agent, 'gone')).toBe(false)
    expect(heard.at(-1)).toBe('gone:state')
    expect(await agent.getSession('gone')).toBeUndefined()
    expect(session.state).toBe('deleted')
    await agent.close()
  })

  it("a third-party factory's sessions (no watchState) are still kept and forgotten by the cache", async () => {
    const defaults = new DefaultSessionFactory()
    // A session object that shows only the public Session surface and subscribe.
    const opaque: SessionFactory = {
      createSession: (init) => {
        const session = defaults.createSession(init)
        return new Proxy(session, {
          get: (target, key) => {
            if (key === 'watchState') return undefined
            const value = Reflect.get(target, key, target)
            return typeof value === 'function' ? value.bind(target) : value
          },
        })
      },
    }
    const adapter = new ScriptedAdapter([textTurn('one')])
    const agent = createAgent({}, { adapter, persister: new InMemoryPersister(), sessionFactory: opaque })
    const { heard, listener } = recorder()
    agent.subscribe(listener)
    const session = await agent.createSession({ id: 'x' })
    await session.send('hi')
    expect(heard).toContain('x:done')
    expect(kept(agent, 'x')).toBe(true)
    await agent.deleteSession('x')
    expect(kept(agent, 'x')).toBe(false)
    expect(await agent.getSession('x')).toBeUndefined()
    await agent.close()
  })
})
