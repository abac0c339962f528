// Compaction (DESIGN §10.4) through each real adapter against the contract kit's fake server of its
// wire protocol: the summary request, and both compacted request shapes — summary with the system
// prompt (kept part opens with a user message) and summary as the opening user turn (kept part
// opens with a reply inside a tool loop) — accepted and answered on the wire, with the summaries
// stored in SQLite and picked up after a restart. With the Responses API a compacted request is
// replayed in full instead of resumed from the provider's uncompacted stored state.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  type FakeProvider,
  type FakeProviderRequest,
  type Scenario,
  startFakeProvider,
} from '@agentx/contract-tests'
import { type AgentConfig, createAgent, type Tool } from '@agentx/core'
import { SqlitePersister } from '@agentx/persister-sqlite'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DIALECT_FIXTURES, type DialectFixture } from './dialect-fixtures.js'

const getWeather: Tool = {
  name: 'get_weather',
  description: 'Current weather for a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  execute: (input) => `${(input as { city: string }).city}: 18°C`,
}
const flat = (blocks: ReadonlyArray<{ type: string; text?: string }>) =>
  blocks.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('')

/** What the provider requires of a conversation (the fake server does not check it). */
function expectValidConversation(
  request: FakeProviderRequest['decoded'],
  turns: DialectFixture['turns'],
): void {
  // A resumed request answers calls of the stored response instead.
  if (request.resume !== undefined) return
  const { messages } = request
  if (turns === 'alternating') expect(messages[0]?.role).toBe('user')
  messages.forEach((message, index) => {
    const previous = messages[index - 1]
    if (turns === 'alternating' && previous !== undefined) expect(message.role).not.toBe(previous.role)
    for (const block of message.content) {
      if (block.type !== 'tool_result') continue
      expect(previous?.content.some((b) => b.type === 'tool_use' && b.id === block.toolUseId)).toBe(true)
    }
  })
}

