import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { anthropicMessagesDialect, type FakeProvider, startFakeProvider } from '@agentx/contract-tests'
import { createAgent, type Tool } from '@agentx/core'
import { SqlitePersister } from '@agentx/persister-sqlite'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readFixture, sse } from './__fixtures__/claude-fixtures.js'
import { createClaudeAdapter } from './claude-adapter.js'
import { ClaudeSessionFactory } from './claude-session-factory.js'

const API_KEY = 'fake-anthropic-e2e-key-do-not-persist'
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

let server: FakeProvider
let folder: string

beforeEach(async () => {
  server = await startFakeProvider({ dialect: anthropicMessagesDialect })
  folder = mkdtempSync(join(tmpdir(), 'agentx-claude-e2e-'))
})
afterEach(async () => {
  await server.close()
  rmSync(folder, { recursive: true, force: true })
})

describe('createAgent + ClaudeAdapter + SqlitePersister over the loopback server', () => {
  it('persists a two-turn conversation with a tool call exactly, and replays it to Claude in order', async () => {
    const filename = join(folder, 'agent.db')
    const calls: unknown[] = []
    const getWeather: Tool = {
      name: 'get_weather',
      description: 'Current weather for a city',
      inputSchema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
      execute: (input) => {
        calls.push(input)
        return '18°C, sunny'
      },
    }
    const agent = createAgent(
      {
        model: 'claude-sonnet-5-5',
        systemPrompt: 'You are a weather bot.',
        tools: [getWeather],
        durability: 'sync',
      },
      {
        adapter: createClaudeAdapter({ apiKey: API_KEY, baseURL: server.baseURL }),
        persister: new SqlitePersister({ filename }),
        sessionFactory: new ClaudeSessionFactory(),
      },
    )
    await agent.initialize()
    // Turn 1: a tool call, then the answer after the tool result. Turn 2: a plain reply.
    server.enqueue(
      sse(readFixture('tool-use.sse')),
      sse(readFixture('final-answer.sse')),
      sse(readFixture('text.sse')),
    )

    const session = await agent.createSession({})
    const first = await session.send('What is the weather in Paris?')
    expect(first.text).toBe('It is 18°C and sunny in Paris.')
    expect(first.stopReason).toBe('end_turn')
    expect(first.usage).toEqual({
      inputTokens: 827,
      outputTokens: 77,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      totalTokens: 904,
    })
    expect(calls).toEqual([{ location: 'Paris' }])
    const second = await session.send('Thanks!')
    expect(second.text).toBe('Hello there!')
    const sessionId = session.id
    await agent.close()

    // What the server received: three requests, each replaying the conversation so far.
    expect(server.requests).toHaveLength(3)
    const bodies = server.requests.map(
      (request) => JSON.parse(request.received.body) as Record<string, unknown>,
    )
    for (const [index, body] of bodies.entries()) {
      expect(server.requests[index]?.received.headers.authorization).toBe(`Bearer ${API_KEY}`)
      expect(body).toMatchObject({
        model: 'claude-sonnet-5-5',
        stream: true,
        system: 'You are a weather bot.',
      })
      expect(body.tools).toEqual([
        {
          name: 'get_weather',
          description: 'Current weather for a city',
          input_schema: {
            type: 'object',
            properties: { location: { type: 'string' } },
            required: ['location'],
          },
        },
      ])
    }
    const toolUse = {
      type: 'tool_use',
      id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn',
      name: 'get_weather',
      input: { location: 'Paris' },
    }
    expect(bodies[2]?.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is the weather in Paris?' }] },
      {
        role: 'assistant',
        content: [{ type: 'text', text: "I'll check the current weather in Paris for you." }, toolUse],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn',
            content: [{ type: 'text', text: '18°C, sunny' }],
          },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'It is 18°C and sunny in Paris.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Thanks!' }] },
    ])
    expect(bodies[1]?.messages).toEqual((bodies[2]?.messages as unknown[] | undefined)?.slice(0, 3))

    // What was persisted, read back through a fresh persister on the same file.
    const reopened = new SqlitePersister({ filename })
    try {
      const stored = await reopened.getMessages(sessionId)
      expect(stored.map(({ id, timestamp, ...rest }) => rest)).toEqual([
        { sessionId, seq: 0, type: 'user', content: 'What is the weather in Paris?' },
        {
          sessionId,
          seq: 1,
          type: 'agent',
          content: [{ type: 'text', text: "I'll check the current weather in Paris for you." }, toolUse],
          stopReason: 'tool_use',
          usage: {
            inputTokens: 377,
            outputTokens: 65,
            cacheReadTokens: 0,
            cacheWriteTokens: 0,
            totalTokens: 442,
          },
          metadata: {
            claude: {
              messageId: 'msg_019Q1hrJbZG26Fb9BQhrkHEr',
              model: 'claude-opus-4-8',
              stopReason: 'tool_use',
            },
          },
        },
        {
          sessionId,
          seq: 2,
          type: 'tool',
          content: [
            {
              type: 'tool_result',
              toolUseId: 'toolu_01NRLabsLyVHZPKxbKvkfSMn',
              content: [{ type: 'text', text: '18°C, sunny' }],
            },
          ],
        },
        {
          sessionId,
          seq: 3,
          type: 'agent',
          content: [{ type: 'text', text: 'It is 18°C and sunny in Paris.' }],
          stopReason: 'end_turn',
          usage: {
            inputTokens: 450,
            outputTokens: 12,
            cacheReadTokens: 0,
            cacheWriteTokens: 0,
            totalTokens: 462,
          },
          metadata: {
            claude: { messageId: 'msg_01FinalAnswer', model: 'claude-sonnet-5-5', stopReason: 'end_turn' },
          },
        },
        { sessionId, seq: 4, type: 'user', content: 'Thanks!' },
        {
          sessionId,
          seq: 5,
          type: 'agent',
          content: [{ type: 'text', text: 'Hello there!' }],
          stopReason: 'end_turn',
          usage: { inputTokens: 11, outputTokens: 6, totalTokens: 17 },
          metadata: {
            claude: {
              messageId: 'msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK',
              model: 'claude-opus-4-8',
              stopReason: 'end_turn',
            },
          },
        },
      ])
      for (const message of stored) expect(message.timestamp).toMatch(ISO)
      expect(new Set(stored.map((message) => message.id)).size).toBe(6)
      expect(stored.some((message) => message.incomplete)).toBe(false)

      const data = await reopened.getSession(sessionId)
      expect(data).toMatchObject({
        id: sessionId,
        state: 'idle',
        model: 'claude-sonnet-5-5',
        summary: 'What is the weather in Paris?',
        tokenUsage: {
          inputTokens: 838,
          outputTokens: 83,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          totalTokens: 921,
        },
      })
      expect(data?.providerSessionId).toBeUndefined()
      expect(JSON.stringify({ stored, data })).not.toContain(API_KEY)
    } finally {
      await reopened.close()
    }
  })
})

