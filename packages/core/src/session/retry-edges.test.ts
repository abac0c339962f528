// retry() and abort at the edges of an exchange: nothing already answered is answered again, and an
// abort while tools run leaves a conversation a provider accepts (every tool call has its result).
import { describe, expect, it, vi } from 'vitest'
import { createAgent } from '../agent/create-agent.js'
import type { AnyMessage } from '../contracts/messages.js'
import { AdapterError } from '../errors/adapter-error.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn, toolCallTurn, usage } from '../testing/stream-helpers.js'
import type { Tool } from '../tools/tool.js'
import { historyForModel } from './continuation.js'

const shape = (messages: readonly AnyMessage[]) => messages.map((m) => `${m.seq}:${m.type}`)

describe('retry() after a send that stored no user message', () => {
  it('rejects with SessionStateError instead of answering the previous question again', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([textTurn('answer to one'), textTurn('never')])
    const agent = createAgent({}, { adapter, persister })
    const session = await agent.createSession()
    await session.send('one')
    await expect(session.send('two', { signal: AbortSignal.abort() })).rejects.toMatchObject({
      kind: 'aborted',
    })
    expect(session.state).toBe('aborted')
    // Before, retry() sent 'one' again and stored a second reply to it.
    await expect(session.retry()).rejects.toMatchObject({ code: 'SESSION_STATE' })
    expect(adapter.calls).toHaveLength(1)
    await session.flush()
    expect(shape(await persister.getMessages(session.id))).toEqual(['0:user', '1:agent'])
    await agent.close()
  })
})

describe('retry() after OUTPUT_INVALID', () => {
  it('asks the model again for the last user message; the refused reply stays stored', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([textTurn('not json'), textTurn('{"city":"Paris"}')])
    const agent = createAgent({}, { adapter, persister })
    const session = await agent.createSession()
    const output = {
      schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    }
    await expect(session.send('where?', { output })).rejects.toMatchObject({ code: 'OUTPUT_INVALID' })
    expect(session.state).toBe('error')
    const result = await session.retry({ output })
    expect(result.output).toEqual({ city: 'Paris' })
    expect(adapter.calls.map((call) => call.prompt)).toEqual(['where?', 'where?'])
    await session.flush()
    expect(shape(await persister.getMessages(session.id))).toEqual(['0:user', '1:agent', '2:agent'])
    // Once answered, a later failure that stores no user message is not answered again.
    await expect(session.send('next', { signal: AbortSignal.abort() })).rejects.toMatchObject({
      kind: 'aborted',
    })
    await expect(session.retry()).rejects.toMatchObject({ code: 'SESSION_STATE' })
    await agent.close()
  })
})

describe('a reply refused as structured output and replaced by retry()', () => {
  it('stays out of the history of every later request, also after a restart', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      textTurn('REFUSED prose'),
      textTurn('{"city":"Paris"}'),
      textTurn('ok'),
    ])
    const agent = createAgent({}, { adapter, persister })
    const session = await agent.createSession()
    const output = {
      schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    }
    await expect(session.send('where?', { output })).rejects.toMatchObject({ code: 'OUTPUT_INVALID' })
    await session.retry({ output })
    await session.send('thanks')
    // Before, the refused reply came back in the next request (Claude merged it with the accepted one).
    const texts = (history: readonly AnyMessage[]) => JSON.stringify(history.map((m) => m.content))
    expect(texts(adapter.calls[2]!.options.history)).not.toContain('REFUSED')
    expect(texts(adapter.calls[2]!.options.history)).toContain('Paris')
    await agent.close()
    // A new process on the same store sends the same history.
    const again = new ScriptedAdapter([textTurn('ok')])
    const restarted = createAgent({}, { adapter: again, persister })
    const reopened = (await restarted.getSession(session.id))!
    await reopened.send('and now?')
    expect(texts(again.calls[0]!.options.history)).not.toContain('REFUSED')
    await session.flush().catch(() => {})
    expect(shape(await persister.getMessages(session.id))).toEqual([
      '0:user',
      '1:agent',
      '2:agent',
      '3:user',
      '4:agent',
      '5:user',
      '6:agent',
    ])
    await restarted.close()
  })
})

