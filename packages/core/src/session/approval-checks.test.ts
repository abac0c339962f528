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
