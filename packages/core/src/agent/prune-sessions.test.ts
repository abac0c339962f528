import { afterEach, describe, expect, it, vi } from 'vitest'
import type { AgentPersister, SessionData } from '../contracts/agent-persister.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { SessionStateError } from '../errors/session-state-error.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn, toolCallTurn } from '../testing/stream-helpers.js'
import { agentTool } from '../tools/agent-tool.js'
import type { Tool } from '../tools/tool.js'
import { createAgent } from './create-agent.js'
import type { Logger } from '../util/logger.js'
import { pruneSessions, startRetention } from './prune-sessions.js'

const NOW = Date.parse('2026-03-01T00:00:00.000Z')
const DAY = 86_400_000

function session(id: string, daysAgo: number, fields: Partial<SessionData> = {}): SessionData {
  const at = new Date(NOW - daysAgo * DAY).toISOString()
  return {
    id,
    summary: '',
    createdAt: at,
    lastActivity: at,
    state: 'idle',
    tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    ...fields,
  }
}

async function ids(persister: AgentPersister): Promise<string[]> {
  return (await persister.getAllSessions()).map((data) => data.id).sort()
}

afterEach(() => {
  vi.useRealTimers()
})

describe('pruneSessions', () => {
  it('deletes sessions of the scope inactive for longer than inactiveForMs, with their messages and children', async () => {
    const persister = new InMemoryPersister()
    await persister.saveSession(session('old', 40, { userId: 'u' }))
    await persister.saveSession(session('child', 1, { userId: 'u', parentSessionId: 'old' }))
    await persister.saveSession(session('recent', 10, { userId: 'u' }))
    await persister.saveSession(session('other-user', 40, { userId: 'v' }))
    await persister.saveMessage('old', {
      id: 'm',
      sessionId: 'old',
      seq: 0,
      type: 'user',
      content: 'hi',
      timestamp: session('old', 40).createdAt,
    })
    const removed = await pruneSessions(persister, { userId: 'u' }, { inactiveForMs: 30 * DAY }, () => NOW)
    expect(removed).toBe(2)
    expect(await ids(persister)).toEqual(['other-user', 'recent'])
    expect(await persister.getMessages('old')).toEqual([])
  })

  it('never prunes an active session unless states names it', async () => {
    const persister = new InMemoryPersister()
    await persister.saveSession(session('running', 40, { state: 'active' }))
    await persister.saveSession(session('failed', 40, { state: 'error' }))
    expect(await pruneSessions(persister, {}, { inactiveForMs: DAY }, () => NOW)).toBe(1)
    expect(await ids(persister)).toEqual(['running'])
    expect(await pruneSessions(persister, {}, { inactiveForMs: DAY, states: ['active'] }, () => NOW)).toBe(1)
    expect(await ids(persister)).toEqual([])
  })

  it('uses the earlier cut-off when both before and inactiveForMs are given; before is strict', async () => {
    const persister = new InMemoryPersister()
    await persister.saveSession(session('a', 20))
    await persister.saveSession(session('b', 10))
    const before = new Date(NOW - 10 * DAY)
    expect(await pruneSessions(persister, {}, { before, inactiveForMs: 15 * DAY }, () => NOW)).toBe(1)
    expect(await ids(persister)).toEqual(['b'])
    expect(await pruneSessions(persister, {}, { before: before.toISOString() }, () => NOW)).toBe(0)
    expect(await pruneSessions(persister, {}, { before: new Date(before.getTime() + 1) }, () => NOW)).toBe(1)
  })

  it('rejects options without a cut-off or with bad values, deleting nothing', async () => {
    const persister = new InMemoryPersister()
    await persister.saveSession(session('a', 400))
    for (const options of [
      {},
      { inactiveForMs: -1 },
      { inactiveForMs: 1.5 },
      { before: 'someday' },
      { before: 42 },
      // A misspelled key or state would otherwise delete more (or less) than asked.
      { inactiveForMs: 1000, state: ['error'] },
      { inactiveForMs: 1000, states: ['eror'] },
      { inactiveForMs: 1000, states: 'error' },
      null,
    ]) {
      await expect(pruneSessions(persister, {}, options as never)).rejects.toMatchObject({
        code: 'VALIDATION',
      })
    }
    expect(await ids(persister)).toEqual(['a'])
  })

  it('an age beyond the range of dates prunes nothing, never a bare RangeError', async () => {
    const persister = new InMemoryPersister()
    await persister.saveSession(session('a', 400))
    expect(await pruneSessions(persister, {}, { inactiveForMs: Number.MAX_SAFE_INTEGER })).toBe(0)
    await expect(pruneSessions(persister, {}, { inactiveForMs: 1e20 })).rejects.toMatchObject({
      code: 'VALIDATION',
      message: expect.stringContaining('safe integer'),
    })
    expect(await ids(persister)).toEqual(['a'])
  })

  it('AgentConfig.retention with an unknown state is a ConfigurationError, not a timer that never prunes', () => {
    const deps = { adapter: new ScriptedAdapter([]), persister: new InMemoryPersister() }
    for (const states of [['nope'], 'idle', [42]]) {
      expect(() => createAgent({ retention: { inactiveForMs: 1000, states } } as never, deps)).toThrow(
        expect.objectContaining({
          code: 'CONFIGURATION',
          message: expect.stringContaining('retention.states'),
        }),
      )
    }
    expect(() =>
      createAgent({ retention: { inactiveForMs: 1000, states: ['idle', 'error'] } }, deps),
    ).not.toThrow()
  })

  it('rejects with CONFIGURATION when the persister has no retention capability', async () => {
    const persister = new InMemoryPersister()
    const withoutRetention = { ...persister, deleteSessions: undefined } as unknown as AgentPersister
    await expect(pruneSessions(withoutRetention, {}, { inactiveForMs: 1 })).rejects.toMatchObject({
      code: 'CONFIGURATION',
    })
  })
})

