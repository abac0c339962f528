// Compaction (DESIGN §10.4): every bullet as a named test, with a scripted model that reports
// usage.inputTokens, each checking what was persisted and what the model was sent.
import { describe, expect, it, vi } from 'vitest'
import { createAgent } from '../agent/create-agent.js'
import type { GetMessagesQuery } from '../contracts/agent-persister.js'
import type { AnyMessage, ContentBlock, TokenUsage } from '../contracts/messages.js'
import { AdapterError } from '../errors/adapter-error.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { SessionBusyError } from '../errors/session-busy-error.js'
import { SessionStateError } from '../errors/session-state-error.js'
import { ValidationError } from '../errors/validation-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn, toolCallTurn, usage } from '../testing/stream-helpers.js'
import type { Tool } from '../tools/tool.js'
import type { Logger } from '../util/logger.js'
import { DEFAULT_COMPACTION_INSTRUCTIONS } from './compaction-options.js'
import { estimateRequestTokens, historyWithCompaction, planCompaction } from './compaction-plan.js'
import type { SessionEvent } from './session-events.js'

const reply = (text: string, inputTokens: number) => textTurn(text, { usage: usage(inputTokens, 10) })
const summaryTurn = (text: string, tokens: TokenUsage = usage(500, 40)) => textTurn(text, { usage: tokens })
const textOf = (message: AnyMessage | undefined): string =>
  message === undefined
    ? ''
    : typeof message.content === 'string'
      ? message.content
      : message.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
const shape = (messages: readonly AnyMessage[]) =>
  messages.map((m) => `${m.type}:${m.compaction ? 'summary' : textOf(m) || m.seq}`)
const fastRetry = { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 100 }

function silentLogger() {
  const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() }
  return logger satisfies Logger
}

/** A store that records every getMessages call and the seqs it returned. */
class RecordingPersister extends InMemoryPersister {
  reads: Array<{ query: GetMessagesQuery | undefined; seqs: number[] }> = []
  override async getMessages(sessionId: string, query?: GetMessagesQuery): Promise<AnyMessage[]> {
    const page = await super.getMessages(sessionId, query)
    this.reads.push({ query, seqs: page.map((m) => m.seq) })
    return page
  }
}

/** Three exchanges whose replies report 300, 600 and 995 input tokens: the fourth send passes 1000. */
async function growingSession(options: { keepRecentMessages?: number; summariser?: ScriptedAdapter } = {}) {
  const persister = new InMemoryPersister()
  const model = new ScriptedAdapter([reply('a1', 300), reply('a2', 600), reply('a3', 995), reply('a4', 120)])
  const summariser = options.summariser ?? new ScriptedAdapter([summaryTurn('SUMMARY-1')])
  const agent = createAgent(
    {
      model: 'big-model',
      systemPrompt: 'You are terse.',
      compaction: {
        thresholdTokens: 1000,
        keepRecentMessages: options.keepRecentMessages ?? 2,
        adapter: summariser,
        model: 'small-model',
      },
      retry: fastRetry,
    },
    { adapter: model, persister, logger: silentLogger() },
  )
  const session = await agent.createSession()
  await session.send('u1')
  await session.send('u2')
  await session.send('u3')
  return { persister, model, summariser, agent, session }
}

