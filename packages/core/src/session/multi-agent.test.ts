// Several agents in one session (DESIGN §10.3): profiles, handoffs, agents as tools.
import { describe, expect, it, vi } from 'vitest'
import { createAgent } from '../agent/create-agent.js'
import type { AnyMessage, ToolResultBlock } from '../contracts/messages.js'
import { AdapterError } from '../errors/adapter-error.js'
import { SessionStateError } from '../errors/session-state-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn, toolCallTurn, usage } from '../testing/stream-helpers.js'
import { agentTool } from '../tools/agent-tool.js'
import type { Tool } from '../tools/tool.js'
import type { SessionFactory } from '../contracts/session-factory.js'
import { DefaultSessionFactory } from './default-session-factory.js'
import type { SessionEvent } from './session-events.js'

const echo: Tool = {
  name: 'echo',
  description: 'echoes',
  inputSchema: { type: 'object' },
  execute: (input) => input,
}
const calc: Tool = { name: 'calc', description: 'adds', inputSchema: { type: 'object' }, execute: () => 3 }
const names = (tools: Array<{ name: string }> | undefined) => (tools ?? []).map((tool) => tool.name).sort()

describe('profiles', () => {
  it('a stored activeAgent whose profile is gone falls back to the default, with or without profiles; a name the caller gives is refused', async () => {
    const persister = new InMemoryPersister()
    const first = createAgent(
      { agents: { billing: { systemPrompt: 'You bill.' } } },
      { adapter: new ScriptedAdapter([textTurn('billing here'), textTurn('billing here')]), persister },
    )
    for (const id of ['no-profiles', 'renamed'])
      await (await first.createSession({ id })).send('hi', { agent: 'billing' })
    await first.close()
    const cases = [
      { id: 'no-profiles', config: {} },
      { id: 'renamed', config: { agents: { invoices: { systemPrompt: 'You invoice.' } } } },
    ]
    for (const { id, config } of cases) {
      const adapter = new ScriptedAdapter([textTurn('default here'), textTurn('never')])
      const agent = createAgent({ systemPrompt: 'Front desk.', ...config }, { adapter, persister })
      const session = await agent.getSession(id)
      if (session === undefined) throw new Error(`session ${id} is gone`)
      expect((await persister.getSession(id))?.activeAgent).toBe('billing')
      // Before, with no profiles configured: ValidationError "Unknown agent profile 'billing'".
      const result = await session.send('hello again')
      expect(result.text).toBe('default here')
      expect(adapter.calls.at(-1)?.options.systemPrompt).toBe('Front desk.')
      const before = (await session.getMessages()).length
      await expect(session.send('x', { agent: 'billing' })).rejects.toThrow(/Unknown agent profile 'billing'/)
      expect(await session.getMessages()).toHaveLength(before)
      await agent.close()
    }
  })

  it('send(…, { agent }) runs that profile (adapter, model, system prompt, tools); agentName and activeAgent are stored and continue across sends and a restart', async () => {
    const persister = new InMemoryPersister()
    const main = new ScriptedAdapter([textTurn('hello from default')], { name: 'main' })
    const coderAdapter = new ScriptedAdapter([textTurn('code!'), textTurn('more code')], { name: 'coder' })
    const config = {
      model: 'main-model',
      systemPrompt: 'You are the front desk.',
      tools: [echo],
      agents: {
        coder: { model: 'code-model', systemPrompt: 'You write code.', tools: [calc], adapter: coderAdapter },
      },
    }
    const agent = createAgent(config, { adapter: main, persister })
    const session = await agent.createSession()
    await session.send('hi')
    await session.send('write code', { agent: 'coder' })
    await session.send('and more') // continues with the active agent
    expect(main.calls).toHaveLength(1)
    expect(main.calls[0]!.options).toMatchObject({
      model: 'main-model',
      systemPrompt: 'You are the front desk.',
    })
    expect(names(main.calls[0]!.options.tools)).toEqual(['echo'])
    expect(coderAdapter.calls).toHaveLength(2)
    // No inheritance of the default's system prompt or tools.
    expect(coderAdapter.calls[0]!.options).toMatchObject({
      model: 'code-model',
      systemPrompt: 'You write code.',
    })
    expect(names(coderAdapter.calls[0]!.options.tools)).toEqual(['calc'])
    // All profiles share the conversation.
    expect(coderAdapter.calls[0]!.options.history.map((m) => m.type)).toEqual(['user', 'agent'])
    await agent.close()
    const stored = await persister.getMessages(session.id)
    expect(stored.filter((m) => m.type === 'agent').map((m) => m.agentName)).toEqual([
      'default',
      'coder',
      'coder',
    ])
    expect(stored.filter((m) => m.type === 'user').every((m) => m.agentName === undefined)).toBe(true)
    expect((await persister.getSession(session.id))?.activeAgent).toBe('coder')

    const restartedCoder = new ScriptedAdapter([textTurn('after restart')], { name: 'coder' })
    const again = createAgent(
      { ...config, agents: { coder: { ...config.agents.coder, adapter: restartedCoder } } },
      { adapter: new ScriptedAdapter([]), persister },
    )
    await (await again.getSession(session.id))!.send('still there?')
    expect(restartedCoder.calls).toHaveLength(1)
    await again.close()
  })

  it("a profile's model and adapter fall back to the agent's; { agent: 'default' } is valid", async () => {
    const adapter = new ScriptedAdapter([textTurn('a'), textTurn('b')])
    const agent = createAgent(
      { model: 'shared', agents: { helper: { systemPrompt: 'help' } } },
      { adapter, persister: new InMemoryPersister() },
    )
    const session = await agent.createSession()
    await session.send('x', { agent: 'helper' })
    await session.send('y', { agent: 'default' })
    expect(adapter.calls.map((call) => call.options.model)).toEqual(['shared', 'shared'])
    expect(adapter.calls[0]!.options.systemPrompt).toBe('help')
    await agent.close()
  })

  it('an unknown profile name rejects with ValidationError and stores nothing', async () => {
    const persister = new InMemoryPersister()
    const agent = createAgent({ agents: { a: {} } }, { adapter: new ScriptedAdapter([]), persister })
    const session = await agent.createSession()
    await expect(session.send('x', { agent: 'nobody' })).rejects.toMatchObject({ code: 'VALIDATION' })
    const plain = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    const other = await plain.createSession()
    await expect(other.send('x', { agent: 'a' })).rejects.toMatchObject({ code: 'VALIDATION' })
    expect(await persister.getMessages(session.id)).toEqual([])
    await agent.close()
    await plain.close()
  })

  it('an agent without profiles writes no agentName', async () => {
    const persister = new InMemoryPersister()
    const agent = createAgent({}, { adapter: new ScriptedAdapter([textTurn('x')]), persister })
    const session = await agent.createSession()
    await session.send('hi')
    await agent.close()
    const stored = await persister.getMessages(session.id)
    expect(stored.some((m) => 'agentName' in m)).toBe(false)
    expect((await persister.getSession(session.id))?.activeAgent).toBeUndefined()
  })

  it('bad profiles are ConfigurationErrors', () => {
    expect(() => createAgent({ agents: { 'bad name': {} } })).toThrow(/Profile name/)
    expect(() => createAgent({ agents: { a: { handoffs: ['ghost'] } } })).toThrow(/ghost/)
    expect(() => createAgent({ agents: { a: { modle: 'x' } } } as never)).toThrow(/did you mean 'model'/)
    expect(() => createAgent({ tools: [agentTool('ghost')], agents: { a: {} } })).toThrow(/ghost/)
  })

  it('an agentTool naming an unknown profile is refused by createAgent without profiles too (not when the model calls it)', () => {
    expect(() => createAgent({ tools: [agentTool('researcher')] })).toThrow(
      /agentTool\('researcher'\) names an unknown profile; known: default/,
    )
    expect(() => createAgent({ tools: [agentTool('default')] })).not.toThrow()
  })

  it('a tool named like a handoff of its profile is refused instead of being replaced by the handoff', () => {
    const transfer: Tool = { ...echo, name: 'transfer_to_b', description: 'Transfers money to account B' }
    expect(() => createAgent({ tools: [transfer], agents: { default: { handoffs: ['b'] }, b: {} } })).toThrow(
      /Profile 'default' has a tool named 'transfer_to_b', the name of its handoff to 'b'/,
    )
    expect(() => createAgent({ agents: { a: { tools: [transfer], handoffs: ['b'] }, b: {} } })).toThrow(
      /Profile 'a' has a tool named 'transfer_to_b'/,
    )
    // Without that handoff, the name is the user's.
    expect(() => createAgent({ tools: [transfer], agents: { b: {} } })).not.toThrow()
  })
})