describe('AgentConfig.retention', () => {
  it('with a persister that cannot delete, initialize() fails with CONFIGURATION instead of a timer that never prunes', async () => {
    const persister = new InMemoryPersister()
    const withoutRetention = new Proxy(persister, {
      get: (target, key) =>
        key === 'deleteSessions'
          ? undefined
          : (Reflect.get(target, key, target)?.bind?.(target) ?? Reflect.get(target, key)),
    }) as AgentPersister
    const agent = createAgent(
      { retention: { inactiveForMs: 1 } },
      { adapter: new ScriptedAdapter(), persister: withoutRetention },
    )
    await expect(agent.initialize()).rejects.toMatchObject({
      code: 'CONFIGURATION',
      message: expect.stringMatching(/retention needs a persister with the retention capability/),
    })
    // The same persister without retention configured is fine.
    await createAgent({}, { adapter: new ScriptedAdapter(), persister: withoutRetention }).initialize()
  })
})

describe('startRetention', () => {
  function recordingLogger(): Logger & { lines: string[] } {
    const lines: string[] = []
    const log = (message: string) => void lines.push(message)
    return { lines, debug: log, info: log, warn: log, error: log }
  }

  it('prunes at once and then every intervalMs, never overlapping, and stop() waits for a running prune', async () => {
    vi.useFakeTimers()
    let calls = 0
    let running = 0
    let maxRunning = 0
    const prune = async (): Promise<number> => {
      calls++
      running++
      maxRunning = Math.max(maxRunning, running)
      await new Promise((resolve) => setTimeout(resolve, 150))
      running--
      return 1
    }
    const logger = recordingLogger()
    const timer = startRetention(prune, { intervalMs: 100, logger })
    expect(calls).toBe(1)
    await vi.advanceTimersByTimeAsync(1000)
    expect(maxRunning).toBe(1)
    expect(calls).toBeGreaterThanOrEqual(4)
    expect(calls).toBeLessThanOrEqual(6)
    const stopping = timer.stop()
    await vi.advanceTimersByTimeAsync(200)
    await stopping
    const after = calls
    await vi.advanceTimersByTimeAsync(1000)
    expect(calls).toBe(after)
    expect(running).toBe(0)
    expect(logger.lines).toContain('agentx: retention pruned sessions')
  })

  it('logs a failure and tries again at the next interval', async () => {
    vi.useFakeTimers()
    let calls = 0
    const logger = recordingLogger()
    const timer = startRetention(
      async () => {
        calls++
        if (calls === 1) throw new Error('database is locked')
        return 0
      },
      { intervalMs: 50, logger },
    )
    await vi.advanceTimersByTimeAsync(120)
    expect(calls).toBe(3)
    expect(logger.lines).toEqual(['agentx: retention failed; retrying at the next interval'])
    await timer.stop()
  })

  it("runs on an unref'd timer and rejects a bad interval", async () => {
    const spy = vi.spyOn(globalThis, 'setInterval')
    const timer = startRetention(async () => 0, {})
    expect(spy.mock.calls[0]![1]).toBe(3_600_000)
    expect((spy.mock.results[0]!.value as NodeJS.Timeout).hasRef()).toBe(false)
    await timer.stop()
    spy.mockRestore()
    expect(() => startRetention(async () => 0, { intervalMs: 0 })).toThrow(/intervalMs/)
    // Node.js runs a longer timer after 1 ms: retention would then prune in a tight loop.
    expect(() => startRetention(async () => 0, { intervalMs: 2 ** 31 })).toThrow(/at most 2147483647/)
  })

  it('AgentConfig rejects timer settings longer than Node.js timers run, with ConfigurationError', () => {
    const deps = { adapter: new ScriptedAdapter([]), persister: new InMemoryPersister() }
    const month = 30 * DAY
    for (const config of [
      { retention: { inactiveForMs: DAY, intervalMs: month } },
      { checkpointIntervalMs: month },
      { leaseTtlMs: month },
    ]) {
      expect(() => createAgent(config, deps)).toThrow(expect.objectContaining({ code: 'CONFIGURATION' }))
    }
    expect(() =>
      createAgent({ retention: { inactiveForMs: DAY, intervalMs: 2 ** 31 - 1 } }, deps),
    ).not.toThrow()
  })
})