describe('usage of a reply whose tools run', () => {
  for (const durability of ['sync', 'async'] as const) {
    it(`${durability}: is in the stored session record before the tools run (a crash while they run keeps it)`, async () => {
      const persister = new InMemoryPersister()
      let seen: number | undefined
      const probe: Tool = {
        name: 'probe',
        description: 'reads the store',
        inputSchema: { type: 'object' },
        execute: async (_input, context) => {
          // What a restarted process would find if this one died now.
          await new Promise((resolve) => setTimeout(resolve, 20))
          seen = (await persister.getSession(context.sessionId))!.tokenUsage.totalTokens
          return 'ok'
        },
      }
      const adapter = new ScriptedAdapter([
        toolCallTurn([{ id: 'p1', name: 'probe', input: {} }], { usage: usage(1000, 50) }),
        textTurn('done', { usage: usage(1100, 5) }),
      ])
      const agent = createAgent({ durability, tools: [probe] }, { adapter, persister })
      const session = await agent.createSession()
      await session.send('go')
      // Before, 0: the session record was written with the usage only at the end of the send.
      expect(seen).toBe(1050)
      await agent.close()
    })
  }
})

describe('retry() repeats the options of the send that failed', () => {
  it('after OUTPUT_INVALID, retry() without options asks for the structured output again and checks it', async () => {
    const adapter = new ScriptedAdapter([
      textTurn('not json'),
      textTurn('still not json'),
      textTurn('{"n":2}'),
    ])
    const agent = createAgent({}, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    const output = { schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } }
    await expect(session.send('give n', { output, temperature: 0.2 })).rejects.toMatchObject({
      code: 'OUTPUT_INVALID',
    })
    // Before, retry() dropped `output`: the reply was neither asked for as JSON nor checked, and
    // the session went idle with 'still not json' as its answer.
    await expect(session.retry()).rejects.toMatchObject({ code: 'OUTPUT_INVALID' })
    expect(adapter.calls[1]!.options.output).toEqual({ name: 'output', schema: output.schema })
    expect(adapter.calls[1]!.options.temperature).toBe(0.2)
    // Its own options win.
    const result = await session.retry({ temperature: 0 })
    expect(result.output).toEqual({ n: 2 })
    expect(adapter.calls[2]!.options.temperature).toBe(0)
    await agent.close()
  })

  it('after a provider error too; a send that succeeds forgets them', async () => {
    const adapter = new ScriptedAdapter([
      {
        events: [],
        error: new AdapterError('overloaded', { kind: 'server', provider: 'scripted', retryable: false }),
      },
      textTurn('{"n":1}'),
      textTurn('plain'),
    ])
    const agent = createAgent({ retry: { maxRetries: 0 } }, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    const output = { schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } }
    await expect(session.send('give n', { output })).rejects.toMatchObject({ kind: 'server' })
    expect((await session.retry()).output).toEqual({ n: 1 })
    const plain = await session.send('and now plain text')
    expect(plain.output).toBeUndefined()
    expect(adapter.calls[2]!.options.output).toBeUndefined()
    await agent.close()
  })
})

describe('retry() after OUTPUT_INVALID with a provider session id', () => {
  it("replays the history instead of resuming from the refused reply's response", async () => {
    const turn = (sessionId: string, text: string) => [
      { type: 'session' as const, sessionId },
      ...textTurn(text),
    ]
    const adapter = new ScriptedAdapter([
      turn('resp_1', 'hello'),
      turn('resp_2', 'not json'),
      turn('resp_3', '{"n":1}'),
      turn('resp_4', 'bye'),
    ])
    const agent = createAgent({}, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    await session.send('hi')
    const output = { schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } }
    await expect(session.send('give n', { output })).rejects.toMatchObject({ code: 'OUTPUT_INVALID' })
    expect((await session.retry({ output })).output).toEqual({ n: 1 })
    await session.send('thanks')
    // Before, the retry resumed from resp_2: the provider saw the refused reply and the question again.
    expect(adapter.calls.map((call) => call.options.resume)).toEqual([
      undefined,
      'resp_1',
      undefined,
      'resp_3',
    ])
    expect(adapter.calls[2]!.options.history.map((m) => m.type)).toEqual(['user', 'agent'])
    await agent.close()
  })
})