describe('handoffs', () => {
  it('transfer_to_<name> hands the same send to that profile: handoff event, activeAgent, the target answers', async () => {
    const persister = new InMemoryPersister()
    const triage = new ScriptedAdapter(
      [toolCallTurn([{ id: 'h1', name: 'transfer_to_billing', input: {} }])],
      {
        name: 'triage',
      },
    )
    const billing = new ScriptedAdapter([textTurn('Your invoice is paid.')], { name: 'billing' })
    const agent = createAgent(
      {
        agents: {
          default: { handoffs: ['billing'] },
          billing: { description: 'Answers invoice questions', adapter: billing, systemPrompt: 'billing' },
        },
      },
      { adapter: triage, persister },
    )
    const session = await agent.createSession()
    const events: SessionEvent[] = []
    session.subscribe((event) => events.push(event))
    const result = await session.send('Was my invoice paid?')
    expect(result.text).toBe('Your invoice is paid.')
    expect(events).toContainEqual({ type: 'handoff', from: 'default', to: 'billing' })
    const transfer = triage.calls[0]!.options.tools?.find((tool) => tool.name === 'transfer_to_billing')
    expect(transfer?.description).toContain('Answers invoice questions')
    expect(billing.calls[0]!.options.systemPrompt).toBe('billing')
    expect((billing.calls[0]!.prompt as ToolResultBlock[])[0]!.toolUseId).toBe('h1')
    await agent.close()
    expect((await persister.getSession(session.id))?.activeAgent).toBe('billing')
    const stored = await persister.getMessages(session.id)
    expect(stored.map((m) => [m.type, m.agentName])).toEqual([
      ['user', undefined],
      ['agent', 'default'],
      ['tool', undefined],
      ['agent', 'billing'],
    ])
  })

  it('two transfers in one reply: the first hands over, the second says it did not', async () => {
    const persister = new InMemoryPersister()
    const triage = new ScriptedAdapter(
      [
        toolCallTurn([
          { id: 'z1', name: 'transfer_to_billing', input: {} },
          { id: 'z2', name: 'transfer_to_support', input: {} },
        ]),
      ],
      { name: 'triage' },
    )
    const billing = new ScriptedAdapter([textTurn('billing here')], { name: 'billing' })
    const support = new ScriptedAdapter([], { name: 'support' })
    const agent = createAgent(
      {
        agents: {
          default: { handoffs: ['billing', 'support'] },
          billing: { adapter: billing },
          support: { adapter: support },
        },
      },
      { adapter: triage, persister },
    )
    const session = await agent.createSession()
    const handoffs: SessionEvent[] = []
    session.subscribe((event) => {
      if (event.type === 'handoff') handoffs.push(event)
    })
    expect((await session.send('help')).text).toBe('billing here')
    expect(handoffs).toEqual([{ type: 'handoff', from: 'default', to: 'billing' }])
    expect(support.calls).toHaveLength(0)
    const results = billing.calls[0]!.prompt as ToolResultBlock[]
    expect(results.map((result) => [result.toolUseId, result.isError === true])).toEqual([
      ['z1', false],
      ['z2', true],
    ])
    // Before, the second call's stored result said "Transferred to support" although it was not.
    expect(JSON.stringify(results[1]!.content)).toMatch(/Not transferred.*'billing'/)
    expect(JSON.stringify(results[0]!.content)).toMatch(/Transferred to billing/)
    await agent.close()
    expect((await persister.getSession(session.id))?.activeAgent).toBe('billing')
  })

  it("a thinking block's signature goes back only to its own provider", async () => {
    const thinkThenHandOff = (signature: string, to: string, id: string) => [
      { type: 'thinking-delta' as const, text: 'mine' },
      { type: 'tool-call' as const, id, name: `transfer_to_${to}`, input: {} },
      {
        type: 'message' as const,
        content: [
          { type: 'thinking' as const, text: 'mine', signature },
          { type: 'tool_use' as const, id, name: `transfer_to_${to}`, input: {} },
        ],
        stopReason: 'tool_use' as const,
      },
    ]
    const claude = new ScriptedAdapter([thinkThenHandOff('SIG_CLAUDE', 'other', 'h1'), textTurn('back')], {
      name: 'claude',
    })
    const other = new ScriptedAdapter([thinkThenHandOff('SIG_OTHER', 'default', 'h2')], { name: 'openai' })
    const twin = new ScriptedAdapter([textTurn('twin here')], { name: 'claude' })
    const agent = createAgent(
      {
        agents: {
          default: { handoffs: ['other'] },
          other: { adapter: other, handoffs: ['default'] },
          twin: { adapter: twin },
        },
      },
      { adapter: claude, persister: new InMemoryPersister() },
    )
    const session = await agent.createSession()
    expect((await session.send('hi')).text).toBe('back')
    const signatures = (adapter: ScriptedAdapter, call: number) =>
      adapter.calls[call]!.options.history.flatMap((message) =>
        Array.isArray(message.content)
          ? message.content.flatMap((block) =>
              block.type === 'thinking' ? [`${message.agentName}:${block.signature ?? 'unsigned'}`] : [],
            )
          : [],
      )
    // The other provider gets Claude's thinking without its signature; Claude gets its own back.
    expect(signatures(other, 0)).toEqual(['default:unsigned'])
    expect(signatures(claude, 1)).toEqual(['default:SIG_CLAUDE', 'other:unsigned'])
    // A profile on the same provider keeps every signature of that provider.
    await session.send('and you?', { agent: 'twin' })
    expect(signatures(twin, 0)).toEqual(['default:SIG_CLAUDE', 'other:unsigned'])
    // What is stored keeps every signature.
    const stored = await session.getMessages()
    expect(
      stored.flatMap((message) =>
        Array.isArray(message.content)
          ? message.content.flatMap((block) => (block.type === 'thinking' ? [block.signature] : []))
          : [],
      ),
    ).toEqual(['SIG_CLAUDE', 'SIG_OTHER'])
    await agent.close()
  })

  it('a signature still goes only to its own provider after a restart on another provider, with or without profiles', async () => {
    const signedReply = (signature: string) => [
      { type: 'thinking-delta' as const, text: 'thought' },
      { type: 'text-delta' as const, text: 'first answer' },
      {
        type: 'message' as const,
        content: [
          { type: 'thinking' as const, text: 'thought', signature },
          { type: 'text' as const, text: 'first answer' },
        ],
        stopReason: 'end_turn' as const,
      },
    ]
    const persister = new InMemoryPersister()
    const gemini = new ScriptedAdapter([signedReply('SIG_GEMINI')], { name: 'gemini' })
    const first = createAgent({}, { adapter: gemini, persister })
    const session = await first.createSession()
    await session.send('hi')
    await first.close()
    // The stored block names its provider.
    const [, reply] = await persister.getMessages(session.id)
    expect((reply!.content as Array<{ providerMetadata?: unknown }>)[0]!.providerMetadata).toEqual({
      gemini: {},
    })

    const sentThinking = (adapter: ScriptedAdapter) =>
      adapter.calls[0]!.options.history.flatMap((message) =>
        Array.isArray(message.content)
          ? message.content.flatMap((block) =>
              block.type === 'thinking' ? [block.signature ?? 'unsigned'] : [],
            )
          : [],
      )
    // The same store, now on Claude (no profiles): Gemini's signature is not sent to Claude.
    const claude = new ScriptedAdapter([textTurn('second answer')], { name: 'claude' })
    const second = createAgent({}, { adapter: claude, persister })
    await (await second.getSession(session.id))!.send('again')
    await second.close()
    expect(sentThinking(claude)).toEqual(['unsigned'])
    // Back on Gemini, its own signature goes back.
    const gemini2 = new ScriptedAdapter([textTurn('third answer')], { name: 'gemini' })
    const third = createAgent({}, { adapter: gemini2, persister })
    await (await third.getSession(session.id))!.send('and again')
    await third.close()
    expect(sentThinking(gemini2)).toEqual(['SIG_GEMINI'])
  })

  it('a provider session id is only passed back to the adapter that issued it', async () => {
    const stateful = new ScriptedAdapter(
      [textTurn('one', { sessionId: 'resp_1' }), textTurn('three', { sessionId: 'resp_3' })],
      { name: 'stateful' },
    )
    const stateless = new ScriptedAdapter([textTurn('two')], { name: 'stateless' })
    const agent = createAgent(
      { agents: { other: { adapter: stateless } } },
      { adapter: stateful, persister: new InMemoryPersister() },
    )
    const session = await agent.createSession()
    await session.send('a')
    await session.send('b', { agent: 'other' })
    await session.send('c', { agent: 'default' })
    expect(stateless.calls[0]!.options.resume).toBeUndefined()
    expect(stateless.calls[0]!.options.history).toHaveLength(2)
    expect(stateful.calls[1]!.options.resume).toBe('resp_1')
    await agent.close()
  })

  it('after a restart the stored id goes back to the adapter that answered last, also after another profile answers', async () => {
    const persister = new InMemoryPersister()
    const config = (stateless: ScriptedAdapter) => ({ agents: { other: { adapter: stateless } } })
    const stateful = new ScriptedAdapter([textTurn('one', { sessionId: 'resp_1' })], { name: 'stateful' })
    const first = createAgent(config(new ScriptedAdapter([])), { adapter: stateful, persister })
    const id = (await first.chat('a')).id
    await first.close()

    const statefulAgain = new ScriptedAdapter([textTurn('three')], { name: 'stateful' })
    const statelessAgain = new ScriptedAdapter([textTurn('two')], { name: 'stateless' })
    const second = createAgent(config(statelessAgain), { adapter: statefulAgain, persister })
    const session = await second.getSession(id)
    await session!.send('b', { agent: 'other' })
    await session!.send('c', { agent: 'default' })
    expect(statelessAgain.calls[0]!.options.resume).toBeUndefined()
    expect(statefulAgain.calls[0]!.options.resume).toBe('resp_1')
    await second.close()
  })
})

