// Human input (DESIGN §10.1) and retry/complete (§10.2): every bullet as a named test, each
// checking what was stored.
import { describe, expect, it } from 'vitest'
import { createAgent } from '../agent/create-agent.js'
import type { AdapterMessage } from '../contracts/agent-adapter.js'
import type { AnyMessage, ToolResultBlock } from '../contracts/messages.js'
import { AdapterError } from '../errors/adapter-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn, toolCallTurn } from '../testing/stream-helpers.js'
import type { Tool, ToolContext } from '../tools/tool.js'
import type { SessionEvent } from './session-events.js'

function tools(log: string[]) {
  const transfer: Tool<{ amount: number }> = {
    name: 'transfer',
    description: 'Moves money',
    inputSchema: { type: 'object', properties: { amount: { type: 'number' } } },
    needsApproval: true,
    execute: (input) => {
      log.push(`transfer ${input.amount}`)
      return `sent ${input.amount}`
    },
  }
  const lookup: Tool<{ q: string }> = {
    name: 'lookup',
    description: 'Reads',
    inputSchema: { type: 'object' },
    execute: (input) => {
      log.push(`lookup ${input.q}`)
      return `found ${input.q}`
    },
  }
  const ask: Tool = { name: 'ask_user', description: 'Asks the user', inputSchema: { type: 'object' } }
  return { transfer, lookup, ask }
}

const call = (id: string, name: string, input: unknown) => ({ id, name, input })
const typesOf = (messages: AnyMessage[]) => messages.map((m) => m.type)

async function waitingSession(turns: AdapterMessage[][], extraTools: Tool[] = []) {
  const log: string[] = []
  const { transfer, lookup, ask } = tools(log)
  const persister = new InMemoryPersister()
  const adapter = new ScriptedAdapter(turns)
  const agent = createAgent({ tools: [transfer, lookup, ask, ...extraTools] }, { adapter, persister })
  const session = await agent.createSession()
  return { log, persister, adapter, agent, session, allTools: [transfer, lookup, ask, ...extraTools] }
}