describe('abort while a tool ignores its signal', () => {
  it('ends the send at once: the call is answered as stopped, the next send and close() work', async () => {
    const persister = new InMemoryPersister()
    let started = 0
    const hang: Tool = {
      name: 'hang',
      description: 'never settles and ignores its signal',
      inputSchema: { type: 'object' },
      execute: () => {
        started += 1
        return new Promise(() => undefined)
      },
    }
    const quick: Tool = {
      name: 'quick',
      description: 'q',
      inputSchema: { type: 'object' },
      execute: () => 'q',
    }
    const adapter = new ScriptedAdapter([
      toolCallTurn([
        { id: 'h1', name: 'hang', input: {} },
        { id: 'q1', name: 'quick', input: {} },
      ]),
      textTurn('next'),
    ])
    const agent = createAgent({ tools: [hang, quick], durability: 'sync' }, { adapter, persister })
    const session = await agent.createSession()
    const sent = session.send('go')
    await vi.waitFor(() => expect(started).toBe(1))
    session.abort()
    await expect(sent).rejects.toMatchObject({ kind: 'aborted' })
    expect(session.state).toBe('aborted')
    const tool = (await persister.getMessages(session.id)).find((m) => m.type === 'tool')!
    expect(tool.content).toEqual([
      {
        type: 'tool_result',
        toolUseId: 'h1',
        content: [{ type: 'text', text: 'Stopped: the send was aborted before the tool finished.' }],
        isError: true,
      },
      { type: 'tool_result', toolUseId: 'q1', content: [{ type: 'text', text: 'q' }] },
    ])
    expect((await session.send('again')).text).toBe('next')
    await agent.close()
  })
})

describe('abort while tools run', () => {
  const slow: Tool = {
    name: 'slow',
    description: 'takes a while',
    inputSchema: { type: 'object' },
    execute: (_input, context) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => resolve('done'), 5_000)
        context.signal.addEventListener('abort', () => {
          clearTimeout(timer)
          reject(new Error('stopped'))
        })
      }),
  }

  it('stores the tool message with the aborted results, so the next send and retry() see a valid history', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([
      toolCallTurn([{ id: 't1', name: 'slow', input: {} }]),
      textTurn('retried'),
      textTurn('next'),
    ])
    const agent = createAgent({ tools: [slow] }, { adapter, persister })
    const session = await agent.createSession()
    setTimeout(() => session.abort(), 30)
    await expect(session.send('hi')).rejects.toMatchObject({ kind: 'aborted' })
    await session.flush()
    const stored = await persister.getMessages(session.id)
    // Before, the tool message was never stored (only its tool-result event was shown).
    expect(shape(stored)).toEqual(['0:user', '1:agent', '2:tool'])
    expect(stored[2]!.content).toEqual([
      expect.objectContaining({ type: 'tool_result', toolUseId: 't1', isError: true }),
    ])
    await session.retry()
    // The retry goes on from the tool results: the model sees its call and the call's result.
    expect(adapter.calls[1]!.prompt).toEqual(stored[2]!.content)
    expect(adapter.calls[1]!.options.history.map((m) => m.seq)).toEqual([0, 1])
    await session.send('go on')
    await session.flush()
    expect(shape(await persister.getMessages(session.id))).toEqual([
      '0:user',
      '1:agent',
      '2:tool',
      '3:agent',
      '4:user',
      '5:agent',
    ])
    await agent.close()
  })

  it('a complete reply whose tool calls never ran is left out of the history once a retry replaced it', () => {
    const at = '2026-01-01T00:00:00.000Z'
    const message = (seq: number, type: AnyMessage['type'], content: AnyMessage['content']): AnyMessage => ({
      id: `m${seq}`,
      sessionId: 's',
      seq,
      type,
      content,
      timestamp: at,
    })
    const messages = [
      message(0, 'user', 'hi'),
      message(1, 'agent', [{ type: 'tool_use', id: 'g1', name: 'gated', input: {} }]),
      message(2, 'agent', [{ type: 'text', text: 'retried' }]),
      message(3, 'user', 'more'),
    ]
    expect(historyForModel(messages, 4).map((m) => m.seq)).toEqual([0, 2, 3])
    // A complete text reply followed by another agent message was replaced by a retry (it was
    // refused as structured output): left out too.
    const texts = [message(0, 'user', 'hi'), message(1, 'agent', 'a'), message(2, 'agent', 'b')]
    expect(historyForModel(texts, 3).map((m) => m.seq)).toEqual([0, 2])
  })
})