describe('the profile of a send is kept through failures, answers and checkpoints', () => {
  const pay: Tool = {
    name: 'pay',
    description: 'pays',
    inputSchema: { type: 'object' },
    needsApproval: true,
    execute: () => 'paid',
  }

  it('a handoff in a batch held by an approval hands over once the batch is answered', async () => {
    const persister = new InMemoryPersister()
    const triage = new ScriptedAdapter(
      [
        toolCallTurn([
          { id: 'h1', name: 'transfer_to_billing', input: {} },
          { id: 'p1', name: 'pay', input: {} },
        ]),
      ],
      { name: 'triage' },
    )
    const billing = new ScriptedAdapter([textTurn('billing here')], { name: 'billing' })
    const agent = createAgent(
      { tools: [pay], agents: { default: { handoffs: ['billing'] }, billing: { adapter: billing } } },
      { adapter: triage, persister },
    )
    const session = await agent.createSession()
    const first = await session.send('pay and transfer me')
    expect(first.pending?.map((call) => call.name)).toEqual(['pay'])
    const events: SessionEvent[] = []
    session.subscribe((event) => events.push(event))
    const answered = await session.send([{ type: 'tool_approval', toolUseId: 'p1', approved: true }])
    expect(answered.text).toBe('billing here')
    expect(events).toContainEqual({ type: 'handoff', from: 'default', to: 'billing' })
    expect(billing.calls).toHaveLength(1)
    expect(triage.calls).toHaveLength(1)
    await agent.close()
    expect((await persister.getSession(session.id))?.activeAgent).toBe('billing')
    const stored = await persister.getMessages(session.id)
    expect(stored.map((m) => [m.type, m.agentName])).toEqual([
      ['user', undefined],
      ['agent', 'default'],
      ['tool', undefined],
      ['agent', 'billing'],
    ])
  })

  it("a failed or aborted send's partial reply names the send's profile, and retry() runs that profile again", async () => {
    const persister = new InMemoryPersister()
    const main = new ScriptedAdapter([], { name: 'main' })
    const billing = new ScriptedAdapter(
      [
        { events: [{ type: 'text-delta', text: 'half an ans' }], error: new Error('boom') },
        textTurn('the full answer'),
        { events: [{ type: 'text-delta', text: 'cut sho' }], waitForAbort: true },
        textTurn('answered after the abort'),
      ],
      { name: 'billing' },
    )
    const agent = createAgent(
      { retry: { maxRetries: 0 }, agents: { billing: { adapter: billing, systemPrompt: 'BILL' } } },
      { adapter: main, persister },
    )
    const session = await agent.createSession()
    await expect(session.send('first', { agent: 'billing' })).rejects.toThrow('boom')
    expect((await session.retry()).text).toBe('the full answer')
    const streaming = new Promise<void>((resolve) => {
      session.subscribe((event) => event.type === 'text-delta' && event.text === 'cut sho' && resolve())
    })
    const aborted = session.send('second', { agent: 'billing' })
    await streaming
    session.abort()
    await expect(aborted).rejects.toMatchObject({ code: 'ADAPTER_ABORTED' })
    expect((await session.retry()).text).toBe('answered after the abort')
    expect(main.calls).toHaveLength(0)
    expect(billing.calls.map((call) => call.options.systemPrompt)).toEqual(['BILL', 'BILL', 'BILL', 'BILL'])
    await agent.close()
    const agentMessages = (await persister.getMessages(session.id)).filter((m) => m.type === 'agent')
    expect(agentMessages.map((m) => [m.incomplete === true, m.agentName])).toEqual([
      [true, 'billing'],
      [false, 'billing'],
      [true, 'billing'],
      [false, 'billing'],
    ])
  })

  it('a checkpoint of a streaming reply carries the agentName of its profile, so a crash keeps it', async () => {
    const persister = new InMemoryPersister()
    const billing = new ScriptedAdapter(
      [{ events: [{ type: 'text-delta', text: 'streaming…' }], waitForAbort: true }],
      {
        name: 'billing',
      },
    )
    const agent = createAgent(
      { checkpointIntervalMs: 10, agents: { billing: { adapter: billing } } },
      { adapter: new ScriptedAdapter([]), persister },
    )
    const session = await agent.createSession()
    const sent = session.send('hello', { agent: 'billing' })
    let checkpoint: AnyMessage | undefined
    for (let i = 0; i < 100 && checkpoint === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10))
      checkpoint = (await persister.getMessages(session.id)).find((m) => m.type === 'agent')
    }
    expect(checkpoint).toMatchObject({ incomplete: true, agentName: 'billing' })
    session.abort()
    await expect(sent).rejects.toMatchObject({ code: 'ADAPTER_ABORTED' })
    await agent.close()
  })
})

