// Compaction (DESIGN §10.4) through the real OpenAIAdapter (Responses and Chat Completions)
// against the contract kit's fake OpenAI servers: the summary request, and both compacted request
// shapes — summary as a system message (kept part opens with a user message) and summary as the
// opening user turn (kept part opens with a reply inside a tool loop) — accepted and answered on
// the wire, replayed in full instead of resumed from the provider's uncompacted state, with the
// summaries stored in SQLite and picked up after a restart.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  type FakeProvider,
  type FakeProviderRequest,
  openAIChatDialect,
  openAIResponsesDialect,
  type Scenario,
  startFakeProvider,
} from '@agentx/contract-tests'
import { type AgentConfig, createAgent, type Tool } from '@agentx/core'
import { SqlitePersister } from '@agentx/persister-sqlite'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { OpenAIAdapter } from './openai-adapter.js'
import type { OpenAIApi } from './openai-adapter-options.js'

let fake: FakeProvider
let folder: string
let responses = 0

afterEach(async () => {
  await fake.close()
  rmSync(folder, { recursive: true, force: true })
})

const text = (value: string, inputTokens: number): Scenario => ({
  response: {
    blocks: [{ type: 'text', text: value }],
    stopReason: 'end_turn',
    usage: { inputTokens, outputTokens: 20 },
    responseId: `resp_${responses++}`,
  },
})
const weatherCall = (id: string, city: string, inputTokens: number): Scenario => ({
  response: {
    blocks: [{ type: 'tool-call', id, name: 'get_weather', input: { city } }],
    stopReason: 'tool_use',
    usage: { inputTokens, outputTokens: 15 },
    responseId: `resp_${responses++}`,
  },
})
const getWeather: Tool = {
  name: 'get_weather',
  description: 'Current weather for a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  execute: (input) => `${(input as { city: string }).city}: 18°C`,
}
const flat = (blocks: ReadonlyArray<{ type: string; text?: string }>) =>
  blocks.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('')

/**
 * What OpenAI requires of a replayed conversation (the fake server does not check it): every tool
 * result answers a call of the assistant turn before it. A resumed request (`previous_response_id`)
 * answers calls of the stored response instead.
 */
function expectValidConversation(request: FakeProviderRequest['decoded']): void {
  if (request.resume !== undefined) return
  const { messages } = request
  messages.forEach((message, index) => {
    const previous = messages[index - 1]
    for (const block of message.content) {
      if (block.type !== 'tool_result') continue
      expect(previous?.content.some((b) => b.type === 'tool_use' && b.id === block.toolUseId)).toBe(true)
    }
  })
}

function agentOver(api: OpenAIApi, filename: string, keepRecentMessages: number) {
  const config: AgentConfig = {
    model: 'gpt-test',
    systemPrompt: 'You are a weather bot.',
    tools: [getWeather],
    knowledge: [{ name: 'units', text: 'Use Celsius.' }],
    compaction: { thresholdTokens: 1000, keepRecentMessages },
    retry: { maxRetries: 0 },
  }
  return createAgent(config, {
    adapter: new OpenAIAdapter({ api, apiKey: 'sk-compaction', baseURL: fake.baseURL }),
    persister: new SqlitePersister({ filename }),
  })
}

describe.each(['responses', 'chat'] as const)(
  'OpenAIAdapter (%s): compacted conversations on the wire',
  (api) => {
    beforeEach(async () => {
      fake = await startFakeProvider({
        dialect: api === 'responses' ? openAIResponsesDialect : openAIChatDialect,
      })
      folder = mkdtempSync(join(tmpdir(), 'agentx-openai-compaction-'))
      responses = 0
    })

    it('sends the summary request and both compacted shapes, and the provider answers them', async () => {
      const filename = join(folder, 'agent.db')
      const first = agentOver(api, filename, 3)
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
      const second = agentOver(api, filename, 1)
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

      for (const request of fake.requests) expectValidConversation(request.decoded)
      if (api === 'responses') {
        // Before a compaction the conversation is resumed from the stored response; a compacted
        // request replays the summary and the kept part instead (the stored context is uncompacted).
        expect(fake.requests.map((request) => request.decoded.resume)).toEqual([
          undefined,
          'resp_0',
          'resp_1',
          undefined, // the summary request
          undefined, // compacted
          'resp_4',
          'resp_5',
          undefined, // the summary request
          undefined, // compacted
        ])
      }

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
  },
)