describe('compaction: the trigger before a model request', () => {
  it('compacts before the request whose input would pass thresholdTokens (last usage.inputTokens + an estimate of what came after)', async () => {
    const { persister, model, summariser, agent, session } = await growingSession()
    // The three sends stayed below 1000 (300, then 600 + a little, then 995 reported afterwards).
    expect(summariser.calls).toHaveLength(0)
    const events: SessionEvent[] = []
    for await (const event of session.stream('u4')) events.push(event)
    await agent.close()

    // One summary, asked before the fourth model request.
    expect(summariser.calls).toHaveLength(1)
    const types = events.map((e) => e.type)
    expect(types.indexOf('compaction')).toBeLessThan(types.indexOf('step-start'))
    // Persisted: nothing deleted, the summary after the prompt, covering u1…a2 (seq 0–3): the
    // kept tail of 2 (a3, u4) grew to keep u3 with its answer.
    const stored = await persister.getMessages(session.id)
    expect(shape(stored)).toEqual([
      'user:u1',
      'agent:a1',
      'user:u2',
      'agent:a2',
      'user:u3',
      'agent:a3',
      'user:u4',
      'system:summary',
      'agent:a4',
    ])
    const summary = stored[7]!
    expect(summary).toMatchObject({
      type: 'system',
      content: [{ type: 'text', text: 'SUMMARY-1' }],
      compaction: { throughSeq: 3 },
      usage: usage(500, 40),
    })
    // The model saw the system prompt, the summary and only what came after seq 3.
    const request = model.calls[3]!
    expect(request.options.systemPrompt).toBe('You are terse.')
    expect(request.prompt).toBe('u4')
    expect(shape(request.options.history)).toEqual(['system:summary', 'user:u3', 'agent:a3'])
    expect(textOf(request.options.history[0])).toContain('SUMMARY-1')
  })

  it('trusts the provider count: a small conversation whose last reply reported a large input compacts', async () => {
    const model = new ScriptedAdapter([reply('short', 5000), reply('ok', 10)])
    const summariser = new ScriptedAdapter([summaryTurn('S')])
    const agent = createAgent(
      { compaction: { thresholdTokens: 4000, keepRecentMessages: 1, adapter: summariser } },
      { adapter: model, persister: new InMemoryPersister() },
    )
    const session = await agent.createSession()
    await session.send('hi')
    await session.send('again')
    expect(summariser.calls).toHaveLength(1)
    expect(shape(model.calls[1]!.options.history)).toEqual(['system:summary'])
  })

  it('estimates the whole request (system prompt, tools, history, prompt) when no response reported usage', async () => {
    const long = 'lorem ipsum dolor '.repeat(40) // about 80 tokens by the estimate
    const model = new ScriptedAdapter([textTurn('one'), textTurn('two'), textTurn('three')])
    const summariser = new ScriptedAdapter([summaryTurn('S')])
    const agent = createAgent(
      { compaction: { thresholdTokens: 150, keepRecentMessages: 1, adapter: summariser } },
      { adapter: model, persister: new InMemoryPersister() },
    )
    const session = await agent.createSession()
    await session.send(long)
    expect(summariser.calls).toHaveLength(0)
    await session.send(long)
    expect(summariser.calls).toHaveLength(1)
    expect(shape(model.calls[1]!.options.history)).toEqual(['system:summary'])
    expect(estimateRequestTokens({ history: [], prompt: long })).toBeGreaterThan(60)
  })

  it('does not count usage from before the latest compaction: the kept tail does not make it compact again', async () => {
    const { model, summariser, session } = await growingSession()
    model.push(reply('a5', 150))
    await session.send('u4') // compacts; the kept a3 still carries 995 input tokens
    await session.send('u5') // a4 reported 120: far below the threshold
    expect(summariser.calls).toHaveLength(1)
    expect(shape(model.calls[4]!.options.history)).toEqual([
      'system:summary',
      'user:u3',
      'agent:a3',
      'user:u4',
      'agent:a4',
    ])
  })

  it('never splits a tool call from its result, and opens with the summary as a user turn when the kept part opens with a reply', async () => {
    const lookup: Tool = {
      name: 'lookup',
      description: 'Reads a value',
      inputSchema: { type: 'object' },
      execute: (input) => `value of ${(input as { key: string }).key}`,
    }
    const call = (id: string, inputTokens: number) =>
      toolCallTurn([{ id, name: 'lookup', input: { key: id } }], { usage: usage(inputTokens, 10) })
    const model = new ScriptedAdapter([
      call('k1', 100),
      call('k2', 300),
      call('k3', 5000),
      reply('done', 200),
    ])
    const summariser = new ScriptedAdapter([summaryTurn('S')])
    const persister = new InMemoryPersister()
    const agent = createAgent(
      { tools: [lookup], compaction: { thresholdTokens: 1000, keepRecentMessages: 1, adapter: summariser } },
      { adapter: model, persister },
    )
    const session = await agent.createSession()
    const result = await session.send('look three things up')
    expect(result.text).toBe('done')
    // Before step 4 the prompt is the k3 result; keeping 1 message would cut it from its call.
    const summary = (await persister.getMessages(session.id)).find((m) => m.compaction)!
    expect(summary.compaction).toEqual({ throughSeq: 4 }) // the user message, k1 and k2 with their results
    const request = model.calls[3]!
    expect(shape(request.options.history)).toEqual(['user:summary', 'agent:5'])
    expect(request.options.history[1]!.content).toEqual([
      { type: 'tool_use', id: 'k3', name: 'lookup', input: { key: 'k3' } },
    ])
    expect(request.prompt).toEqual([
      { type: 'tool_result', toolUseId: 'k3', content: [{ type: 'text', text: 'value of k3' }] },
    ])
    expect(summariser.calls[0]!.prompt).toContain('[result of lookup]: value of k2')
  })

  it('nothing is deleted: getMessages() returns every message, the summary among them', async () => {
    const { persister, session } = await growingSession()
    await session.send('u4')
    const all = await session.getMessages()
    expect(all.map((m) => m.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8])
    expect(await persister.getMessages(session.id)).toEqual(all)
  })

  it('counts the summary request in the session usage and in the usage of the send that made it', async () => {
    const { session } = await growingSession()
    const before = session.getTokenUsage()
    const result = await session.send('u4')
    expect(result.usage).toEqual(usage(500 + 120, 40 + 10))
    expect(session.getTokenUsage().inputTokens).toBe(before.inputTokens + 620)
    expect(result.messages.map((m) => m.type)).toEqual(['user', 'system', 'agent'])
  })

  it('drops the provider session id, so the next request replays the compacted history instead of resuming', async () => {
    const persister = new InMemoryPersister()
    const model = new ScriptedAdapter([
      textTurn('a1', { sessionId: 'resp-1', usage: usage(2000, 10) }),
      textTurn('a2', { sessionId: 'resp-2', usage: usage(100, 10) }),
    ])
    const agent = createAgent(
      {
        compaction: {
          thresholdTokens: 1000,
          keepRecentMessages: 1,
          adapter: new ScriptedAdapter([summaryTurn('S')]),
        },
      },
      { adapter: model, persister },
    )
    const session = await agent.createSession()
    await session.send('u1')
    expect(session.providerSessionId).toBe('resp-1')
    const seen: Array<string | undefined> = []
    session.subscribe((event) => {
      if (event.type === 'compaction') seen.push(session.providerSessionId)
    })
    await session.send('u2')
    expect(seen).toEqual([undefined])
    expect(model.calls[1]!.options.resume).toBeUndefined()
    expect(shape(model.calls[1]!.options.history)).toEqual(['system:summary'])
    await agent.close()
    expect((await persister.getSession(session.id))!.providerSessionId).toBe('resp-2')
  })

  it('asks compaction.adapter with compaction.model and the instructions; by default the session adapter with the request model', async () => {
    const { summariser } = await growingSession().then(async (setup) => {
      await setup.session.send('u4')
      return setup
    })
    const call = summariser.calls[0]!
    expect(call.options.model).toBe('small-model')
    expect(call.options.systemPrompt).toBe(DEFAULT_COMPACTION_INSTRUCTIONS)
    expect(call.options.history).toEqual([])
    expect(call.options.tools).toBeUndefined()
    // The transcript of what is summarised, not the kept tail.
    expect(call.prompt).toContain('User:\nu1')
    expect(call.prompt).toContain('Assistant:\na2')
    expect(call.prompt).not.toContain('u3')
    expect(call.prompt).not.toContain('a3')
    expect(call.prompt).not.toContain('u4')

    // Without compaction.adapter: the session's own adapter, with the request's model.
    const model = new ScriptedAdapter([reply('a1', 5000), summaryTurn('S'), reply('a2', 10)])
    const agent = createAgent(
      {
        model: 'big-model',
        compaction: { thresholdTokens: 1000, keepRecentMessages: 1, instructions: 'Be brief.' },
      },
      { adapter: model, persister: new InMemoryPersister() },
    )
    const session = await agent.createSession()
    await session.send('u1')
    await session.send('u2', { model: 'other-model' })
    expect(model.calls[1]!.options).toMatchObject({
      model: 'other-model',
      systemPrompt: 'Be brief.',
      history: [],
    })
    expect(model.calls[2]!.options.model).toBe('other-model')
  })

  it('agent.chat passes compaction on to the session it creates', async () => {
    const summariser = new ScriptedAdapter([summaryTurn('S')])
    const model = new ScriptedAdapter([reply('a1', 5000), reply('a2', 10)])
    const agent = createAgent({}, { adapter: model, persister: new InMemoryPersister() })
    const session = await agent.chat('u1', {
      compaction: { thresholdTokens: 100, keepRecentMessages: 1, adapter: summariser },
    })
    await session.send('u2')
    expect(summariser.calls).toHaveLength(1)
  })

  it('createSession({ compaction }) overrides the agent compaction for that session', async () => {
    const summariser = new ScriptedAdapter([summaryTurn('S')])
    const model = new ScriptedAdapter([reply('a1', 500), reply('a2', 10), reply('b1', 500), reply('b2', 10)])
    const agent = createAgent(
      { compaction: { thresholdTokens: 100_000, adapter: summariser } },
      { adapter: model, persister: new InMemoryPersister() },
    )
    const quiet = await agent.createSession()
    await quiet.send('u1')
    await quiet.send('u2')
    expect(summariser.calls).toHaveLength(0)
    const eager = await agent.createSession({
      compaction: { thresholdTokens: 100, keepRecentMessages: 1, adapter: summariser },
    })
    await eager.send('v1')
    await eager.send('v2')
    expect(summariser.calls).toHaveLength(1)
    expect(shape(model.calls[3]!.options.history)).toEqual(['system:summary'])
  })
})