describe('createAgent deps', () => {
  it('a logger without the four methods is a ConfigurationError', () => {
    for (const logger of [5, 'console', { info: 1 }, { debug() {}, info() {}, warn() {} }]) {
      expect(() => createAgent({}, { adapter: new ScriptedAdapter([]), logger: logger as never })).toThrow(
        expect.objectContaining({
          code: 'CONFIGURATION',
          message: expect.stringContaining('deps.logger lacks'),
        }),
      )
    }
    const quiet = { debug() {}, info() {}, warn() {}, error() {} }
    expect(() => createAgent({}, { adapter: new ScriptedAdapter([]), logger: quiet })).not.toThrow()
  })
})

describe('retry() after a crash while a tool ran, with a provider session id', () => {
  it('replays the history: the reply whose tool never ran is left out, so is its response id', async () => {
    // The first process: the model asks for a tool (its response is resp_1) and the process dies
    // while the tool runs. What it had stored is copied into a store a new process opens.
    let started!: () => void
    const running = new Promise<void>((resolve) => {
      started = resolve
    })
    const slow: Tool = {
      name: 'slow',
      description: 'runs until the process dies',
      inputSchema: { type: 'object' },
      execute: () => {
        started()
        return new Promise(() => undefined)
      },
    }
    const first = new ScriptedAdapter([
      [
        { type: 'session' as const, sessionId: 'resp_1' },
        ...toolCallTurn([{ id: 'c1', name: 'slow', input: {} }]),
      ],
    ])
    const crashed = new InMemoryPersister()
    const dying = createAgent({ tools: [slow] }, { adapter: first, persister: crashed })
    const session = await dying.createSession({ id: 's' })
    void session.send('run the slow tool').catch(() => undefined)
    await running
    await session.flush()
    const store = new InMemoryPersister()
    await store.saveSession((await crashed.getSession('s'))!)
    for (const message of await crashed.getMessages('s')) await store.saveMessage('s', message)
    expect((await store.getSession('s'))?.providerSessionId).toBe('resp_1')
    expect((await store.getMessages('s')).map((m) => m.type)).toEqual(['user', 'agent'])

    const adapter = new ScriptedAdapter([
      [{ type: 'session' as const, sessionId: 'resp_2' }, ...textTurn('done')],
    ])
    const agent = createAgent({ tools: [slow] }, { adapter, persister: store })
    const restarted = (await agent.getSession('s'))!
    expect(restarted.state).toBe('interrupted')
    expect((await restarted.retry()).text).toBe('done')
    // Before, the retry resumed from resp_1: a stateful provider saw a tool call without its result.
    expect(adapter.calls[0]!.options.resume).toBeUndefined()
    expect(adapter.calls[0]!.prompt).toBe('run the slow tool')
    expect(adapter.calls[0]!.options.history).toEqual([])
    expect((await store.getSession('s'))?.providerSessionId).toBe('resp_2')
    await agent.close()
  })
})