describe('agent.pruneSessions and the sessions in memory', () => {
  it('a pruned session the agent holds becomes deleted: getSession answers undefined, calls reject', async () => {
    const persister = new InMemoryPersister()
    const agent = createAgent({}, { adapter: new ScriptedAdapter([textTurn('hi')]), persister })
    const old = await agent.createSession({ id: 'old' })
    const fresh = await agent.createSession({ id: 'fresh' })
    await old.send('hello')
    await old.flush()
    // Make `old` look inactive for a day in the store (as if its last send was yesterday).
    const stored = (await persister.getSession('old'))!
    await persister.saveSession({ ...stored, lastActivity: new Date(Date.now() - DAY).toISOString() })
    expect(await agent.pruneSessions({ inactiveForMs: DAY / 2 })).toBe(1)
    expect(await agent.getSession('old')).toBeUndefined()
    expect(old.state).toBe('deleted')
    await expect(old.send('again')).rejects.toBeInstanceOf(SessionStateError)
    expect(await agent.getSession('fresh')).toBe(fresh)
    expect(fresh.state).toBe('created')
    await agent.close()
  })

  for (const durability of ['sync', 'async'] as const) {
    it(`with a store without leases, pruning a session in the middle of a send leaves nothing of it stored (${durability})`, async () => {
      // The store cannot tell a running send from a dead one: naming `active` prunes it.
      const persister = withoutLeases(new InMemoryPersister())
      const adapter = new ScriptedAdapter([
        { events: [{ type: 'text-delta', text: 'half' }], waitForAbort: true },
      ])
      const agent = createAgent({ durability }, { adapter, persister })
      const running = await agent.createSession({ id: 'running' })
      const sent = running.send('hi').catch((error: unknown) => error)
      await vi.waitFor(() => expect(adapter.calls).toHaveLength(1))
      const future = new Date(Date.now() + DAY)
      expect(await agent.pruneSessions({ before: future, states: ['active'] })).toBe(1)
      // The send says why it ended (before: an abort the caller never asked for).
      expect(await sent).toMatchObject({ name: 'SessionStateError', state: 'deleted' })
      expect(running.state).toBe('deleted')
      await agent.close()
      expect(await persister.getSession('running')).toBeNull()
      expect(await persister.getMessages('running')).toEqual([])
      const again = createAgent({}, { adapter, persister })
      expect(await again.getSessions()).toEqual([])
      await again.close()
    })
  }
})