describe('agents as tools', () => {
  function setUp(
    researcherTurns: ConstructorParameters<typeof ScriptedAdapter>[0],
    researcherTools: Tool[] = [],
  ) {
    const persister = new InMemoryPersister()
    const researcher = new ScriptedAdapter(researcherTurns, { name: 'researcher' })
    const lead = new ScriptedAdapter(
      [
        toolCallTurn([{ id: 'r1', name: 'researcher', input: { task: 'Find the capital of France.' } }], {
          usage: usage(10, 2),
        }),
        textTurn('The capital is Paris.', { usage: usage(20, 3) }),
      ],
      { name: 'lead' },
    )
    const agent = createAgent(
      {
        tools: [agentTool('researcher')],
        agents: {
          researcher: {
            description: 'Looks things up',
            adapter: researcher,
            systemPrompt: 'research',
            tools: researcherTools,
          },
        },
      },
      { adapter: lead, persister },
    )
    return { persister, researcher, lead, agent }
  }

  it('runs the profile in a persisted child session whose final text is the tool result, with usage rolled up and subagent events', async () => {
    const { persister, researcher, lead, agent } = setUp([textTurn('Paris.', { usage: usage(5, 1) })])
    const heard: Array<[string, string]> = []
    agent.subscribe((event, source) => heard.push([source.id, event.type]))
    const session = await agent.createSession()
    const events: SessionEvent[] = []
    session.subscribe((event) => events.push(event))
    const result = await session.send('What is the capital of France?')
    expect(result.text).toBe('The capital is Paris.')
    expect(result.usage).toEqual(usage(35, 6))
    // The child sees only its task.
    expect(researcher.calls[0]!.prompt).toBe('Find the capital of France.')
    expect(researcher.calls[0]!.options.history).toEqual([])
    expect(lead.calls[0]!.options.tools?.find((tool) => tool.name === 'researcher')?.description).toBe(
      'Looks things up',
    )
    expect(lead.calls[1]!.prompt).toEqual([
      { type: 'tool_result', toolUseId: 'r1', content: [{ type: 'text', text: 'Paris.' }] },
    ])
    const sub = events.filter((event) => event.type === 'subagent')
    expect(sub.length).toBeGreaterThan(0)
    expect(sub.every((event) => event.type === 'subagent' && event.agent === 'researcher')).toBe(true)
    // Agent listeners hear the child once, through the parent's subagent events.
    expect(heard.filter(([id]) => id !== session.id)).toEqual([])
    expect(heard.filter(([, type]) => type === 'subagent').length).toBe(sub.length)
    // Never repeated as the parent's own deltas.
    expect(
      events
        .filter((event) => event.type === 'text-delta')
        .map((e) => (e as { text: string }).text)
        .join(''),
    ).toBe('The capital is Paris.')
    await agent.close()
    const children = (await persister.listSessions({ includeChildren: true })).filter(
      (s) => s.parentSessionId,
    )
    expect(children).toHaveLength(1)
    expect(children[0]).toMatchObject({
      parentSessionId: session.id,
      parentToolUseId: 'r1',
      activeAgent: 'researcher',
    })
    expect((await persister.listSessions({})).map((s) => s.id)).toEqual([session.id])
    const childMessages = await persister.getMessages(children[0]!.id)
    expect(childMessages.map((m: AnyMessage) => [m.type, m.agentName])).toEqual([
      ['user', undefined],
      ['agent', 'researcher'],
    ])
  })

  it("a session that only has the child's id (another user's, in another scope) is never taken for the child", async () => {
    const { persister, researcher, lead, agent } = setUp([textTurn('Paris.')])
    // Bob's own session, whose id happens to be what Alice's child session would be called.
    const at = new Date().toISOString()
    const usageZero = { inputTokens: 0, outputTokens: 0, totalTokens: 0 }
    await persister.saveSession({
      id: 'alice-chat/r1',
      userId: 'bob',
      summary: 'mine',
      createdAt: at,
      lastActivity: at,
      state: 'idle',
      tokenUsage: usageZero,
    })
    for (const [seq, type, text] of [
      [0, 'user', 'remember this'],
      [1, 'agent', 'Bob secret: 4242'],
    ] as const) {
      await persister.saveMessage('alice-chat/r1', {
        id: `m${seq}`,
        sessionId: 'alice-chat/r1',
        seq,
        type,
        content: [{ type: 'text', text }],
        timestamp: at,
      })
    }
    const before = await persister.getMessages('alice-chat/r1')
    const alice = await agent.withScope({ userId: 'alice' }).createSession({ id: 'alice-chat' })
    const result = await alice.send('What is the capital of France?')
    expect(result.text).toBe('The capital is Paris.')
    // The researcher ran, in a child session of its own; its answer is the tool result.
    expect(researcher.calls.map((call) => call.prompt)).toEqual(['Find the capital of France.'])
    expect(lead.calls.at(-1)!.prompt).toEqual([
      { type: 'tool_result', toolUseId: 'r1', content: [{ type: 'text', text: 'Paris.' }] },
    ])
    await agent.close()
    const stored = JSON.stringify(await persister.getMessages('alice-chat'))
    expect(stored).not.toContain('4242')
    const child = (await persister.listSessions({ includeChildren: true })).find(
      (data) => data.parentSessionId === 'alice-chat',
    )
    expect(child).toMatchObject({ id: 'alice-chat/r1/2', parentToolUseId: 'r1', userId: 'alice' })
    // Bob's session is untouched.
    expect(await persister.getMessages('alice-chat/r1')).toEqual(before)
    expect((await persister.getSession('alice-chat/r1'))?.parentSessionId).toBeUndefined()
  })

  it("a factory's session objects that cannot describe themselves are still found again as the call's child", async () => {
    // A third-party factory whose objects have no toSessionData(): the stored record tells.
    const defaults = new DefaultSessionFactory()
    const opaque: SessionFactory = {
      createSession: (init) => {
        const session = defaults.createSession(init)
        return new Proxy(session, {
          get: (target, key) => {
            if (key === 'toSessionData') return undefined
            const value = Reflect.get(target, key, target)
            return typeof value === 'function' ? value.bind(target) : value
          },
        })
      },
    }
    const publish: Tool = {
      name: 'publish',
      description: 'publishes',
      inputSchema: { type: 'object' },
      needsApproval: true,
      execute: () => 'published',
    }
    const persister = new InMemoryPersister()
    const researcher = new ScriptedAdapter(
      [toolCallTurn([{ id: 'p1', name: 'publish', input: {} }]), textTurn('Published.')],
      { name: 'researcher' },
    )
    const lead = new ScriptedAdapter([
      toolCallTurn([{ id: 'r1', name: 'researcher', input: { task: 'publish it' } }]),
      textTurn('Done.'),
    ])
    const agent = createAgent(
      { tools: [agentTool('researcher')], agents: { researcher: { adapter: researcher, tools: [publish] } } },
      { adapter: lead, persister, sessionFactory: opaque },
    )
    const session = await agent.createSession()
    const first = await session.send('go')
    expect(first.pending?.map((call) => call.toolUseId)).toEqual(['p1'])
    const done = await session.send([{ type: 'tool_approval', toolUseId: 'p1', approved: true }])
    expect(done.text).toBe('Done.')
    // The answer reached the waiting child: no second child, the task ran once.
    expect(researcher.calls.map((call) => call.prompt)).toEqual([
      'publish it',
      [{ type: 'tool_result', toolUseId: 'p1', content: [{ type: 'text', text: 'published' }] }],
    ])
    await agent.close()
    const children = (await persister.listSessions({ includeChildren: true })).filter(
      (data) => data.parentSessionId,
    )
    expect(children.map((data) => data.id)).toEqual([`${session.id}/r1`])
  })

  it('a tool-use id the model uses again in a later turn runs the new task, in a child of its own', async () => {
    const persister = new InMemoryPersister()
    const researcher = new ScriptedAdapter([textTurn('Bonjour.'), textTurn('Au revoir.')], {
      name: 'researcher',
    })
    const lead = new ScriptedAdapter(
      [
        toolCallTurn([{ id: 'call_1', name: 'researcher', input: { task: 'translate hello' } }]),
        textTurn('It is Bonjour.'),
        toolCallTurn([{ id: 'call_1', name: 'researcher', input: { task: 'translate goodbye' } }]),
        textTurn('It is Au revoir.'),
      ],
      { name: 'lead' },
    )
    const config = { tools: [agentTool('researcher')], agents: { researcher: { adapter: researcher } } }
    const agent = createAgent(config, { adapter: lead, persister })
    const session = await agent.createSession()
    await session.send('hello?')
    await session.send('goodbye?')
    expect(researcher.calls.map((call) => call.prompt)).toEqual(['translate hello', 'translate goodbye'])
    expect(lead.calls[3]!.prompt).toEqual([
      { type: 'tool_result', toolUseId: 'call_1', content: [{ type: 'text', text: 'Au revoir.' }] },
    ])
    await agent.close()
    const children = (await persister.listSessions({ includeChildren: true }))
      .filter((data) => data.parentSessionId === session.id)
      .map((data) => data.id)
      .sort()
    expect(children).toEqual([`${session.id}/call_1`, `${session.id}/call_1/2`])
  })

  it('a child that answers with no text gives a non-empty result saying so (providers refuse empty text)', async () => {
    const { lead, agent } = setUp([{ events: [{ type: 'message', content: [], stopReason: 'end_turn' }] }])
    const session = await agent.createSession()
    await session.send('go')
    expect(lead.calls[1]!.prompt).toEqual([
      {
        type: 'tool_result',
        toolUseId: 'r1',
        content: [{ type: 'text', text: '(the researcher agent gave no text)' }],
      },
    ])
    await agent.close()
  })

  it("a child's failure becomes an isError tool result; the parent goes on", async () => {
    const failure = new AdapterError('model exploded', {
      kind: 'server',
      provider: 'researcher',
      retryable: false,
    })
    const { persister, lead, agent } = setUp([{ events: [], error: failure }])
    const session = await agent.createSession()
    const result = await session.send('go')
    expect(result.text).toBe('The capital is Paris.')
    const prompt = lead.calls[1]!.prompt as ToolResultBlock[]
    expect(prompt[0]!.isError).toBe(true)
    expect(JSON.stringify(prompt[0]!.content)).toContain('model exploded')
    await agent.close()
    expect((await persister.getSession(session.id))?.state).toBe('idle')
  })

  it('deleting the parent deletes its children', async () => {
    const { persister, agent } = setUp([textTurn('Paris.')])
    const session = await agent.createSession()
    await session.send('go')
    await session.flush()
    expect(await persister.listSessions({ includeChildren: true })).toHaveLength(2)
    await agent.deleteSession(session.id)
    expect(await persister.listSessions({ includeChildren: true })).toHaveLength(0)
    await agent.close()
  })

  it('the child objects in memory go with their parent: deleted, never written again (also through session.delete())', async () => {
    for (const how of ['agent', 'session'] as const) {
      const { persister, agent } = setUp([textTurn('Paris.')])
      const session = await agent.createSession()
      await session.send('go')
      const [childData] = (await persister.listSessions({ includeChildren: true })).filter(
        (data) => data.parentSessionId === session.id,
      )
      const child = await agent.getSession(childData!.id)
      expect(child?.state).toBe('idle')
      if (how === 'agent') await agent.deleteSession(session.id)
      else await session.delete()
      expect(child!.state).toBe('deleted')
      expect(await agent.getSession(childData!.id)).toBeUndefined()
      await expect(child!.send('still there?')).rejects.toBeInstanceOf(SessionStateError)
      await agent.close()
      expect(await persister.listSessions({ includeChildren: true })).toEqual([])
    }
  })

  it('aborting the parent aborts the child', async () => {
    const { persister, agent } = setUp([{ events: textTurn('slow research'), waitForAbort: true }])
    const session = await agent.createSession()
    // Aborted once the child streams (not after a fixed time, which a loaded machine may not reach).
    const childStreams = new Promise<void>((resolve) => {
      session.subscribe(
        (event) => event.type === 'subagent' && event.event.type === 'text-delta' && resolve(),
      )
    })
    const running = session.send('go')
    await childStreams
    session.abort()
    await expect(running).rejects.toMatchObject({ kind: 'aborted' })
    await session.flush()
    const child = (await persister.listSessions({ includeChildren: true })).find((s) => s.parentSessionId)
    expect(child?.state).toBe('aborted')
    // The agent-tool call keeps its answer, as an ordinary tool's aborted call does.
    const stored = await persister.getMessages(session.id)
    expect(stored.map((m) => m.type)).toEqual(['user', 'agent', 'tool'])
    expect(stored[2]!.content).toEqual([
      {
        type: 'tool_result',
        toolUseId: 'r1',
        content: [{ type: 'text', text: 'The researcher agent was stopped: the send was aborted.' }],
        isError: true,
      },
    ])
    await agent.close()
  })

  it('an abort while an agent tool runs leaves the other calls of its batch not run, each answered', async () => {
    const ran: string[] = []
    const other: Tool = {
      name: 'other',
      description: 'runs after the agent tools',
      inputSchema: { type: 'object' },
      execute: () => {
        ran.push('other')
        return 'done'
      },
    }
    const persister = new InMemoryPersister()
    const researcher = new ScriptedAdapter([{ events: textTurn('slow'), waitForAbort: true }], {
      name: 'researcher',
    })
    const lead = new ScriptedAdapter([
      toolCallTurn([
        { id: 'r1', name: 'researcher', input: { task: 'look' } },
        { id: 'o1', name: 'other', input: {} },
      ]),
      textTurn('after retry'),
    ])
    const config = {
      tools: [agentTool('researcher'), other],
      agents: { researcher: { adapter: researcher } },
    }
    const agent = createAgent(config, { adapter: lead, persister })
    const session = await agent.createSession()
    const running = session.send('go')
    await vi.waitFor(() => expect(researcher.calls).toHaveLength(1))
    session.abort()
    await expect(running).rejects.toMatchObject({ kind: 'aborted' })
    expect(ran).toEqual([])
    await session.flush()
    const tool = (await persister.getMessages(session.id)).find((m) => m.type === 'tool')!
    expect((tool.content as ToolResultBlock[]).map((block) => [block.toolUseId, block.isError])).toEqual([
      ['r1', true],
      ['o1', true],
    ])
    // retry() goes on from the tool results.
    expect((await session.retry()).text).toBe('after retry')
    expect((lead.calls[1]!.prompt as ToolResultBlock[]).map((block) => block.toolUseId)).toEqual(['r1', 'o1'])
    await agent.close()
  })

  it("a child that stops for an approval still counts in its parent's send usage, before and after the answer", async () => {
    const publish: Tool = {
      name: 'publish',
      description: 'publishes',
      inputSchema: { type: 'object' },
      needsApproval: true,
      execute: () => 'published',
    }
    const { agent } = setUp(
      [
        toolCallTurn([{ id: 'p1', name: 'publish', input: {} }], { usage: usage(100, 10) }),
        textTurn('Published.', { usage: usage(1000, 20) }),
      ],
      [publish],
    )
    const session = await agent.createSession()
    const waiting = await session.send('research and publish')
    expect(waiting.pending).toHaveLength(1)
    // The lead's request (10 + 2) and the child's up to its approval (100 + 10); before: the lead's only.
    expect(waiting.usage).toEqual(usage(110, 12))
    const answered = await session.send([{ type: 'tool_approval', toolUseId: 'p1', approved: true }])
    // The child's resumed request (1000 + 20) and the lead's answer (20 + 3); before: the lead's only.
    expect(answered.usage).toEqual(usage(1020, 23))
    await agent.close()
  })

  it('an approval inside the child makes the parent wait; the answer sent to the parent reaches the child, also after a restart', async () => {
    const log: string[] = []
    const publish: Tool<{ text: string }> = {
      name: 'publish',
      description: 'publishes',
      inputSchema: { type: 'object' },
      needsApproval: true,
      execute: (input) => {
        log.push(input.text)
        return 'published'
      },
    }
    const { persister, agent } = setUp(
      [
        toolCallTurn([{ id: 'p1', name: 'publish', input: { text: 'Paris is the capital.' } }]),
        textTurn('Published: Paris.'),
      ],
      [publish],
    )
    const session = await agent.createSession()
    const first = await session.send('research and publish')
    const childId = (await persister.listSessions({ includeChildren: true })).find(
      (s) => s.parentSessionId,
    )!.id
    expect(first.pending).toEqual([
      {
        toolUseId: 'p1',
        name: 'publish',
        input: { text: 'Paris is the capital.' },
        kind: 'approval',
        sessionId: childId,
      },
    ])
    expect(session.state).toBe('waiting_input')
    expect(log).toEqual([])
    await agent.close()

    // A new process finds the same pending call and answers the parent.
    const researcher = new ScriptedAdapter([textTurn('Published: Paris.')], { name: 'researcher' })
    const lead = new ScriptedAdapter([textTurn('Done: published.')], { name: 'lead' })
    const again = createAgent(
      {
        tools: [agentTool('researcher')],
        agents: { researcher: { adapter: researcher, tools: [publish] } },
      },
      { adapter: lead, persister },
    )
    const parent = (await again.getSession(session.id))!
    expect(await parent.getPending()).toEqual(first.pending)
    const result = await parent.send([{ type: 'tool_approval', toolUseId: 'p1', approved: true }])
    expect(result.text).toBe('Done: published.')
    expect(log).toEqual(['Paris is the capital.'])
    expect(lead.calls[0]!.prompt).toEqual([
      { type: 'tool_result', toolUseId: 'r1', content: [{ type: 'text', text: 'Published: Paris.' }] },
    ])
    await again.close()
    expect((await persister.getMessages(childId)).map((m) => m.type)).toEqual([
      'user',
      'agent',
      'tool',
      'agent',
    ])
    expect((await persister.getMessages(session.id)).map((m) => m.type)).toEqual([
      'user',
      'agent',
      'tool',
      'agent',
    ])
  })

  it("a batch holding the parent's own approval and an agent tool whose child then waits: what is pending is what the store says, and one answer to all of it runs the batch", async () => {
    const log: string[] = []
    const dangerous: Tool<{ x: number }> = {
      name: 'dangerous',
      description: 'does something',
      inputSchema: { type: 'object' },
      needsApproval: true,
      execute: (input) => {
        log.push(`dangerous ${input.x}`)
        return 'done'
      },
    }
    const persister = new InMemoryPersister()
    const researcher = new ScriptedAdapter(
      [toolCallTurn([{ id: 'c1', name: 'dangerous', input: { x: 11 } }]), textTurn('child done')],
      { name: 'researcher' },
    )
    const lead = new ScriptedAdapter(
      [
        toolCallTurn([
          { id: 'r1', name: 'researcher', input: { task: 'look it up' } },
          { id: 'p1', name: 'dangerous', input: { x: 7 } },
        ]),
        textTurn('all done'),
      ],
      { name: 'lead' },
    )
    const agent = createAgent(
      {
        tools: [agentTool('researcher'), dangerous],
        agents: { researcher: { adapter: researcher, tools: [dangerous] } },
      },
      { adapter: lead, persister },
    )
    const session = await agent.createSession()
    const first = await session.send('go')
    expect(first.pending?.map((call) => call.toolUseId)).toEqual(['p1'])
    // p1 is answered: the child starts and stops for its own approval.
    const second = await session.send([{ type: 'tool_approval', toolUseId: 'p1', approved: true }])
    const stored = await session.getPending()
    // Before, SendResult.pending listed only c1, while getPending() listed c1 and p1, and
    // answering exactly SendResult.pending was refused ("missing: 'p1'").
    expect(second.pending).toEqual(stored)
    expect(stored.map((call) => call.toolUseId).sort()).toEqual(['c1', 'p1'])
    expect(second.stopReason).toBe('tool_use')
    expect(session.state).toBe('waiting_input')
    expect(log).toEqual([])
    const third = await session.send(
      second.pending!.map((call) => ({
        type: 'tool_approval' as const,
        toolUseId: call.toolUseId,
        approved: true,
      })),
    )
    expect(third.text).toBe('all done')
    expect(log.sort()).toEqual(['dangerous 11', 'dangerous 7'])
    const tool = (await persister.getMessages(session.id)).find((message) => message.type === 'tool')!
    expect((tool.content as ToolResultBlock[]).map((result) => result.toolUseId)).toEqual(['r1', 'p1'])
    await agent.close()
  })

  it('a waiting child refuses answers sent to it directly (its parent would wait for good); the parent routes them', async () => {
    const publish: Tool = {
      name: 'publish',
      description: 'publishes',
      inputSchema: { type: 'object' },
      needsApproval: true,
      execute: () => 'published',
    }
    const { persister, agent } = setUp(
      [toolCallTurn([{ id: 'p1', name: 'publish', input: {} }]), textTurn('Published.')],
      [publish],
    )
    const session = await agent.createSession()
    await session.send('research and publish')
    const childData = (await persister.listSessions({ includeChildren: true })).find(
      (s) => s.parentSessionId,
    )!
    const child = (await agent.getSession(childData.id))!
    const before = await persister.getMessages(child.id)
    // Before, the child took the answer and finished, and the parent stayed waiting_input with
    // nothing pending: every answer to it was refused.
    await expect(child.send([{ type: 'tool_approval', toolUseId: 'p1', approved: true }])).rejects.toThrow(
      new RegExp(`send the answers to ${session.id}`),
    )
    await expect(child.send('just text')).rejects.toMatchObject({ code: 'VALIDATION' })
    await expect(child.complete()).rejects.toMatchObject({
      name: 'SessionStateError',
      state: 'waiting_input',
    })
    expect(child.state).toBe('waiting_input')
    expect(await persister.getMessages(child.id)).toEqual(before)
    const result = await session.send([{ type: 'tool_approval', toolUseId: 'p1', approved: true }])
    expect(result.text).toBe('The capital is Paris.')
    expect(child.state).toBe('idle')
    await agent.close()
  })
})
