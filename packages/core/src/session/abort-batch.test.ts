// An abort that lands while a batch of tool calls runs: the send stops (state `aborted`), every
// call of the stored reply has a stored result, and what the results say takes effect.
import { describe, expect, it } from 'vitest'
import { createAgent } from '../agent/create-agent.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn, toolCallTurn } from '../testing/stream-helpers.js'
import { agentTool } from '../tools/agent-tool.js'
import type { Tool } from '../tools/tool.js'
import type { SessionEvent } from './session-events.js'

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('an abort while a batch of tool calls runs', () => {
  it('one child waits for an approval while another streams: the send is aborted, not left waiting, and nothing runs again later', async () => {
    const persister = new InMemoryPersister()
    const pay: Tool = {
      name: 'pay',
      description: 'pays',
      inputSchema: { type: 'object' },
      needsApproval: true,
      execute: async () => 'paid',
    }
    const main = new ScriptedAdapter(
      [
        toolCallTurn([
          { id: 'pa', name: 'asker', input: { task: 'A' } },
          { id: 'pb', name: 'worker', input: { task: 'B' } },
        ]),
        textTurn('parent, after the retry'),
      ],
      { name: 'main' },
    )
    const asker = new ScriptedAdapter([toolCallTurn([{ id: 'ca', name: 'pay', input: {} }])], {
      name: 'asker',
    })
    const worker = new ScriptedAdapter(
      [{ events: [{ type: 'text-delta', text: 'B partial' }], waitForAbort: true }],
      {
        name: 'worker',
      },
    )
    const agent = createAgent(
      {
        tools: [agentTool('asker'), agentTool('worker')],
        agents: { asker: { adapter: asker, tools: [pay] }, worker: { adapter: worker } },
      },
      { adapter: main, persister },
    )
    const session = await agent.createSession()
    const events: SessionEvent[] = []
    session.subscribe((event) => events.push(event))
    const sent = session.send('go')
    sent.catch(() => undefined)
    for (let i = 0; i < 200 && worker.calls.length === 0; i++) await wait(2)
    await wait(10)
    session.abort()
    // Before, the send resolved with `pending` and the session was left `waiting_input`.
    await expect(sent).rejects.toMatchObject({ kind: 'aborted' })
    expect(session.state).toBe('aborted')
    expect(events.some((event) => event.type === 'input-required')).toBe(false)
    const stored = await persister.getMessages(session.id)
    expect(stored.map((m) => m.type)).toEqual(['user', 'agent', 'tool'])
    expect(stored[2]!.content).toEqual([
      expect.objectContaining({ toolUseId: 'pa', isError: true }),
      expect.objectContaining({ toolUseId: 'pb', isError: true }),
    ])
    // The waiting child gave up its call: nothing is left waiting for an answer.
    const children = (await agent.getSessions({ includeChildren: true })).filter((s) => s.id !== session.id)
    expect(children.map((child) => child.state).sort()).toEqual(['aborted', 'completed'])
    expect(await session.getPending()).toEqual([])
    // retry() continues after the stopped calls; no child task runs again behind the user's back.
    expect((await session.retry()).text).toBe('parent, after the retry')
    expect(worker.calls).toHaveLength(1)
    expect(asker.calls).toHaveLength(1)
    await agent.close()
  })

  it('a transfer stored as done takes effect although a sibling tool was aborted: handoff event, activeAgent, retry() runs the target', async () => {
    const persister = new InMemoryPersister()
    const slow: Tool = {
      name: 'slow',
      description: 'slow',
      inputSchema: { type: 'object' },
      execute: (_input, context) =>
        new Promise((_resolve, reject) => {
          context.signal.addEventListener('abort', () => reject(context.signal.reason), { once: true })
        }),
    }
    let started = false
    const triage = new ScriptedAdapter(
      [
        toolCallTurn([
          { id: 'h1', name: 'transfer_to_billing', input: {} },
          { id: 's1', name: 'slow', input: {} },
        ]),
      ],
      { name: 'triage' },
    )
    const billing = new ScriptedAdapter([textTurn('billing here')], { name: 'billing' })
    const agent = createAgent(
      {
        tools: [
          {
            ...slow,
            execute: (input, context) => {
              started = true
              return slow.execute!(input, context)
            },
          },
        ],
        agents: {
          default: { handoffs: ['billing'] },
          billing: { adapter: billing, systemPrompt: 'billing' },
        },
      },
      { adapter: triage, persister },
    )
    const session = await agent.createSession()
    const events: SessionEvent[] = []
    session.subscribe((event) => events.push(event))
    const sent = session.send('help')
    sent.catch(() => undefined)
    for (let i = 0; i < 200 && !started; i++) await wait(2)
    session.abort()
    await expect(sent).rejects.toMatchObject({ kind: 'aborted' })
    const tool = (await persister.getMessages(session.id))[2]!
    expect(tool.content).toEqual([
      {
        type: 'tool_result',
        toolUseId: 'h1',
        content: [{ type: 'text', text: 'Transferred to billing. The billing agent answers from now on.' }],
      },
      expect.objectContaining({ toolUseId: 's1', isError: true }),
    ])
    // Before: the result said "Transferred", yet no handoff happened and the default agent went on.
    expect(events).toContainEqual({ type: 'handoff', from: 'default', to: 'billing' })
    expect((await persister.getSession(session.id))?.activeAgent).toBe('billing')
    expect((await session.retry()).text).toBe('billing here')
    expect(billing.calls[0]!.options.systemPrompt).toBe('billing')
    expect(triage.calls).toHaveLength(1)
    await agent.close()
  })
})
