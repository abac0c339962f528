// Tools at their edges: what needsApproval sees, checks that never settle, strange throws, and a
// response that gives two calls one id.
import { describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../agent/create-agent.js'
import type { ToolResultBlock, ToolUseBlock } from '../contracts/messages.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import type { SessionEvent } from '../session/session-events.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn, toolCallTurn } from '../testing/stream-helpers.js'
import { type Tool, tool } from './tool.js'

const never = new Promise<never>(() => undefined)

/** Never settles the first time (the send that is aborted), answers `value` after that. */
function firstNever<T>(value: T): () => Promise<T> | T {
  let calls = 0
  return () => (calls++ === 0 ? never : value)
}

async function stored(persister: InMemoryPersister, sessionId: string) {
  const messages = await persister.getMessages(sessionId)
  const calls = messages.flatMap((m) =>
    m.type === 'agent' && Array.isArray(m.content)
      ? m.content.filter((b): b is ToolUseBlock => b.type === 'tool_use')
      : [],
  )
  const results = messages.flatMap((m) =>
    m.type === 'tool' && Array.isArray(m.content)
      ? m.content.filter((b): b is ToolResultBlock => b.type === 'tool_result')
      : [],
  )
  return { calls, results }
}

const textOf = (result: ToolResultBlock | undefined) =>
  typeof result?.content === 'string'
    ? result.content
    : result?.content.map((b) => (b.type === 'text' ? b.text : '')).join('')

describe('needsApproval', () => {
  it('gets the input execute gets: parsed by the schema (coerced, defaults filled), so it cannot be bypassed', async () => {
    const seen: unknown[] = []
    const ran: unknown[] = []
    const pay = tool({
      name: 'pay',
      description: 'Pays.',
      inputSchema: z.object({ amount: z.coerce.number(), currency: z.string().default('EUR') }),
      needsApproval: (input) => {
        seen.push(input)
        return input.currency === 'EUR' && input.amount > 100
      },
      execute: (input) => {
        ran.push(input)
        return 'paid'
      },
    })
    const adapter = new ScriptedAdapter([
      toolCallTurn([{ id: 'c1', name: 'pay', input: { amount: '500' } }]),
      toolCallTurn([{ id: 'c2', name: 'pay', input: { amount: 'abc' } }]),
      textTurn('I could not pay.'),
    ])
    const agent = createAgent({ tools: [pay] }, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    const first = await session.send('Pay 500')
    expect(first.pending?.map((p) => p.toolUseId)).toEqual(['c1'])
    expect(seen).toEqual([{ amount: 500, currency: 'EUR' }])
    expect(ran).toEqual([])
    // Denied; the model then sends input the schema refuses: not asked about, not run, the model is told.
    const second = await session.send([{ type: 'tool_approval', toolUseId: 'c1', approved: false }])
    expect(second.text).toBe('I could not pay.')
    // Only parsed input ever reached the check; the refused input never did.
    for (const input of seen) expect(input).toEqual({ amount: 500, currency: 'EUR' })
    expect(ran).toEqual([])
    expect(JSON.stringify(adapter.calls[2]!.prompt)).toContain('Invalid input for pay')
    await agent.close()
  })
})

describe('an abort ends a send that waits on a check', () => {
  const cases: Array<[string, Tool]> = [
    [
      'an async needsApproval that never settles',
      {
        name: 'pay',
        description: 'Pays.',
        inputSchema: { type: 'object' },
        needsApproval: firstNever(false),
        execute: () => 'paid',
      },
    ],
    [
      'a schema whose validate never settles',
      {
        name: 'pay',
        description: 'Pays.',
        inputSchema: { '~standard': { version: 1, vendor: 'test', validate: () => never } },
        execute: () => 'paid',
      },
    ],
    [
      'a schema that never settles, behind a needsApproval',
      {
        name: 'pay',
        description: 'Pays.',
        inputSchema: { '~standard': { version: 1, vendor: 'test', validate: firstNever({ value: {} }) } },
        needsApproval: () => true,
        execute: () => 'paid',
      },
    ],
  ]
  for (const [name, pay] of cases) {
    it(`${name}: abort() rejects the send as aborted and the session takes the next send; close() settles`, async () => {
      const adapter = new ScriptedAdapter([
        toolCallTurn([{ id: 'c1', name: 'pay', input: {} }]),
        textTurn('Hello again.'),
      ])
      const agent = createAgent({ tools: [pay] }, { adapter, persister: new InMemoryPersister() })
      const session = await agent.createSession()
      const sending = session.send('Pay')
      await vi.waitFor(() => expect(adapter.calls).toHaveLength(1))
      await new Promise((resolve) => setTimeout(resolve, 20))
      session.abort()
      await expect(sending).rejects.toMatchObject({ kind: 'aborted' })
      expect(session.state).toBe('aborted')
      expect((await session.send('Hi')).text).toBe('Hello again.')
      await agent.close()
    })
  }
})

describe('strange throws stay the tool’s failure', () => {
  it('Object.create(null), an Error whose message is not a string, and a throwing schema: isError results, the sibling’s result kept', async () => {
    const thrower = (make: () => unknown): Tool => ({
      name: `t${Math.random().toString(36).slice(2, 8)}`,
      description: 'Throws.',
      inputSchema: { type: 'object' },
      execute: () => {
        throw make()
      },
    })
    const bare = { ...thrower(() => Object.create(null)), name: 'bare' }
    const odd = {
      ...thrower(() => Object.assign(new Error('x'), { message: { code: 'E42' } })),
      name: 'odd',
    }
    const badSchema: Tool = {
      name: 'schema',
      description: 'Its schema throws.',
      inputSchema: {
        '~standard': {
          version: 1,
          vendor: 'test',
          validate: () => {
            throw Object.create(null)
          },
        },
      },
      execute: () => 'never',
    }
    const charge: Tool = {
      name: 'charge',
      description: 'Charges.',
      inputSchema: { type: 'object' },
      execute: () => 'charged',
    }
    for (const durability of ['sync', 'async'] as const) {
      const persister = new InMemoryPersister()
      const adapter = new ScriptedAdapter([
        toolCallTurn([
          { id: 'a', name: 'bare', input: {} },
          { id: 'b', name: 'odd', input: {} },
          { id: 'c', name: 'schema', input: {} },
          { id: 'd', name: 'charge', input: {} },
        ]),
        textTurn('Done.'),
      ])
      const agent = createAgent({ tools: [bare, odd, badSchema, charge], durability }, { adapter, persister })
      const session = await agent.createSession()
      expect((await session.send('go')).text).toBe('Done.')
      await agent.close()
      const { results } = await stored(persister, session.id)
      const byId = new Map(results.map((r) => [r.toolUseId, r]))
      expect(byId.get('a')).toMatchObject({ isError: true })
      expect(textOf(byId.get('a'))).not.toBe('')
      expect(byId.get('b')).toMatchObject({ isError: true })
      expect(textOf(byId.get('b'))).toBe('{"code":"E42"}')
      expect(byId.get('c')).toMatchObject({ isError: true })
      expect(textOf(byId.get('c'))).toContain("test schema's validate() threw")
      expect(byId.get('d')).toEqual({
        type: 'tool_result',
        toolUseId: 'd',
        content: [{ type: 'text', text: 'charged' }],
      })
      // What the model got next is the same, well-formed content.
      expect(JSON.stringify(adapter.calls[1]!.prompt)).toContain('charged')
      for (const result of results)
        for (const block of result.content as Array<{ type: string; text?: unknown }>)
          expect(typeof block.text).toBe('string')
    }
  })
})

describe('one response, two calls with one id', () => {
  it('keeps each call under its own id with its own result, in the events and on disk', async () => {
    const weather: Tool<{ city: string }> = {
      name: 'weather',
      description: 'Weather.',
      inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
      execute: (input) => `sunny in ${input.city}`,
    }
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      toolCallTurn([
        { id: 'call_0', name: 'weather', input: { city: 'Paris' } },
        { id: 'call_0', name: 'weather', input: { city: 'Oslo' } },
      ]),
      textTurn('Both sunny.'),
    ])
    const agent = createAgent({ tools: [weather] }, { adapter, persister })
    const session = await agent.createSession()
    const events: SessionEvent[] = []
    session.subscribe((event) => events.push(event))
    await session.send('Paris and Oslo?')
    await agent.close()
    const { calls, results } = await stored(persister, session.id)
    expect(calls.map((c) => [c.id, c.input])).toEqual([
      ['call_0', { city: 'Paris' }],
      ['call_0_2', { city: 'Oslo' }],
    ])
    expect(results.map((r) => [r.toolUseId, textOf(r)])).toEqual([
      ['call_0', 'sunny in Paris'],
      ['call_0_2', 'sunny in Oslo'],
    ])
    expect(events.flatMap((e) => (e.type === 'tool-call' ? [e.id] : []))).toEqual(['call_0', 'call_0_2'])
    // The model gets each result under the id of its call.
    const history = adapter.calls[1]!.options.history!
    expect(JSON.stringify(history)).toContain('call_0_2')
  })
})