describe('human input: a call that needs approval', () => {
  it('holds the batch: the agent message is stored, the session waits, input-required is emitted and send resolves with pending', async () => {
    const { log, persister, agent, session } = await waitingSession([
      toolCallTurn([call('t1', 'transfer', { amount: 5 })]),
    ])
    const events: SessionEvent[] = []
    session.subscribe((event) => events.push(event))
    const result = await session.send('pay Bob 5')
    const pending = [
      { toolUseId: 't1', name: 'transfer', input: { amount: 5 }, kind: 'approval', sessionId: session.id },
    ]
    expect(result.pending).toEqual(pending)
    expect(session.state).toBe('waiting_input')
    expect(log).toEqual([])
    expect(events).toContainEqual({ type: 'input-required', pending })
    expect(events.at(-1)?.type).toBe('done')
    await session.flush()
    expect(typesOf(await persister.getMessages(session.id))).toEqual(['user', 'agent'])
    expect((await persister.getSession(session.id))?.state).toBe('waiting_input')
    await agent.close()
  })

  it('stream() ends after done when the send waits', async () => {
    const { agent, session } = await waitingSession([toolCallTurn([call('t1', 'transfer', { amount: 1 })])])
    const types: string[] = []
    for await (const event of session.stream('pay')) types.push(event.type)
    expect(types.slice(-3)).toEqual(['state', 'input-required', 'done'])
    await agent.close()
  })

  it('an approved call runs, one tool message is stored, no user message, and the loop goes on', async () => {
    const { log, persister, adapter, agent, session } = await waitingSession([
      toolCallTurn([call('t1', 'transfer', { amount: 5 })]),
      textTurn('Done, sent.'),
    ])
    await session.send('pay Bob 5')
    const result = await session.send([{ type: 'tool_approval', toolUseId: 't1', approved: true }])
    expect(result.text).toBe('Done, sent.')
    expect(result.pending).toBeUndefined()
    expect(log).toEqual(['transfer 5'])
    expect(session.state).toBe('idle')
    await session.flush()
    const stored = await persister.getMessages(session.id)
    expect(typesOf(stored)).toEqual(['user', 'agent', 'tool', 'agent'])
    expect(adapter.calls[1]!.prompt).toEqual([
      { type: 'tool_result', toolUseId: 't1', content: [{ type: 'text', text: 'sent 5' }] },
    ])
    expect(typesOf(adapter.calls[1]!.options.history)).toEqual(['user', 'agent'])
    await agent.close()
  })

  it('an approval with edited input runs with that input', async () => {
    const { log, agent, session } = await waitingSession([
      toolCallTurn([call('t1', 'transfer', { amount: 500 })]),
      textTurn('ok'),
    ])
    await session.send('pay')
    await session.send([{ type: 'tool_approval', toolUseId: 't1', approved: true, input: { amount: 50 } }])
    expect(log).toEqual(['transfer 50'])
    await agent.close()
  })

  it('a denial becomes an isError result whose text gives the reason, and it reaches the model', async () => {
    const { log, adapter, agent, session } = await waitingSession([
      toolCallTurn([call('t1', 'transfer', { amount: 5 })]),
      textTurn('Understood.'),
    ])
    await session.send('pay')
    await session.send([
      { type: 'tool_approval', toolUseId: 't1', approved: false, reason: 'too much money' },
    ])
    expect(log).toEqual([])
    const prompt = adapter.calls[1]!.prompt as ToolResultBlock[]
    expect(prompt[0]).toMatchObject({ toolUseId: 't1', isError: true })
    expect(JSON.stringify(prompt[0]!.content)).toContain('too much money')
    await agent.close()
  })

  it('needsApproval may be a function of the input and the context', async () => {
    const seen: Array<[unknown, string]> = []
    const pay: Tool<{ amount: number }> = {
      name: 'pay',
      description: 'pays',
      inputSchema: { type: 'object' },
      needsApproval: (input: { amount: number }, context: ToolContext) => {
        seen.push([input, context.toolCallId])
        return input.amount > 100
      },
      execute: (input) => `paid ${input.amount}`,
    }
    const { agent, session } = await waitingSession(
      [
        toolCallTurn([call('small', 'pay', { amount: 10 })]),
        textTurn('paid'),
        toolCallTurn([call('big', 'pay', { amount: 1000 })]),
      ],
      [pay],
    )
    expect((await session.send('small')).pending).toBeUndefined()
    const big = await session.send('big')
    expect(big.pending?.map((p) => p.toolUseId)).toEqual(['big'])
    expect(seen).toEqual([
      [{ amount: 10 }, 'small'],
      [{ amount: 1000 }, 'big'],
    ])
    await agent.close()
  })

  it('a needsApproval function that throws asks for approval instead of failing the send or running the call', async () => {
    const log: string[] = []
    const risky: Tool = {
      name: 'risky',
      description: 'r',
      inputSchema: { type: 'object' },
      needsApproval: () => {
        throw new Error('policy service down')
      },
      execute: () => {
        log.push('ran')
        return 'ok'
      },
    }
    const adapter = new ScriptedAdapter([toolCallTurn([call('r1', 'risky', {})]), textTurn('after')])
    const agent = createAgent({ tools: [risky] }, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    const result = await session.send('do it')
    expect(result.pending?.map((p) => [p.toolUseId, p.kind])).toEqual([['r1', 'approval']])
    expect(session.state).toBe('waiting_input')
    expect(log).toEqual([])
    expect((await session.send([{ type: 'tool_approval', toolUseId: 'r1', approved: true }])).text).toBe(
      'after',
    )
    expect(log).toEqual(['ran'])
    await agent.close()
  })

  it('a mixed batch runs nothing before the answer and both calls after it, in one tool message', async () => {
    const { log, persister, agent, session } = await waitingSession([
      toolCallTurn([call('a', 'lookup', { q: 'balance' }), call('b', 'transfer', { amount: 7 })]),
      textTurn('both done'),
    ])
    const first = await session.send('check and pay')
    expect(first.pending?.map((p) => p.toolUseId)).toEqual(['b'])
    expect(log).toEqual([])
    await session.send([{ type: 'tool_approval', toolUseId: 'b', approved: true }])
    expect(log.sort()).toEqual(['lookup balance', 'transfer 7'])
    await session.flush()
    const stored = await persister.getMessages(session.id)
    expect(typesOf(stored)).toEqual(['user', 'agent', 'tool', 'agent'])
    expect((stored[2]!.content as ToolResultBlock[]).map((r) => r.toolUseId)).toEqual(['a', 'b'])
    await agent.close()
  })
})

describe('human input: client tools', () => {
  it('a tool without execute is answered by the application with a tool_result', async () => {
    const { adapter, persister, agent, session } = await waitingSession([
      toolCallTurn([call('q1', 'ask_user', { question: 'Which city?' })]),
      textTurn('Booked for Paris.'),
    ])
    const first = await session.send('book a flight')
    expect(first.pending).toEqual([
      {
        toolUseId: 'q1',
        name: 'ask_user',
        input: { question: 'Which city?' },
        kind: 'client',
        sessionId: session.id,
      },
    ])
    const second = await session.send([{ type: 'tool_result', toolUseId: 'q1', content: 'Paris' }])
    expect(second.text).toBe('Booked for Paris.')
    expect(adapter.calls[1]!.prompt).toEqual([{ type: 'tool_result', toolUseId: 'q1', content: 'Paris' }])
    await session.flush()
    expect(typesOf(await persister.getMessages(session.id))).toEqual(['user', 'agent', 'tool', 'agent'])
    await agent.close()
  })
})

describe('human input: client tools given to one send or one session object', () => {
  const ask: Tool = {
    name: 'pick_color',
    description: 'Asks the user for a color',
    inputSchema: { type: 'object' },
  }
  const pendingCall = (sessionId: string) => ({
    toolUseId: 'c1',
    name: 'pick_color',
    input: { of: 'car' },
    kind: 'client',
    sessionId,
  })

  it('a client tool given in send options stays pending, and is answered without giving it again', async () => {
    const adapter = new ScriptedAdapter([
      toolCallTurn([call('c1', 'pick_color', { of: 'car' })]),
      textTurn('Red it is.'),
    ])
    const persister = new InMemoryPersister()
    const agent = createAgent({}, { adapter, persister })
    const session = await agent.createSession()
    const first = await session.send('paint my car', { tools: [ask] })
    expect(first.pending).toEqual([pendingCall(session.id)])
    expect(await session.getPending()).toEqual([pendingCall(session.id)])
    const second = await session.send([{ type: 'tool_result', toolUseId: 'c1', content: 'red' }])
    expect(second.text).toBe('Red it is.')
    expect(session.state).toBe('idle')
    await session.flush()
    expect(typesOf(await persister.getMessages(session.id))).toEqual(['user', 'agent', 'tool', 'agent'])
    await agent.close()
  })

  it('a client tool of createSession({ tools }) stays pending after a restart that does not give it', async () => {
    const persister = new InMemoryPersister()
    const first = createAgent(
      {},
      { adapter: new ScriptedAdapter([toolCallTurn([call('c1', 'pick_color', { of: 'car' })])]), persister },
    )
    const session = await first.createSession({ tools: [ask] })
    await session.send('paint my car')
    await first.close()
    const adapter = new ScriptedAdapter([textTurn('Blue it is.')])
    const second = createAgent({}, { adapter, persister })
    const again = (await second.getSession(session.id))!
    expect(again.state).toBe('waiting_input')
    expect(await again.getPending()).toEqual([pendingCall(session.id)])
    expect((await again.send([{ type: 'tool_result', toolUseId: 'c1', content: 'blue' }])).text).toBe(
      'Blue it is.',
    )
    expect(adapter.calls[0]!.prompt).toEqual([{ type: 'tool_result', toolUseId: 'c1', content: 'blue' }])
    await second.close()
  })

  it('a call of an unknown tool in a batch that waits for a known one is not pending (it fails as unknown)', async () => {
    const { adapter, agent, session } = await waitingSession([
      toolCallTurn([call('t1', 'transfer', { amount: 1 }), call('x1', 'no_such_tool', {})]),
      textTurn('done'),
    ])
    const first = await session.send('pay')
    expect(first.pending?.map((p) => p.toolUseId)).toEqual(['t1'])
    await session.send([{ type: 'tool_approval', toolUseId: 't1', approved: true }])
    const results = adapter.calls[1]!.prompt as ToolResultBlock[]
    expect(results.map((r) => [r.toolUseId, r.isError === true])).toEqual([
      ['t1', false],
      ['x1', true],
    ])
    await agent.close()
  })
})

describe('human input: answers are checked before anything is written', () => {
  async function waitingOnTwo() {
    const setup = await waitingSession([
      toolCallTurn([call('x', 'transfer', { amount: 1 }), call('y', 'ask_user', {})]),
      textTurn('fine'),
    ])
    await setup.session.send('go')
    await setup.session.flush()
    return setup
  }

  for (const [label, answers] of [
    ['answers that miss a pending call', [{ type: 'tool_approval', toolUseId: 'x', approved: true }]],
    [
      'an answer naming an unknown id',
      [
        { type: 'tool_approval', toolUseId: 'x', approved: true },
        { type: 'tool_result', toolUseId: 'y', content: 'a' },
        { type: 'tool_approval', toolUseId: 'zzz', approved: true },
      ],
    ],
    [
      'an answer of the wrong kind',
      [
        { type: 'tool_result', toolUseId: 'x', content: 'a' },
        { type: 'tool_result', toolUseId: 'y', content: 'a' },
      ],
    ],
    [
      'answers mixed with text',
      [
        { type: 'tool_approval', toolUseId: 'x', approved: true },
        { type: 'text', text: 'hi' },
      ],
    ],
  ] as const) {
    it(`${label} reject with ValidationError and write nothing`, async () => {
      const { log, persister, adapter, agent, session } = await waitingOnTwo()
      await expect(session.send(answers as never)).rejects.toMatchObject({ code: 'VALIDATION' })
      expect(session.state).toBe('waiting_input')
      expect(log).toEqual([])
      expect(adapter.calls).toHaveLength(1)
      await session.flush()
      expect(typesOf(await persister.getMessages(session.id))).toEqual(['user', 'agent'])
      await agent.close()
    })
  }

  it('answers sent when nothing is pending reject with ValidationError', async () => {
    const { persister, agent, session } = await waitingSession([textTurn('hi')])
    await session.send('hello')
    await expect(
      session.send([{ type: 'tool_approval', toolUseId: 'x', approved: true }]),
    ).rejects.toMatchObject({
      code: 'VALIDATION',
    })
    expect(session.state).toBe('idle')
    await session.flush()
    expect(typesOf(await persister.getMessages(session.id))).toEqual(['user', 'agent'])
    await agent.close()
  })
})

describe('human input: ordinary content while waiting', () => {
  it('answers every pending call with isError ("the user replied instead") and is appended as the next user message', async () => {
    const { log, persister, adapter, agent, session } = await waitingSession([
      toolCallTurn([call('t1', 'transfer', { amount: 5 })]),
      textTurn('Sure, what then?'),
    ])
    await session.send('pay')
    const result = await session.send('Actually, never mind.')
    expect(result.text).toBe('Sure, what then?')
    expect(log).toEqual([])
    await session.flush()
    const stored = await persister.getMessages(session.id)
    expect(typesOf(stored)).toEqual(['user', 'agent', 'tool', 'user', 'agent'])
    const closed = stored[2]!.content as ToolResultBlock[]
    expect(closed[0]).toMatchObject({ toolUseId: 't1', isError: true })
    expect(JSON.stringify(closed[0]!.content)).toContain('replied')
    expect(adapter.calls[1]!.prompt).toBe('Actually, never mind.')
    expect(typesOf(adapter.calls[1]!.options.history)).toEqual(['user', 'agent', 'tool'])
    await agent.close()
  })

  it('emits a tool-result event for every call it closes, before the tool message', async () => {
    const { agent, session } = await waitingSession([
      toolCallTurn([call('t1', 'transfer', { amount: 5 }), call('q1', 'ask_user', {})]),
      textTurn('Sure.'),
    ])
    await session.send('pay')
    const events: SessionEvent[] = []
    session.subscribe((event) => events.push(event))
    await session.send('Actually, never mind.')
    const shown = events
      .filter((e) => e.type === 'tool-result' || (e.type === 'message' && e.message.type === 'tool'))
      .map((e) => (e.type === 'tool-result' ? `result ${e.toolUseId} ${e.isError === true}` : 'message tool'))
    expect(shown).toEqual(['result t1 true', 'result q1 true', 'message tool'])
    await agent.close()
  })
})

describe('human input survives a restart', () => {
  it('getPending() derives the calls from storage in a new agent, which can answer them', async () => {
    const { persister, session, allTools } = await waitingSession([
      toolCallTurn([call('t1', 'transfer', { amount: 9 })]),
    ])
    await session.send('pay 9')
    await session.flush()
    const log: string[] = []
    const fresh = tools(log)
    const restarted = createAgent(
      { tools: [fresh.transfer, fresh.lookup, fresh.ask] },
      { adapter: new ScriptedAdapter([textTurn('paid 9')]), persister },
    )
    await restarted.initialize()
    const again = (await restarted.getSession(session.id))!
    // initialize() left the waiting session alone.
    expect(again.state).toBe('waiting_input')
    expect(await again.getPending()).toEqual([
      { toolUseId: 't1', name: 'transfer', input: { amount: 9 }, kind: 'approval', sessionId: session.id },
    ])
    const result = await again.send([{ type: 'tool_approval', toolUseId: 't1', approved: true }])
    expect(result.text).toBe('paid 9')
    expect(log).toEqual(['transfer 9'])
    expect(await again.getPending()).toEqual([])
    expect(allTools).toHaveLength(3)
    await restarted.close()
  })
})

describe('retry() and complete()', () => {
  it('retry() after an error runs the model again without a second user message; the incomplete reply stays stored but leaves the history', async () => {
    const failure = new AdapterError('overloaded', {
      kind: 'overloaded',
      provider: 'scripted',
      retryable: false,
    })
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      { events: [{ type: 'text-delta', text: 'Half a th' }], error: failure },
      textTurn('A whole answer.'),
      textTurn('Next.'),
    ])
    const agent = createAgent({}, { adapter, persister })
    const session = await agent.createSession()
    await expect(session.send('question')).rejects.toBe(failure)
    expect(session.state).toBe('error')
    const events: string[] = []
    session.subscribe((event) => events.push(event.type))
    const result = await session.retry()
    expect(result.text).toBe('A whole answer.')
    expect(events).toContain('done')
    expect(adapter.calls[1]!.prompt).toBe('question')
    expect(adapter.calls[1]!.options.history).toEqual([])
    await session.send('and then?')
    expect(adapter.calls[2]!.options.history.map((m) => m.content)).toEqual([
      'question',
      [{ type: 'text', text: 'A whole answer.' }],
    ])
    await session.flush()
    const stored = await persister.getMessages(session.id)
    expect(stored.map((m) => [m.type, m.incomplete ?? false])).toEqual([
      ['user', false],
      ['agent', true],
      ['agent', false],
      ['user', false],
      ['agent', false],
    ])
    await agent.close()
  })

  it('retry() in any other state rejects with SessionStateError', async () => {
    const agent = createAgent(
      {},
      { adapter: new ScriptedAdapter([textTurn('x')]), persister: new InMemoryPersister() },
    )
    const session = await agent.createSession()
    await expect(session.retry()).rejects.toMatchObject({ name: 'SessionStateError' })
    await session.send('hi')
    await expect(session.retry()).rejects.toMatchObject({ name: 'SessionStateError' })
    await agent.close()
  })

  it('complete() marks the session completed (persisted); a later send reopens it', async () => {
    const persister = new InMemoryPersister()
    const agent = createAgent({}, { adapter: new ScriptedAdapter([textTurn('a'), textTurn('b')]), persister })
    const session = await agent.createSession()
    await session.send('one')
    await session.complete()
    expect(session.state).toBe('completed')
    await session.flush()
    expect((await persister.getSession(session.id))?.state).toBe('completed')
    expect((await session.send('two')).text).toBe('b')
    expect(session.state).toBe('idle')
    await agent.close()
  })
})