describe.each(DIALECT_FIXTURES)('$name: compacted conversations on the wire', (fixture: DialectFixture) => {
  let fake: FakeProvider
  let folder: string
  let responses = 0

  beforeEach(async () => {
    fake = await startFakeProvider({ dialect: fixture.dialect })
    folder = mkdtempSync(join(tmpdir(), 'agentx-parity-compaction-'))
    responses = 0
  })
  afterEach(async () => {
    await fake.close()
    rmSync(folder, { recursive: true, force: true })
  })

  const text = (value: string, inputTokens: number): Scenario => ({
    response: {
      responseId: `resp_${responses++}`,
      blocks: [{ type: 'text', text: value }],
      stopReason: 'end_turn',
      usage: { inputTokens, outputTokens: 20 },
    },
  })
  const weatherCall = (id: string, city: string, inputTokens: number): Scenario => ({
    response: {
      responseId: `resp_${responses++}`,
      blocks: [{ type: 'tool-call', id, name: 'get_weather', input: { city } }],
      stopReason: 'tool_use',
      usage: { inputTokens, outputTokens: 15 },
    },
  })

  function agentOver(filename: string, keepRecentMessages: number) {
    const config: AgentConfig = {
      model: 'parity-model',
      systemPrompt: 'You are a weather bot.',
      tools: [getWeather],
      knowledge: [{ name: 'units', text: 'Use Celsius.' }],
      compaction: { thresholdTokens: 1000, keepRecentMessages },
      retry: { maxRetries: 0 },
    }
    return createAgent(config, {
      adapter: fixture.create({ apiKey: 'sk-parity-compaction', baseURL: fake.baseURL }),
      persister: new SqlitePersister({ filename }),
    })
  }

  it('sends the summary request and both compacted shapes, and the provider answers them', async () => {
    const filename = join(folder, 'agent.db')
    const first = agentOver(filename, 3)
    const session = await first.createSession()
    fake.enqueue(
      text('Hello!', 200),
      weatherCall('toolu_1', 'Paris', 400),
      text('It is 18°C in Paris.', 1500),
      text('The conversation so far: greetings; Paris is 18°C.', 300), // the summary
      text('Tomorrow too.', 600),
    )
    await session.send('Hi')
    await session.send('Weather in Paris?')
    const third = await session.send('And tomorrow?')
    expect(third.text).toBe('Tomorrow too.')
    await first.close()

    // The summary request: instructions as the system prompt, the transcript as the one user turn.
    const summary = fake.requests[3]!.decoded
    expect(summary.messages).toHaveLength(1)
    expect(summary.messages[0]!.role).toBe('user')
    expect(flat(summary.messages[0]!.content)).toContain('User:\nHi')
    expect(summary.systemPrompt).toMatch(/^You compress a conversation/)
    expect(summary.tools).toEqual([])

    // Shape 1: system prompt + knowledge + summary in the system field; the kept part opens with
    // the user message and keeps the tool call with its result.
    const compacted = fake.requests[4]!.decoded
    expect(compacted.systemPrompt).toContain('You are a weather bot.')
    expect(compacted.systemPrompt).toContain('<knowledge name="units">\nUse Celsius.\n</knowledge>')
    expect(compacted.systemPrompt).toContain('The conversation so far: greetings; Paris is 18°C.')
    expect(compacted.messages.map((m) => [m.role, m.content.map((b) => b.type).join(',')])).toEqual([
      ['user', 'text'],
      ['assistant', 'tool_use'],
      ['user', 'tool_result'],
      ['assistant', 'text'],
      ['user', 'text'],
    ])
    expect(flat(compacted.messages[0]!.content)).toBe('Weather in Paris?')
    expect(compacted.tools).toEqual(['get_weather'])

    // Shape 2, after a restart over the same database: a tool loop compacted between its steps.
    const second = agentOver(filename, 1)
    const again = (await second.getSession(session.id))!
    fake.enqueue(
      weatherCall('toolu_2', 'Lyon', 600),
      weatherCall('toolu_3', 'Nice', 2000),
      text('Earlier: Paris 18°C, Lyon 18°C.', 300), // the summary
      text('Lyon and Nice are both 18°C.', 700),
    )
    const loop = await again.send('Check Lyon and Nice')
    expect(loop.text).toBe('Lyon and Nice are both 18°C.')
    const shaped = fake.requests[8]!.decoded
    expect(shaped.systemPrompt).toContain('You are a weather bot.')
    expect(shaped.systemPrompt).not.toContain('Earlier: Paris')
    expect(shaped.messages.map((m) => [m.role, m.content.map((b) => b.type).join(',')])).toEqual([
      ['user', 'text'],
      ['assistant', 'tool_use'],
      ['user', 'tool_result'],
    ])
    expect(flat(shaped.messages[0]!.content)).toContain('Earlier: Paris 18°C, Lyon 18°C.')
    // The second summary built on the first.
    expect(flat(fake.requests[7]!.decoded.messages[0]!.content)).toContain(
      '<earlier-summary>\nThe conversation so far: greetings; Paris is 18°C.\n</earlier-summary>',
    )
    await second.close()

    for (const request of fake.requests) expectValidConversation(request.decoded, fixture.turns)
    // Before a compaction the conversation is resumed from the stored response; a compacted request
    // replays the summary and the kept part instead (the stored context is uncompacted).
    const resumed = fixture.resumes
      ? [undefined, 'resp_0', 'resp_1', undefined, undefined, 'resp_4', 'resp_5', undefined, undefined]
      : Array.from({ length: 9 }, () => undefined)
    expect(fake.requests.map((request) => request.decoded.resume)).toEqual(resumed)

    // Stored: both summaries with what they cover and the summariser's usage; nothing deleted.
    const store = new SqlitePersister({ filename })
    const stored = await store.getMessages(session.id)
    expect(
      stored.filter((m) => m.compaction).map((m) => [m.type, m.compaction, m.usage?.inputTokens]),
    ).toEqual([
      ['system', { throughSeq: 1 }, 300],
      ['system', { throughSeq: 11 }, 300],
    ])
    expect(stored.map((m) => m.seq)).toEqual(Array.from({ length: stored.length }, (_, i) => i))
    await store.close()
  })
})