describe('pruning with leases', () => {
  it('never prunes a session a send of this agent runs in, even with `active` named; the send goes on', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      { events: [{ type: 'text-delta', text: 'half' }], waitForAbort: true },
    ])
    const agent = createAgent({}, { adapter, persister })
    const running = await agent.createSession({ id: 'running' })
    const sent = running.send('hi').catch((error: unknown) => error)
    await vi.waitFor(() => expect(adapter.calls).toHaveLength(1))
    expect(await agent.pruneSessions({ before: new Date(Date.now() + DAY), states: ['active'] })).toBe(0)
    expect(running.state).toBe('active')
    running.abort()
    expect(await sent).toMatchObject({ kind: 'aborted' })
    await running.flush()
    expect((await persister.getSession('running'))?.state).toBe('aborted')
    expect((await persister.getMessages('running')).map((m) => m.type)).toEqual(['user', 'agent'])
    await agent.close()
  })
})

/** The same store with the `leases` capability taken away. */
function withoutLeases(persister: InMemoryPersister): AgentPersister {
  const hidden = new Set(['claimSession', 'releaseSession', 'markInterrupted'])
  return new Proxy(persister, {
    get(target, property, receiver) {
      if (typeof property === 'string' && hidden.has(property)) return undefined
      const value = Reflect.get(target, property, receiver)
      return typeof value === 'function' ? value.bind(target) : value
    },
    has(target, property) {
      return !(typeof property === 'string' && hidden.has(property)) && Reflect.has(target, property)
    },
  }) as AgentPersister
}

describe('pruneSessions and sub-agents', () => {
  it('never deletes a child on its own: a parent that waits on its child can still be answered', async () => {
    const persister = new InMemoryPersister()
    const danger: Tool = {
      name: 'danger',
      description: 'needs a yes',
      inputSchema: { type: 'object' },
      needsApproval: true,
      execute: async () => 'done',
    }
    const adapter = new ScriptedAdapter([
      toolCallTurn([{ id: 'p1', name: 'helper', input: { task: 'do it' } }]),
      toolCallTurn([{ id: 'k1', name: 'danger', input: {} }]),
      textTurn('child done'),
      textTurn('parent done'),
    ])
    const agent = createAgent(
      { tools: [agentTool('helper')], agents: { helper: { tools: [danger] } } },
      { adapter, persister },
    )
    const parent = await agent.createSession()
    expect((await parent.send('go')).pending?.map((call) => call.toolUseId)).toEqual(['k1'])
    await parent.flush()
    // The child's last activity is older than the cut, the parent's is not.
    const stored = (await persister.getAllSessions()).find((data) => data.parentSessionId === parent.id)!
    await persister.saveSession({ ...stored, lastActivity: '2000-01-01T00:00:00.000Z' })
    // Before, the child went alone and the parent waited for a call nobody could answer any more.
    expect(await agent.pruneSessions({ before: new Date('2001-01-01T00:00:00.000Z') })).toBe(0)
    expect((await parent.getPending()).map((call) => call.toolUseId)).toEqual(['k1'])
    const result = await parent.send([{ type: 'tool_approval', toolUseId: 'k1', approved: true }])
    expect(result.text).toBe('parent done')
    await agent.close()
  })
})