describe('tools passed to the send that paused the session', () => {
  it('getPending() and the answering send know them without being given them again (this process)', async () => {
    const ran: string[] = []
    const pay: Tool = {
      name: 'pay',
      description: 'pays',
      inputSchema: { type: 'object' },
      needsApproval: true,
      execute: () => {
        ran.push('pay')
        return 'paid'
      },
    }
    const look: Tool = {
      name: 'look',
      description: 'looks',
      inputSchema: { type: 'object' },
      execute: () => {
        ran.push('look')
        return 'seen'
      },
    }
    const ask: Tool = { name: 'ask', description: 'the user answers', inputSchema: { type: 'object' } }
    const adapter = new ScriptedAdapter([
      toolCallTurn([
        { id: 'p1', name: 'pay', input: {} },
        { id: 'l1', name: 'look', input: {} },
        { id: 'q1', name: 'ask', input: {} },
      ]),
      textTurn('done'),
      textTurn('next'),
    ])
    const agent = createAgent({}, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    const first = await session.send('go', { tools: [pay, look, ask] })
    const kinds = (calls: readonly { toolUseId: string; kind: string }[] | undefined) =>
      calls?.map((call) => [call.toolUseId, call.kind])
    expect(kinds(first.pending)).toEqual([
      ['p1', 'approval'],
      ['q1', 'client'],
    ])
    // Before, getPending() knew only the agent's tools: every call was a client call.
    expect(kinds(await session.getPending())).toEqual(kinds(first.pending))
    const done = await session.send([
      { type: 'tool_approval', toolUseId: 'p1', approved: true },
      { type: 'tool_result', toolUseId: 'q1', content: 'yes' },
    ])
    expect(done.text).toBe('done')
    expect(ran).toEqual(['pay', 'look'])
    expect(adapter.calls[1]!.options.tools?.map((tool) => tool.name)).toEqual(['pay', 'look', 'ask'])
    // The exchange is over: a later send has only the tools it is given.
    await session.send('again')
    expect(adapter.calls[2]!.options.tools).toBeUndefined()
    await agent.close()
  })
})