describe('several agents over the loopback server', () => {
  it('hands over to a profile without tools: its request declares the tools the history used, and the API accepts it', async () => {
    const agent = createAgent(
      {
        model: 'claude-sonnet-5-5',
        agents: {
          triage: { systemPrompt: 'You triage.', handoffs: ['billing'] },
          billing: { systemPrompt: 'You answer billing questions.' },
        },
      },
      {
        adapter: createClaudeAdapter({ apiKey: API_KEY, baseURL: server.baseURL }),
        persister: new SqlitePersister({ filename: join(folder, 'agent.db') }),
      },
    )
    await agent.initialize()
    server.enqueue(
      {
        response: {
          blocks: [{ type: 'tool-call', id: 'toolu_t1', name: 'transfer_to_billing', input: {} }],
          stopReason: 'tool_use',
        },
      },
      {
        response: { blocks: [{ type: 'text', text: 'Your refund is on its way.' }], stopReason: 'end_turn' },
      },
      { response: { blocks: [{ type: 'text', text: 'You are welcome.' }], stopReason: 'end_turn' } },
    )
    const session = await agent.createSession()
    const reply = await session.send('Where is my refund?', { agent: 'triage' })
    expect(reply.text).toBe('Your refund is on its way.')
    expect((await session.send('Thanks')).text).toBe('You are welcome.')
    await agent.close()

    // The fake provider answers HTTP 400 to tool blocks without tools, as the Messages API does.
    expect(server.unmatched).toEqual([])
    const bodies = server.requests.map(
      (request) => JSON.parse(request.received.body) as Record<string, unknown>,
    )
    expect(bodies[0]?.tools).toEqual([expect.objectContaining({ name: 'transfer_to_billing' })])
    expect(bodies[0]).not.toHaveProperty('tool_choice')
    for (const body of bodies.slice(1)) {
      expect(body.system).toBe('You answer billing questions.')
      expect(body.tools).toEqual([
        {
          name: 'transfer_to_billing',
          description: 'Not available in this part of the conversation. Do not call it.',
          input_schema: { type: 'object', properties: {} },
        },
      ])
      expect(body.tool_choice).toEqual({ type: 'none' })
    }
  })
})