describe('a batch a dead process left without results', () => {
  it('is closed by the next message with results that do not claim the calls were not run', async () => {
    const store = new InMemoryPersister()
    const lookup: Tool = {
      name: 'lookup',
      description: 'Looks up.',
      inputSchema: { type: 'object' },
      execute: () => 'found',
    }
    const pay: Tool = { ...lookup, name: 'pay', needsApproval: true }
    const first = createAgent(
      { tools: [lookup, pay] },
      { adapter: new ScriptedAdapter([textTurn('hello')]), persister: store },
    )
    const session = await first.createSession()
    await session.send('hi')
    await first.close()
    // What a process killed while `lookup` ran leaves: the reply with its call, no results, `active`.
    const now = new Date().toISOString()
    await store.saveMessage(session.id, {
      id: 'reply-2',
      sessionId: session.id,
      seq: 2,
      type: 'user',
      content: 'look it up',
      timestamp: now,
    })
    await store.saveMessage(session.id, {
      id: 'reply-3',
      sessionId: session.id,
      seq: 3,
      type: 'agent',
      content: [{ type: 'tool_use', id: 'c1', name: 'lookup', input: {} }],
      stopReason: 'tool_use',
      timestamp: now,
    })
    await store.saveSession({ ...(await store.getSession(session.id))!, state: 'active' })
    const second = createAgent(
      { tools: [lookup, pay] },
      { adapter: new ScriptedAdapter([textTurn('ok')]), persister: store },
    )
    await second.initialize()
    const reopened = (await second.getSession(session.id))!
    expect(reopened.state).toBe('interrupted')
    await reopened.send('never mind')
    await second.close()
    const { results } = await stored(store, session.id)
    expect(results).toHaveLength(1)
    expect(results[0]).toMatchObject({ toolUseId: 'c1', isError: true })
    expect(textOf(results[0])).toMatch(/^No result: .*whether it ran is not known/)
  })
})
