// What a faulty adapter or tool produces never reaches the store in a shape a persister refuses:
// before, a usage without totalTokens made every later write of the session fail (NaN), and a
// reply with content [null] was stored and sent back on every later request.
import { describe, expect, it } from 'vitest'
import { createAgent } from '../agent/create-agent.js'
import type { AdapterMessage } from '../contracts/agent-adapter.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn } from '../testing/stream-helpers.js'
import { tool } from '../tools/tool.js'
import type { Logger } from '../util/logger.js'
import type { SessionEvent } from './session-events.js'

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = []
  const ignore = (): void => undefined
  return { warnings, debug: ignore, info: ignore, error: ignore, warn: (message) => warnings.push(message) }
}

async function run(
  turns: AdapterMessage[][],
  tools?: NonNullable<Parameters<typeof createAgent>[0]>['tools'],
) {
  const persister = new InMemoryPersister()
  const logger = recordingLogger()
  const adapter = new ScriptedAdapter(turns)
  const agent = createAgent(tools === undefined ? {} : { tools }, { adapter, persister, logger })
  const session = await agent.createSession()
  const events: SessionEvent[] = []
  session.subscribe((event) => events.push(event))
  return { persister, logger, adapter, agent, session, events }
}

const reply = (text: string): AdapterMessage => ({
  type: 'message',
  content: [{ type: 'text', text }],
  stopReason: 'end_turn',
})

describe('adapter output taken in by the kernel', () => {
  it('repairs a malformed usage, so the session record keeps being written', async () => {
    const { persister, logger, session, agent, events } = await run([
      [reply('one'), { type: 'usage', usage: { inputTokens: 5, outputTokens: 3 } as never }],
      [
        reply('two'),
        { type: 'usage', usage: { inputTokens: '4', outputTokens: -1, totalTokens: 9 } as never },
      ],
      [reply('three'), { type: 'usage', usage: null as never }],
    ])
    const first = await session.send('a')
    expect(first.usage).toEqual({ inputTokens: 5, outputTokens: 3, totalTokens: 8 })
    await session.send('b')
    await session.send('c')
    await session.flush()
    const stored = await persister.getSession(session.id)
    // 5+0 input, 3+0 output, 8+9 total: every count a number, and the record kept up with the sends.
    expect(stored?.tokenUsage).toEqual({ inputTokens: 5, outputTokens: 3, totalTokens: 17 })
    expect(stored?.summary).toBe('a')
    const messages = await persister.getMessages(session.id)
    expect(messages.map((m) => m.usage)).toEqual([
      undefined,
      { inputTokens: 5, outputTokens: 3, totalTokens: 8 },
      undefined,
      { inputTokens: 0, outputTokens: 0, totalTokens: 9 },
      undefined,
      undefined,
    ])
    expect(events.filter((e) => e.type === 'persist-error')).toEqual([])
    expect(logger.warnings.filter((w) => w.includes('malformed usage'))).toHaveLength(3)
    await agent.close()
  })

  it("stores an unknown stop reason as 'other'", async () => {
    const { persister, session, agent } = await run([
      [{ type: 'message', content: [{ type: 'text', text: 'hi' }], stopReason: 'weird' as never }],
    ])
    expect((await session.send('a')).stopReason).toBe('other')
    await session.flush()
    expect((await persister.getMessages(session.id))[1]?.stopReason).toBe('other')
    await agent.close()
  })

  it.each<[string, AdapterMessage]>([
    ['a null block', { type: 'message', content: [null as never], stopReason: 'end_turn' }],
    [
      'a text block without text',
      { type: 'message', content: [{ type: 'text' } as never], stopReason: 'end_turn' },
    ],
    [
      'a tool call without an id',
      {
        type: 'message',
        content: [{ type: 'tool_use', name: 'x', input: {} } as never],
        stopReason: 'tool_use',
      },
    ],
  ])(
    'fails the request on a reply with %s, keeps the streamed text, and the session goes on',
    async (_what, bad) => {
      const { persister, session, agent } = await run([
        [{ type: 'text-delta', text: 'partial' }, bad],
        [reply('fine')],
      ])
      const failure = await session.send('a').catch((error: unknown) => error)
      expect(failure).toMatchObject({ code: 'ADAPTER_UNKNOWN', retryable: false })
      expect((failure as Error).message).toMatch(/malformed event: message\.content\[0\]/)
      const next = await session.send('b')
      expect(next.text).toBe('fine')
      await session.flush()
      const stored = await persister.getMessages(session.id)
      expect(stored.map((m) => [m.type, m.content, m.incomplete])).toEqual([
        ['user', 'a', undefined],
        ['agent', [{ type: 'text', text: 'partial' }], true],
        ['user', 'b', undefined],
        ['agent', [{ type: 'text', text: 'fine' }], undefined],
      ])
      await agent.close()
    },
  )

  it('fails the request on a tool-call event without a string id', async () => {
    const { session, agent } = await run([[{ type: 'tool-call', id: 7 as never, name: 'x', input: {} }]])
    await expect(session.send('a')).rejects.toMatchObject({
      code: 'ADAPTER_UNKNOWN',
      message: expect.stringMatching(/tool-call event needs a string id and name/),
    })
    await agent.close()
  })

  it('a tool output that only looks like content blocks is stored as JSON text', async () => {
    const looksLikeBlocks = [{ type: 'text' }, { type: 'image', data: 'AAAA' }]
    const { persister, session, agent } = await run(
      [
        [
          { type: 'tool-call', id: 'c1', name: 'lookup', input: {} },
          {
            type: 'message',
            content: [{ type: 'tool_use', id: 'c1', name: 'lookup', input: {} }],
            stopReason: 'tool_use',
          },
        ],
        textTurn('done'),
      ],
      [
        tool({
          name: 'lookup',
          description: 'looks up',
          inputSchema: { type: 'object' },
          execute: () => looksLikeBlocks,
        }),
      ],
    )
    await session.send('a')
    await session.flush()
    const results = (await persister.getMessages(session.id)).filter((m) => m.type === 'tool')
    expect(results[0]?.content).toEqual([
      {
        type: 'tool_result',
        toolUseId: 'c1',
        content: [{ type: 'text', text: JSON.stringify(looksLikeBlocks) }],
      },
    ])
    await agent.close()
  })
})
