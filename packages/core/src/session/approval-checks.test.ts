// The edges of human input (DESIGN §10.1): what a needsApproval check is given, and which answers
// to a client tool are refused before anything is written.
import { describe, expect, it } from 'vitest'
import { createAgent } from '../agent/create-agent.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn, toolCallTurn } from '../testing/stream-helpers.js'
import type { Tool, ToolContext } from '../tools/tool.js'
import type { SessionEvent } from './session-events.js'

describe('needsApproval', () => {
  it('gets exactly the documented ToolContext fields, nothing of the kernel', async () => {
    const contexts: ToolContext[] = []
    const seenTypes: string[][] = []
    const lookup: Tool = {
      name: 'lookup',
      description: 'l',
      inputSchema: { type: 'object' },
      execute: () => 'found',
      needsApproval: (_input, context) => {
        contexts.push(context)
        seenTypes.push(context.messages.map((message) => message.type))
        const internal = context as unknown as { emit?: (event: SessionEvent) => void }
        internal.emit?.({ type: 'state', state: 'deleted', previous: 'active' })
        return false
      },
    }
    const adapter = new ScriptedAdapter([
      toolCallTurn([{ id: 'l1', name: 'lookup', input: {} }]),
      textTurn('ok'),
    ])
    const agent = createAgent({ tools: [lookup] }, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    const states: string[] = []
    session.subscribe((event) => {
      if (event.type === 'state') states.push(event.state)
    })
    await session.send('go')
    expect(contexts).toHaveLength(1)
    const context = contexts[0]!
    expect(Object.keys(context).sort()).toEqual(['messages', 'sessionId', 'signal', 'toolCallId'])
    expect(context).toMatchObject({ sessionId: session.id, toolCallId: 'l1' })
    expect(context.signal).toBeInstanceOf(AbortSignal)
    expect(seenTypes).toEqual([['user', 'agent']])
    expect(states).toEqual(['active', 'idle'])
    await agent.close()
  })

  it('a tool or check that changes the messages it was given changes nothing of the session', async () => {
    const attempts: string[] = []
    const tamper = (messages: readonly unknown[]): void => {
      const list = messages as unknown[]
      for (const attempt of [
        () => list.push({ bogus: true }),
        () => list.splice(0),
        () => (list.length = 0),
      ]) {
        try {
          attempt()
          attempts.push('changed')
        } catch (error) {
          attempts.push((error as Error).constructor.name)
        }
      }
    }
    const peek: Tool = {
      name: 'peek',
      description: 'p',
      inputSchema: { type: 'object' },
      execute: (_input, context) => {
        tamper(context.messages)
        return `saw ${context.messages.length}`
      },
      needsApproval: (_input, context) => {
        tamper(context.messages)
        return false
      },
    }
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      toolCallTurn([{ id: 'p1', name: 'peek', input: {} }]),
      textTurn('ok'),
    ])
    const agent = createAgent({ tools: [peek] }, { adapter, persister })
    const session = await agent.createSession()
    await session.send('go')
    // Before, the tool got the session's own array: it emptied the history, the next messages took
    // seq 0 and 1 again, and the stored user message and reply were overwritten.
    expect(attempts).toEqual(Array(6).fill('TypeError'))
    const expected = [
      [0, 'user'],
      [1, 'agent'],
      [2, 'tool'],
      [3, 'agent'],
    ]
    expect((await session.getMessages()).map((message) => [message.seq, message.type])).toEqual(expected)
    await session.flush()
    expect((await persister.getMessages(session.id)).map((message) => [message.seq, message.type])).toEqual(
      expected,
    )
    expect(adapter.calls[1]!.options.history!.map((message) => message.type)).toEqual(['user', 'agent'])
    await agent.close()
  })
})

