import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type AnyMessage, createAgent } from '@agentx/core'
import { type FakeProvider, openAIResponsesDialect, startFakeProvider } from '@agentx/contract-tests'
import { SqlitePersister } from '@agentx/persister-sqlite'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { OpenAIAdapter } from './openai-adapter.js'

let fake: FakeProvider
let folder: string

beforeEach(async () => {
  fake = await startFakeProvider({ dialect: openAIResponsesDialect })
  folder = mkdtempSync(join(tmpdir(), 'agentx-openai-e2e-'))
})
afterEach(async () => {
  await fake.close()
  rmSync(folder, { recursive: true, force: true })
})

function openAgent(filename: string) {
  return createAgent(
    {
      model: 'gpt-e2e',
      systemPrompt: 'Be brief.',
      durability: 'sync',
      retry: { maxRetries: 0, initialDelayMs: 1, maxDelayMs: 1 },
      tools: [
        {
          name: 'weather',
          description: 'Current weather for a city',
          inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          execute: (input: unknown) => `18°C in ${(input as { city: string }).city}`,
        },
      ],
    },
    {
      adapter: new OpenAIAdapter({ apiKey: 'sk-e2e-key', baseURL: fake.baseURL }),
      persister: new SqlitePersister({ filename }),
    },
  )
}

function text(id: string, value: string) {
  return {
    response: {
      blocks: [{ type: 'text' as const, text: value }],
      stopReason: 'end_turn' as const,
      responseId: id,
      usage: { inputTokens: 10, outputTokens: 3 },
      deltaSize: 4,
    },
  }
}

/** Persisted messages without what core generates (ids, timestamps) and without provider metadata. */
function shape(messages: AnyMessage[]): unknown[] {
  return JSON.parse(
    JSON.stringify(
      messages.map(({ type, content, stopReason }) => ({ type, content, stopReason })),
      (key, value) => (key === 'providerMetadata' ? undefined : value),
    ),
  )
}

describe('createAgent + OpenAIAdapter (Responses) + SqlitePersister', () => {
  it('resumes with previous_response_id after an agent restart, sending only the new input', async () => {
    const filename = join(folder, 'agent.db')
    fake.enqueue(text('resp_first', 'Hello there.'))
    const first = openAgent(filename)
    await first.initialize()
    const session = await first.createSession({})
    await session.send('Hi')
    expect(session.providerSessionId).toBe('resp_first')
    await first.close()

    fake.enqueue(text('resp_second', 'Still here.'))
    const second = openAgent(filename)
    await second.initialize()
    const restored = await second.getSession(session.id)
    expect(restored?.providerSessionId).toBe('resp_first')
    const result = await restored!.send('Are you there?')
    expect(result.text).toBe('Still here.')
    expect(restored?.providerSessionId).toBe('resp_second')
    await second.close()

    expect(fake.requests).toHaveLength(2)
    const resumed = fake.requests[1]!
    expect(resumed.decoded.resume).toBe('resp_first')
    expect(resumed.decoded.systemPrompt).toBe('Be brief.')
    expect(resumed.decoded.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Are you there?' }] },
    ])
    const body = JSON.parse(resumed.received.body) as Record<string, unknown>
    expect(body.previous_response_id).toBe('resp_first')
    expect(body.input).toEqual([{ role: 'user', content: 'Are you there?' }])

    // The new provider session id was saved: a third agent sees it on disk.
    const reopened = new SqlitePersister({ filename })
    try {
      expect((await reopened.getSession(session.id))?.providerSessionId).toBe('resp_second')
      expect(shape(await reopened.getMessages(session.id))).toEqual([
        { type: 'user', content: 'Hi' },
        { type: 'agent', content: [{ type: 'text', text: 'Hello there.' }], stopReason: 'end_turn' },
        { type: 'user', content: 'Are you there?' },
        { type: 'agent', content: [{ type: 'text', text: 'Still here.' }], stopReason: 'end_turn' },
      ])
    } finally {
      await reopened.close()
    }
  })

  it('falls back to a full replay when OpenAI no longer knows the previous response', async () => {
    const filename = join(folder, 'agent.db')
    fake.enqueue(text('resp_old', 'First answer.'))
    const first = openAgent(filename)
    await first.initialize()
    const session = await first.createSession({})
    await session.send('Question one')
    await first.close()

    fake.enqueue({ httpError: { kind: 'unknown_resume' } }, text('resp_new', 'Second answer.'))
    const second = openAgent(filename)
    await second.initialize()
    const restored = (await second.getSession(session.id))!
    const result = await restored.send('Question two')
    expect(result.text).toBe('Second answer.')
    expect(restored.providerSessionId).toBe('resp_new')
    expect(restored.state).toBe('idle')
    await second.close()

    expect(fake.requests).toHaveLength(3)
    expect(fake.requests[1]!.decoded.resume).toBe('resp_old')
    const replay = fake.requests[2]!
    expect(replay.decoded.resume).toBeUndefined()
    expect(JSON.parse(replay.received.body)).not.toHaveProperty('previous_response_id')
    expect(replay.decoded.systemPrompt).toBe('Be brief.')
    expect(replay.decoded.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Question one' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'First answer.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Question two' }] },
    ])
  })

  it('sends only the tool results with previous_response_id in the tool loop', async () => {
    const filename = join(folder, 'agent.db')
    fake.enqueue(
      {
        response: {
          blocks: [{ type: 'tool-call', id: 'call_w1', name: 'weather', input: { city: 'Oslo' } }],
          stopReason: 'tool_use',
          responseId: 'resp_tool',
          deltaSize: 3,
        },
      },
      text('resp_after_tool', 'It is 18°C in Oslo.'),
    )
    const agent = openAgent(filename)
    await agent.initialize()
    const session = await agent.createSession({})
    const result = await session.send('Weather in Oslo?')
    await agent.close()

    expect(result.text).toBe('It is 18°C in Oslo.')
    const step2 = fake.requests[1]!
    expect(step2.decoded.resume).toBe('resp_tool')
    expect(JSON.parse(step2.received.body).input).toEqual([
      { type: 'function_call_output', call_id: 'call_w1', output: '18°C in Oslo' },
    ])
    expect(fake.requests[0]!.decoded.tools).toEqual(['weather'])

    const reopened = new SqlitePersister({ filename })
    try {
      expect(shape(await reopened.getMessages(session.id))).toEqual([
        { type: 'user', content: 'Weather in Oslo?' },
        {
          type: 'agent',
          content: [{ type: 'tool_use', id: 'call_w1', name: 'weather', input: { city: 'Oslo' } }],
          stopReason: 'tool_use',
        },
        {
          type: 'tool',
          content: [
            { type: 'tool_result', toolUseId: 'call_w1', content: [{ type: 'text', text: '18°C in Oslo' }] },
          ],
        },
        { type: 'agent', content: [{ type: 'text', text: 'It is 18°C in Oslo.' }], stopReason: 'end_turn' },
      ])
      const stored = await reopened.getMessages(session.id)
      const toolUse = (stored[1]!.content as Array<{ providerMetadata?: unknown }>)[0]
      expect(toolUse?.providerMetadata).toMatchObject({ openai: { responseId: 'resp_tool' } })
    } finally {
      await reopened.close()
    }
  })
})