describe('compaction: repeated, manual, after a restart', () => {
  it("compaction.adapter without compaction.model: that adapter's default model, else the request's model", async () => {
    for (const defaultModel of ['cheap-default', undefined]) {
      const summariser = Object.assign(new ScriptedAdapter([summaryTurn('S')], { name: 'cheap' }), {
        defaultModel,
      })
      const model = new ScriptedAdapter([reply('a1', 5000), reply('a2', 10)])
      const agent = createAgent(
        {
          model: 'big-model',
          compaction: { thresholdTokens: 1000, keepRecentMessages: 1, adapter: summariser },
        },
        { adapter: model, persister: new InMemoryPersister() },
      )
      const session = await agent.createSession()
      await session.send('u1')
      await session.send('u2')
      // Before, an adapter of its own was asked with model '' — one that names no default (an
      // OpenAI adapter made without `model`) refused every summary.
      expect(summariser.calls[0]!.options.model).toBe(defaultModel ?? 'big-model')
      expect(model.calls[1]!.options.model).toBe('big-model')
      await agent.close()
    }
  })

  it('repeated compactions build on the previous summary, and the model sees only the latest', async () => {
    const summariser = new ScriptedAdapter([summaryTurn('SUMMARY-1'), summaryTurn('SUMMARY-2')])
    const { model, session, persister } = await growingSession({ summariser })
    model.push(reply('a5', 2000), reply('a6', 50))
    await session.send('u4') // first compaction, through a2 (seq 3)
    await session.send('u5') // a4 reported 120: no compaction
    await session.send('u6') // a5 reported 2000: second compaction
    expect(summariser.calls).toHaveLength(2)
    const second = summariser.calls[1]!.prompt as string
    expect(second).toContain('<earlier-summary>\nSUMMARY-1\n</earlier-summary>')
    expect(second).toContain('User:\nu3')
    expect(second).toContain('Assistant:\na4')
    expect(second).not.toContain('u5')
    expect(second).not.toContain('u1') // already in the first summary
    const stored = await persister.getMessages(session.id)
    const summaries = stored.filter((m) => m.compaction)
    expect(summaries.map((m) => [textOf(m), m.compaction!.throughSeq])).toEqual([
      ['SUMMARY-1', 3],
      ['SUMMARY-2', 8],
    ])
    const history = model.calls[5]!.options.history
    expect(shape(history)).toEqual(['system:summary', 'user:u5', 'agent:a5'])
    expect(textOf(history[0])).toContain('SUMMARY-2')
    expect(textOf(history[0])).not.toContain('SUMMARY-1')
  })

  it('session.compact() compacts now, persists and resolves to the summary, emits message and compaction, and works without compaction options', async () => {
    const model = new ScriptedAdapter([
      reply('a1', 10),
      reply('a2', 10),
      summaryTurn('MANUAL'),
      reply('a3', 10),
    ])
    const persister = new InMemoryPersister()
    const agent = createAgent({ durability: 'sync' }, { adapter: model, persister })
    const session = await agent.createSession()
    await session.send('u1')
    await session.send('u2')
    const events: SessionEvent[] = []
    session.subscribe((event) => events.push(event))
    const summary = await session.compact({ keepRecentMessages: 2 })
    expect(summary).toMatchObject({
      seq: 4,
      type: 'system',
      compaction: { throughSeq: 1 },
      usage: usage(500, 40),
    })
    expect(events.map((e) => e.type)).toEqual(['message', 'compaction'])
    expect(events[1]).toEqual({ type: 'compaction', message: summary })
    expect(session.state).toBe('idle')
    // sync durability: stored when compact() resolves.
    expect((await persister.getMessages(session.id))[4]).toEqual(summary)
    await session.send('u3')
    expect(shape(model.calls[3]!.options.history)).toEqual(['system:summary', 'user:u2', 'agent:a2'])
  })

  it('session.compact({ signal }) aborts the summary request; nothing is written and the session stays usable', async () => {
    const model = new ScriptedAdapter([
      reply('a1', 10),
      reply('a2', 10),
      { events: [], waitForAbort: true },
      reply('a3', 10),
    ])
    const persister = new InMemoryPersister()
    const agent = createAgent({}, { adapter: model, persister })
    const session = await agent.createSession()
    await session.send('u1')
    await session.send('u2')
    const controller = new AbortController()
    const compacting = session.compact({ keepRecentMessages: 1, signal: controller.signal })
    await vi.waitFor(() => expect(model.calls).toHaveLength(3))
    controller.abort()
    await expect(compacting).rejects.toMatchObject({
      kind: 'aborted',
      message: 'The compaction was aborted.',
    })
    expect(session.state).toBe('idle')
    expect((await session.send('u3')).text).toBe('a3')
    await agent.close()
    expect((await persister.getMessages(session.id)).some((m) => m.compaction)).toBe(false)
  })

  it('session.abort() during compact() says the compaction was aborted; an aborted send still says the send was', async () => {
    const model = new ScriptedAdapter([
      reply('a1', 10),
      { events: [], waitForAbort: true },
      { events: [], waitForAbort: true },
    ])
    const agent = createAgent({}, { adapter: model, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    await session.send('u1')
    const compacting = session.compact({ keepRecentMessages: 0 })
    await vi.waitFor(() => expect(model.calls).toHaveLength(2))
    session.abort()
    await expect(compacting).rejects.toMatchObject({
      kind: 'aborted',
      message: 'The compaction was aborted.',
    })
    const sending = session.send('u2')
    await vi.waitFor(() => expect(model.calls).toHaveLength(3))
    session.abort()
    await expect(sending).rejects.toMatchObject({ kind: 'aborted', message: 'The send was aborted.' })
    await agent.close()
  })

  it('session.compact() rejects while a send runs, and with SessionStateError when nothing is old enough', async () => {
    const model = new ScriptedAdapter([{ events: textTurn('slow'), delayMs: 20 }, summaryTurn('S')])
    const agent = createAgent({}, { adapter: model, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    const running = session.send('u1')
    await expect(session.compact()).rejects.toBeInstanceOf(SessionBusyError)
    await running
    await expect(session.compact()).rejects.toBeInstanceOf(SessionStateError)
    await expect(session.compact({ keepRecentMessages: -1 })).rejects.toBeInstanceOf(ValidationError)
    expect(await session.getMessages()).toHaveLength(2)
    const summary = await session.compact({ keepRecentMessages: 0 })
    expect(summary.compaction).toEqual({ throughSeq: 1 })
  })

  it('a compaction survives a restart: a new agent over the same store starts the next request from it, reading only from it onwards', async () => {
    const persister = new RecordingPersister()
    // A long conversation stored earlier: 400 messages, the last reply reporting 50 000 input tokens.
    const first = createAgent({}, { adapter: new ScriptedAdapter(), persister })
    const seeded = await first.createSession()
    await first.close()
    const now = new Date().toISOString()
    for (let seq = 0; seq < 400; seq++) {
      const agentTurn = seq % 2 === 1
      await persister.saveMessage(seeded.id, {
        id: `m-${seq}`,
        sessionId: seeded.id,
        seq,
        type: agentTurn ? 'agent' : 'user',
        content: [{ type: 'text', text: `${agentTurn ? 'a' : 'u'}${seq}` }],
        timestamp: now,
        ...(agentTurn ? { usage: usage(50_000 + seq, 10) } : {}),
      })
    }
    const summariser = new ScriptedAdapter([summaryTurn('LONG STORY')])
    const second = createAgent(
      { compaction: { thresholdTokens: 10_000, keepRecentMessages: 4, adapter: summariser } },
      { adapter: new ScriptedAdapter([reply('a400', 900)]), persister },
    )
    await (await second.getSession(seeded.id))!.send('u400')
    await second.close()
    const summary = (await persister.getMessages(seeded.id)).find((m) => m.compaction)!
    expect(summary.compaction).toEqual({ throughSeq: 395 })

    persister.reads = []
    const model = new ScriptedAdapter([reply('next', 900)])
    const third = createAgent({}, { adapter: model, persister })
    const session = (await third.getSession(seeded.id))!
    await session.send('after the restart')
    expect(shape(model.calls[0]!.options.history)).toEqual([
      'system:summary',
      'user:u396',
      'agent:a397',
      'user:u398',
      'agent:a399',
      'user:u400',
      'agent:a400',
    ])
    expect(textOf(model.calls[0]!.options.history[0])).toContain('LONG STORY')
    // Hydration read one page back from the end: nothing from the start of the conversation.
    expect(persister.reads).toHaveLength(1)
    expect(Math.min(...persister.reads[0]!.seqs)).toBeGreaterThan(250)
    // …and the whole conversation is still there for whoever asks.
    expect((await session.getMessages()).map((m) => m.seq)).toEqual(Array.from({ length: 405 }, (_, i) => i))
    await third.close()
  })
})

describe('compaction: profiles and forks', () => {
  it('a profile compacts with its own settings and adapter; the default profile with the agent settings', async () => {
    const main = new ScriptedAdapter([reply('d1', 500), reply('d2', 10)])
    const cheap = new ScriptedAdapter([summaryTurn('BILLING SUMMARY')])
    const billing = new ScriptedAdapter([reply('b1', 500), reply('b2', 10)])
    const agent = createAgent(
      {
        compaction: { thresholdTokens: 100_000 },
        agents: {
          billing: {
            adapter: billing,
            model: 'billing-model',
            compaction: { thresholdTokens: 100, keepRecentMessages: 1, adapter: cheap },
          },
        },
      },
      { adapter: main, persister: new InMemoryPersister() },
    )
    const session = await agent.createSession()
    await session.send('u1')
    await session.send('u2') // default profile: 500 < 100 000, no compaction
    expect(cheap.calls).toHaveLength(0)
    await session.send('u3', { agent: 'billing' }) // billing: d2 reported 10 — below 100
    await session.send('u4', { agent: 'billing' }) // b1 reported 500 — past billing's 100
    expect(cheap.calls).toHaveLength(1)
    expect(shape(billing.calls[1]!.options.history)).toEqual(['system:summary'])
    expect(billing.calls[1]!.options.model).toBe('billing-model')
  })

  it('compact() uses the profile the session continues with', async () => {
    const cheap = new ScriptedAdapter([summaryTurn('S')])
    const billing = new ScriptedAdapter([reply('b1', 10), reply('b2', 10)])
    const agent = createAgent(
      {
        agents: {
          billing: {
            adapter: billing,
            compaction: { thresholdTokens: 10_000, adapter: cheap, model: 'tiny' },
          },
        },
      },
      { adapter: new ScriptedAdapter([]), persister: new InMemoryPersister() },
    )
    const session = await agent.createSession()
    await session.send('u1', { agent: 'billing' })
    await session.send('u2') // continues with billing (activeAgent)
    const summary = await session.compact({ keepRecentMessages: 1 })
    expect(summary.compaction).toEqual({ throughSeq: 1 })
    expect(cheap.calls[0]!.options.model).toBe('tiny')
  })

  it('fork() of a compacted session that holds only its latest part copies the whole conversation', async () => {
    // Without leases, fork copies what the session object holds rather than a store snapshot.
    const persister = new InMemoryPersister()
    Object.assign(persister, { claimSession: undefined, releaseSession: undefined })
    const { session } = await growingSession()
    await session.send('u4') // compacts through seq 3
    const first = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    const copy = await first.createSession()
    await first.close()
    // Put the conversation in a store of its own and open it after a restart.
    const stored = await session.getMessages()
    for (const message of stored) await persister.saveMessage(copy.id, { ...message, sessionId: copy.id })
    const second = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    const reopened = (await second.getSession(copy.id))!
    await reopened.getPending() // loads what the model needs: the summary on
    const fork = await reopened.fork()
    expect((await fork.getMessages()).map((m) => m.seq)).toEqual(stored.map((m) => m.seq))
    await second.close()
    expect((await persister.getMessages(fork.id)).map((m) => textOf(m))).toEqual(stored.map((m) => textOf(m)))
  })
})

describe('compaction: failures', () => {
  it('a failing summariser leaves the send going on uncompacted, logs a warning and emits compaction-error; the next send tries again', async () => {
    const logger = silentLogger()
    const failure = new AdapterError('summariser is down', {
      kind: 'server',
      provider: 'cheap',
      retryable: false,
    })
    const summariser = new ScriptedAdapter([{ events: [], error: failure }, summaryTurn('LATER')])
    const persister = new InMemoryPersister()
    const model = new ScriptedAdapter([reply('a1', 5000), reply('a2', 5000), reply('a3', 10)])
    const agent = createAgent(
      { compaction: { thresholdTokens: 1000, keepRecentMessages: 1, adapter: summariser } },
      { adapter: model, persister, logger },
    )
    const session = await agent.createSession()
    await session.send('u1')
    const events: SessionEvent[] = []
    session.subscribe((event) => events.push(event))
    const result = await session.send('u2')
    expect(result.text).toBe('a2')
    expect(session.state).toBe('idle')
    expect(events.filter((e) => e.type === 'compaction-error')).toEqual([
      { type: 'compaction-error', error: failure },
    ])
    expect(logger.warn).toHaveBeenCalledWith(
      'agentx: compaction failed; the request goes on with the whole history',
      expect.objectContaining({ sessionId: session.id, code: 'ADAPTER_SERVER' }),
    )
    expect(shape(model.calls[1]!.options.history)).toEqual(['user:u1', 'agent:a1'])
    expect((await persister.getMessages(session.id)).some((m) => m.compaction)).toBe(false)
    await session.send('u3')
    expect(summariser.calls).toHaveLength(2)
    expect(shape(model.calls[2]!.options.history)).toEqual(['system:summary'])
  })

  it('tries no second compaction in the same send after a failure (the tool loop goes on uncompacted)', async () => {
    const echo: Tool = {
      name: 'echo',
      description: 'Echoes',
      inputSchema: { type: 'object' },
      execute: () => 'ok',
    }
    const summariser = new ScriptedAdapter([{ events: [], error: new Error('boom') }])
    const model = new ScriptedAdapter([
      reply('a1', 5000),
      toolCallTurn([{ id: 't1', name: 'echo', input: {} }], { usage: usage(5000, 10) }),
      reply('a2', 5000),
    ])
    const agent = createAgent(
      { tools: [echo], compaction: { thresholdTokens: 1000, keepRecentMessages: 1, adapter: summariser } },
      { adapter: model, persister: new InMemoryPersister(), logger: silentLogger() },
    )
    const session = await agent.createSession()
    await session.send('u1')
    const result = await session.send('u2')
    expect(result.text).toBe('a2')
    expect(summariser.calls).toHaveLength(1)
  })

  it('retries a retryable summariser error before its first event, like a model request', async () => {
    const overloaded = new AdapterError('overloaded', {
      kind: 'overloaded',
      provider: 'cheap',
      retryable: true,
    })
    const summariser = new ScriptedAdapter([{ events: [], error: overloaded }, summaryTurn('S')])
    const model = new ScriptedAdapter([reply('a1', 5000), reply('a2', 10)])
    const agent = createAgent(
      { retry: fastRetry, compaction: { thresholdTokens: 1000, keepRecentMessages: 1, adapter: summariser } },
      { adapter: model, persister: new InMemoryPersister(), logger: silentLogger() },
    )
    const session = await agent.createSession()
    await session.send('u1')
    const events: SessionEvent[] = []
    session.subscribe((event) => {
      if (event.type === 'retry' || event.type === 'compaction') events.push(event)
    })
    await session.send('u2')
    expect(summariser.calls).toHaveLength(2)
    expect(shape(model.calls[1]!.options.history)).toEqual(['system:summary'])
    // The wait is shown, as for a model request.
    expect(events.map((event) => event.type)).toEqual(['retry', 'compaction'])
    expect(events[0]).toMatchObject({ attempt: 1, error: overloaded })
    expect((events[0] as { delayMs: number }).delayMs).toBeGreaterThanOrEqual(0)
  })

  it('session.compact() rejects with the summariser error and writes nothing; an empty summary is COMPACTION_EMPTY', async () => {
    const failure = new AdapterError('bad key', { kind: 'authentication', provider: 'scripted' })
    const model = new ScriptedAdapter([reply('a1', 10), { events: [], error: failure }, textTurn('   ')])
    const persister = new InMemoryPersister()
    const agent = createAgent({ durability: 'sync' }, { adapter: model, persister })
    const session = await agent.createSession()
    await session.send('u1')
    await expect(session.compact({ keepRecentMessages: 0 })).rejects.toBe(failure)
    await expect(session.compact({ keepRecentMessages: 0 })).rejects.toMatchObject({
      code: 'COMPACTION_EMPTY',
    })
    expect(await persister.getMessages(session.id)).toHaveLength(2)
    expect(session.state).toBe('idle')
  })

  it('a store that refuses the summary fails the send in sync durability; it is not taken for a summariser failure', async () => {
    class NoSummaries extends InMemoryPersister {
      override async saveMessage(sessionId: string, message: AnyMessage): Promise<void> {
        if (message.compaction) throw new PersistenceError('disk full', { code: 'PERSISTENCE' })
        return super.saveMessage(sessionId, message)
      }
    }
    const summariser = new ScriptedAdapter([summaryTurn('S')])
    const model = new ScriptedAdapter([reply('a1', 5000), reply('a2', 10)])
    const agent = createAgent(
      {
        durability: 'sync',
        writeRetry: { maxAttempts: 1, initialDelayMs: 1, maxDelayMs: 1 },
        compaction: { thresholdTokens: 1000, keepRecentMessages: 1, adapter: summariser },
      },
      { adapter: model, persister: new NoSummaries(), logger: silentLogger() },
    )
    const session = await agent.createSession()
    await session.send('u1')
    const events: SessionEvent[] = []
    session.subscribe((event) => events.push(event))
    await expect(session.send('u2')).rejects.toBeInstanceOf(PersistenceError)
    expect(events.some((event) => event.type === 'compaction-error')).toBe(false)
    expect(model.calls).toHaveLength(1)
    expect(session.state).toBe('error')
  })

  it('aborting while the summary is written aborts the send; nothing of the summary is stored', async () => {
    const summariser = new ScriptedAdapter([{ events: [], waitForAbort: true }])
    const model = new ScriptedAdapter([reply('a1', 5000)])
    const persister = new InMemoryPersister()
    const agent = createAgent(
      { compaction: { thresholdTokens: 1000, keepRecentMessages: 1, adapter: summariser } },
      { adapter: model, persister },
    )
    const session = await agent.createSession()
    await session.send('u1')
    const sending = session.send('u2')
    await vi.waitFor(() => expect(summariser.calls).toHaveLength(1))
    session.abort()
    await expect(sending).rejects.toMatchObject({ kind: 'aborted' })
    expect(session.state).toBe('aborted')
    expect(model.calls).toHaveLength(1)
    await agent.close()
    expect(shape(await persister.getMessages(session.id))).toEqual(['user:u1', 'agent:a1', 'user:u2'])
  })
})

describe('compaction: with pending calls and retry', () => {
  it('compact() while waiting_input keeps the pending call, and the answer still reaches the model with its call', async () => {
    const ask: Tool = { name: 'ask_user', description: 'Asks', inputSchema: { type: 'object' } }
    const model = new ScriptedAdapter([
      reply('a1', 10),
      toolCallTurn([{ id: 'q1', name: 'ask_user', input: { question: 'colour?' } }]),
      summaryTurn('S'),
      reply('noted', 10),
    ])
    const agent = createAgent({ tools: [ask] }, { adapter: model, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    await session.send('u1')
    await session.send('ask me')
    expect(session.state).toBe('waiting_input')
    const summary = await session.compact({ keepRecentMessages: 0 })
    expect(summary.compaction).toEqual({ throughSeq: 1 })
    expect((await session.getPending()).map((p) => p.toolUseId)).toEqual(['q1'])
    await session.send([{ type: 'tool_result', toolUseId: 'q1', content: 'blue' }])
    const request = model.calls[3]!
    expect(shape(request.options.history)).toEqual(['system:summary', 'user:ask me', 'agent:3'])
    expect((request.prompt as ContentBlock[])[0]).toMatchObject({ type: 'tool_result', toolUseId: 'q1' })
  })

  it('retry() after a restart continues from the tool results when the compaction summarised the user message', async () => {
    const echo: Tool = {
      name: 'echo',
      description: 'Echoes',
      inputSchema: { type: 'object' },
      execute: () => 'echoed',
    }
    const persister = new InMemoryPersister()
    const summariser = new ScriptedAdapter([summaryTurn('S')])
    const broken = new AdapterError('bad request', { kind: 'invalid_request', provider: 'scripted' })
    const first = createAgent(
      { tools: [echo], compaction: { thresholdTokens: 1000, keepRecentMessages: 1, adapter: summariser } },
      {
        adapter: new ScriptedAdapter([
          toolCallTurn([{ id: 't1', name: 'echo', input: {} }], { usage: usage(100, 10) }),
          toolCallTurn([{ id: 't2', name: 'echo', input: {} }], { usage: usage(5000, 10) }),
          { events: [], error: broken },
        ]),
        persister,
      },
    )
    const session = await first.createSession()
    await expect(session.send('do it')).rejects.toBe(broken)
    await first.close()
    const summary = (await persister.getMessages(session.id)).find((m) => m.compaction)!
    expect(summary.compaction).toEqual({ throughSeq: 2 }) // the user message, t1 and its result

    const model = new ScriptedAdapter([reply('finished', 10)])
    const second = createAgent({ tools: [echo] }, { adapter: model, persister })
    const again = (await second.getSession(session.id))!
    const result = await again.retry()
    expect(result.text).toBe('finished')
    expect(shape(model.calls[0]!.options.history)).toEqual(['user:summary', 'agent:3'])
    expect(model.calls[0]!.prompt).toEqual([
      { type: 'tool_result', toolUseId: 't2', content: [{ type: 'text', text: 'echoed' }] },
    ])
    await second.close()
  })
})

/** A stored message of session `s` for the planning tests. */
const message = (
  seq: number,
  type: AnyMessage['type'],
  content: AnyMessage['content'] = `m${seq}`,
): AnyMessage => ({
  id: `id-${seq}`,
  sessionId: 's',
  seq,
  type,
  content,
  timestamp: '2026-01-01T00:00:00.000Z',
})

describe('compaction: planning and configuration', () => {
  it('plans nothing when every message is in the kept tail, and keeps a final call that waits for its result', () => {
    const messages = [message(0, 'user'), message(1, 'agent')]
    expect(planCompaction(messages, 2, 2)).toBeUndefined()
    const waiting = [
      message(0, 'user'),
      message(1, 'agent'),
      message(2, 'user'),
      message(3, 'agent', [{ type: 'tool_use', id: 't', name: 'x', input: {} }]),
    ]
    // The waiting call stays, and with it the user message it answers.
    expect(planCompaction(waiting, 4, 0)).toMatchObject({ throughSeq: 1 })
    // An unanswered question (its reply failed; retry() will send it) is not a whole turn: it
    // stays out of the summary, even with nothing kept. Before, it was summarised and then sent
    // again by the retry, so the model saw it twice.
    const failed = [
      message(0, 'user'),
      message(1, 'agent'),
      message(2, 'user'),
      { ...message(3, 'agent'), incomplete: true },
    ]
    expect(planCompaction(failed, 4, 0)).toMatchObject({ throughSeq: 1 })
    expect(planCompaction([message(0, 'user')], 1, 0)).toBeUndefined()
  })

  it('shows the model the latest summary and only the messages after its throughSeq, other summaries left out', () => {
    const messages: AnyMessage[] = [
      message(0, 'user'),
      message(1, 'agent'),
      message(2, 'user'),
      { ...message(3, 'system', [{ type: 'text', text: 'OLD' }]), compaction: { throughSeq: 0 } },
      message(4, 'agent'),
      message(5, 'user'),
      { ...message(6, 'system', [{ type: 'text', text: 'NEW' }]), compaction: { throughSeq: 2 } },
      message(7, 'agent'),
    ]
    const history = historyWithCompaction(messages, 8)
    expect(history.map((m) => m.seq)).toEqual([6, 4, 5, 7])
    expect(textOf(history[0])).toMatch(/NEW$/)
  })

  it('createAgent and createSession reject malformed compaction options, naming the closest key', async () => {
    expect(() => createAgent({ compaction: { thresholdToken: 5 } as never })).toThrow(/thresholdTokens/)
    expect(() => createAgent({ compaction: {} as never })).toThrow(ConfigurationError)
    expect(() => createAgent({ compaction: { thresholdTokens: 0 } })).toThrow(
      /thresholdTokens must be an integer >= 1/,
    )
    expect(() => createAgent({ compaction: { thresholdTokens: 10, keepRecentMessages: 1.5 } })).toThrow(
      /keepRecentMessages/,
    )
    expect(() => createAgent({ compaction: { thresholdTokens: 10, adapter: {} as never } })).toThrow(
      /adapter/,
    )
    const agent = createAgent({}, { adapter: new ScriptedAdapter(), persister: new InMemoryPersister() })
    await expect(agent.createSession({ compaction: { thresholdTokens: -1 } })).rejects.toBeInstanceOf(
      ValidationError,
    )
  })
})

describe('what compaction keeps together', () => {
  const lookup: Tool = {
    name: 'lookup',
    description: 'looks up',
    inputSchema: { type: 'object' },
    execute: () => 'data',
  }

  it('automatic compaction in a tool loop with keepRecentMessages 0 keeps the prompt and the call it answers', async () => {
    const summariser = new ScriptedAdapter([summaryTurn('SUMMARY')])
    const model = new ScriptedAdapter([
      reply('r0', 10),
      toolCallTurn([{ id: 'call_1', name: 'lookup', input: {} }], { usage: usage(5000, 1) }),
      reply('final', 10),
    ])
    const agent = createAgent(
      {
        model: 'm',
        tools: [lookup],
        compaction: { thresholdTokens: 1000, keepRecentMessages: 0, adapter: summariser },
      },
      { adapter: model, persister: new InMemoryPersister() },
    )
    const session = await agent.createSession()
    await session.send('q0')
    await session.send('q1') // step 1 calls lookup; step 2 is preceded by a compaction
    const summary = (await session.getMessages()).find((m) => m.compaction !== undefined)
    // Only the first turn is summarised: the running loop (its question, the call, the prompt) is kept.
    expect(summary?.compaction?.throughSeq).toBe(1)
    const request = model.calls[2]!
    expect(shape(request.options.history)).toEqual(['system:summary', 'user:q1', 'agent:3'])
    expect(request.options.history[2]!.content).toEqual([
      expect.objectContaining({ type: 'tool_use', id: 'call_1' }),
    ])
    expect(request.prompt).toEqual([expect.objectContaining({ type: 'tool_result', toolUseId: 'call_1' })])
    await agent.close()
  })

  it('a kept answer keeps its question, also when a tool step came between them', async () => {
    const model = new ScriptedAdapter([
      toolCallTurn([{ id: 'c1', name: 'lookup', input: {} }]),
      textTurn('Answer to Q0'),
      textTurn('Answer to Q1'),
      summaryTurn('SUMMARY'),
    ])
    const agent = createAgent(
      { model: 'm', tools: [lookup] },
      { adapter: model, persister: new InMemoryPersister() },
    )
    const session = await agent.createSession()
    await session.send('Q0') // 0 user, 1 agent (tool call), 2 tool, 3 agent answer
    await session.send('Q1') // 4 user, 5 agent
    // The last 3 would start at the answer to Q0: the kept part grows to its question, the whole conversation.
    await expect(session.compact({ keepRecentMessages: 3 })).rejects.toBeInstanceOf(SessionStateError)
    const summary = await session.compact({ keepRecentMessages: 2 })
    expect(summary.compaction?.throughSeq).toBe(3)
    await agent.close()
  })

  it('planCompaction: only a tool loop still running is cut between its steps; finished turns stay whole', () => {
    const at = message
    const call = (id: string): ContentBlock[] => [{ type: 'tool_use', id, name: 'lookup', input: {} }]
    const result = (id: string): ContentBlock[] => [{ type: 'tool_result', toolUseId: id, content: 'data' }]
    const loop = [
      at(0, 'user'),
      at(1, 'agent', call('a')),
      at(2, 'tool', result('a')),
      at(3, 'agent', call('b')),
      at(4, 'tool', result('b')),
      at(5, 'agent', call('c')),
      at(6, 'tool', result('c')),
    ]
    // One long turn: cut before a step's call, never before a result.
    expect(planCompaction(loop, loop.length, 2)?.throughSeq).toBe(4)
    expect(planCompaction(loop, loop.length, 3)?.throughSeq).toBe(2)
    // The same loop after an earlier turn: still cut between its steps.
    const twoTurns = [at(0, 'user'), at(1, 'agent'), ...loop.map((m) => at(m.seq + 2, m.type, m.content))]
    expect(planCompaction(twoTurns, twoTurns.length, 2)?.throughSeq).toBe(6)
    // Once answered, the loop is a finished turn: kept whole, or nothing but the turn before it goes.
    const answered = [...twoTurns, at(9, 'agent')]
    expect(planCompaction(answered, answered.length, 2)?.throughSeq).toBe(1)
    expect(planCompaction(loop.concat(at(7, 'agent')), 8, 2)).toBeUndefined()
  })
})