describe('answers to a client tool', () => {
  it.each([
    ['an empty string', ''],
    ['an empty array', []],
  ])('with %s as content reject with a ValidationError and write nothing', async (_label, content) => {
    const ask: Tool = { name: 'ask_user', description: 'Asks the user', inputSchema: { type: 'object' } }
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      toolCallTurn([{ id: 'q1', name: 'ask_user', input: {} }]),
      textTurn('fin'),
    ])
    const agent = createAgent({ tools: [ask], durability: 'sync' }, { adapter, persister })
    const session = await agent.createSession()
    await session.send('ask me')
    const before = await persister.getMessages(session.id)
    await expect(
      session.send([{ type: 'tool_result', toolUseId: 'q1', content } as never]),
    ).rejects.toMatchObject({ name: 'ValidationError', code: 'VALIDATION' })
    expect(await persister.getMessages(session.id)).toEqual(before)
    expect(session.state).toBe('waiting_input')
    expect(adapter.calls).toHaveLength(1)
    // A proper answer still goes through.
    await session.send([{ type: 'tool_result', toolUseId: 'q1', content: 'Rent for May' }])
    expect((await persister.getMessages(session.id)).map((message) => message.type)).toEqual([
      'user',
      'agent',
      'tool',
      'agent',
    ])
    await agent.close()
  })
})

describe('sync durability of an answering send and of a retry', () => {
  it('stores `active` before an approved tool runs, so a crash while it runs is found interrupted', async () => {
    // A store that takes a moment per session write, as a database over a network does.
    const persister = new (class extends InMemoryPersister {
      override async saveSession(...args: Parameters<InMemoryPersister['saveSession']>): Promise<void> {
        await new Promise((resolve) => setTimeout(resolve, 20))
        return super.saveSession(...args)
      }
    })()
    const storedWhileRunning: Array<string | undefined> = []
    let sessionId = ''
    const pay: Tool = {
      name: 'pay',
      description: 'Pays.',
      inputSchema: { type: 'object' },
      needsApproval: true,
      execute: async () => {
        storedWhileRunning.push((await persister.getSession(sessionId))?.state)
        return 'paid'
      },
    }
    const adapter = new ScriptedAdapter([
      toolCallTurn([{ id: 'p1', name: 'pay', input: {} }]),
      textTurn('done'),
    ])
    const agent = createAgent({ tools: [pay], durability: 'sync' }, { adapter, persister })
    const session = await agent.createSession()
    sessionId = session.id
    await session.send('pay bob')
    expect((await persister.getSession(sessionId))?.state).toBe('waiting_input')
    await session.send([{ type: 'tool_approval', toolUseId: 'p1', approved: true }])
    // Before, the state write was queued and not awaited: the tool ran while the store said waiting_input.
    expect(storedWhileRunning).toEqual(['active'])
    expect((await persister.getSession(sessionId))?.state).toBe('idle')
    await agent.close()
  })

  it('stores `active` before a retry asks the model again', async () => {
    const persister = new InMemoryPersister()
    const storedDuringRequest: Array<string | undefined> = []
    let sessionId = ''
    let calls = 0
    const adapter = {
      getName: () => 'probe',
      async *stream() {
        calls += 1
        storedDuringRequest.push((await persister.getSession(sessionId))?.state)
        if (calls === 1) throw new Error('provider down')
        yield { type: 'text-delta' as const, text: 'ok' }
        yield {
          type: 'message' as const,
          content: [{ type: 'text' as const, text: 'ok' }],
          stopReason: 'end_turn' as const,
        }
      },
    }
    const agent = createAgent({ durability: 'sync', retry: { maxRetries: 0 } }, { adapter, persister })
    const session = await agent.createSession()
    sessionId = session.id
    await expect(session.send('hi')).rejects.toThrow()
    await session.flush()
    expect((await persister.getSession(sessionId))?.state).toBe('error')
    await session.retry()
    expect(storedDuringRequest).toEqual(['active', 'active'])
    await agent.close()
  })
})
