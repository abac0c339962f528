import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type AnyMessage, createAgent, type SessionEvent } from '@agentx/core'
import { SqlitePersister } from '@agentx/persister-sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fixture, type GeminiTestServer, sseOf, startGeminiTestServer } from '../test/gemini-test-server.js'
import { GeminiAdapter } from './gemini-adapter.js'

let server: GeminiTestServer
let folder: string

beforeAll(async () => {
  server = await startGeminiTestServer()
  folder = mkdtempSync(join(tmpdir(), 'agentx-gemini-e2e-'))
})
afterAll(async () => {
  await server.close()
  rmSync(folder, { recursive: true, force: true })
})

/** Persisted messages without the fields core generates (ids, timestamps). */
function shape(messages: AnyMessage[]): unknown[] {
  return messages.map(({ id: _id, timestamp: _timestamp, sessionId: _sessionId, ...rest }) => rest)
}

describe('createAgent + GeminiAdapter + SqlitePersister', () => {
  it('runs a Gemini 3 tool call end to end and persists exactly the conversation, signatures included', async () => {
    server.enqueue(
      { sse: fixture('tool-call-gemini3.sse') },
      {
        sse: sseOf(
          {
            candidates: [{ content: { role: 'model', parts: [{ text: 'It is 18°C ' }] }, index: 0 }],
            responseId: 'resp-final',
          },
          {
            candidates: [
              {
                content: { role: 'model', parts: [{ text: 'in San Francisco.' }] },
                finishReason: 'STOP',
                index: 0,
              },
            ],
            responseId: 'resp-final',
            usageMetadata: { promptTokenCount: 60, candidatesTokenCount: 8, totalTokenCount: 68 },
          },
        ),
      },
    )
    const filename = join(folder, 'agent.db')
    const inputs: unknown[] = []
    const agent = createAgent(
      {
        model: 'gemini-3-pro-preview',
        systemPrompt: 'Use tools for live data.',
        durability: 'sync',
        retry: { maxRetries: 0, initialDelayMs: 1, maxDelayMs: 1 },
        tools: [
          {
            name: 'weather',
            description: 'Current weather for a city',
            inputSchema: {
              type: 'object',
              properties: { location: { type: 'string' } },
              required: ['location'],
            },
            execute: (input: unknown) => {
              inputs.push(input)
              return '18°C, clear'
            },
          },
        ],
      },
      {
        adapter: new GeminiAdapter({ apiKey: 'e2e-key', baseURL: server.baseUrl }),
        persister: new SqlitePersister({ filename }),
      },
    )
    await agent.initialize()
    const session = await agent.createSession({})
    const events: SessionEvent[] = []
    session.subscribe((event) => events.push(event))
    const result = await session.send('Weather in San Francisco?')
    await agent.close()

    expect(inputs).toEqual([{ location: 'San Francisco' }])
    expect(result.text).toBe('It is 18°C in San Francisco.')
    expect(result.stopReason).toBe('end_turn')
    expect(events.filter((event) => event.type === 'tool-call')).toEqual([
      {
        type: 'tool-call',
        id: 'gemini-call-b36LacjwM668nsEP2tbsgQQ-0',
        name: 'weather',
        input: { location: 'San Francisco' },
      },
    ])

    // The second request replays the call with its signature (and without the made-up id).
    const second = server.requests[1]?.body
    expect(second?.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in San Francisco?' }] },
      {
        role: 'model',
        parts: [
          {
            functionCall: { name: 'weather', args: { location: 'San Francisco' } },
            thoughtSignature: 'EqUCCqICAb4+9vsh8Pd5c2lnbmF0dXJl',
          },
        ],
      },
      {
        role: 'user',
        parts: [{ functionResponse: { name: 'weather', response: { output: '18°C, clear' } } }],
      },
    ])
    expect(second?.systemInstruction).toEqual({ parts: [{ text: 'Use tools for live data.' }] })

    // What is on disk, read back through a fresh persister.
    const reopened = new SqlitePersister({ filename })
    try {
      const stored = await reopened.getMessages(session.id)
      expect(shape(stored)).toEqual([
        { seq: 0, type: 'user', content: 'Weather in San Francisco?' },
        {
          seq: 1,
          type: 'agent',
          content: [
            {
              type: 'tool_use',
              id: 'gemini-call-b36LacjwM668nsEP2tbsgQQ-0',
              name: 'weather',
              input: { location: 'San Francisco' },
              providerMetadata: {
                gemini: { syntheticId: true, thoughtSignature: 'EqUCCqICAb4+9vsh8Pd5c2lnbmF0dXJl' },
              },
            },
          ],
          stopReason: 'tool_use',
          usage: { inputTokens: 29, outputTokens: 60, reasoningTokens: 45, totalTokens: 89 },
        },
        {
          seq: 2,
          type: 'tool',
          content: [
            {
              type: 'tool_result',
              toolUseId: 'gemini-call-b36LacjwM668nsEP2tbsgQQ-0',
              content: [{ type: 'text', text: '18°C, clear' }],
            },
          ],
        },
        {
          seq: 3,
          type: 'agent',
          content: [{ type: 'text', text: 'It is 18°C in San Francisco.' }],
          stopReason: 'end_turn',
          usage: { inputTokens: 60, outputTokens: 8, totalTokens: 68 },
        },
      ])
      const data = await reopened.getSession(session.id)
      expect(data).toMatchObject({
        state: 'idle',
        model: 'gemini-3-pro-preview',
        summary: 'Weather in San Francisco?',
        tokenUsage: { inputTokens: 89, outputTokens: 68, reasoningTokens: 45, totalTokens: 157 },
      })
      expect(JSON.stringify(stored)).not.toContain('e2e-key')
    } finally {
      await reopened.close()
    }
  })

  it('retries a connection cut before any output, and keeps a reply cut mid-stream as incomplete without retrying it', async () => {
    const before = server.requests.length
    server.enqueue(
      { sse: fixture('text-max-tokens.sse'), resetAfterFrame: 0 },
      { sse: fixture('text-max-tokens.sse') },
      { sse: fixture('truncated.sse') },
    )
    const filename = join(folder, 'retry.db')
    const agent = createAgent(
      {
        model: 'gemini-2.5-flash',
        durability: 'sync',
        retry: { maxRetries: 1, initialDelayMs: 1, maxDelayMs: 5 },
      },
      {
        adapter: new GeminiAdapter({ apiKey: 'e2e-key', baseURL: server.baseUrl }),
        persister: new SqlitePersister({ filename }),
      },
    )
    await agent.initialize()
    const session = await agent.createSession({})
    const events: SessionEvent[] = []
    session.subscribe((event) => events.push(event))
    const result = await session.send('Why is the sky blue?')
    const retries = events.filter((event) => event.type === 'retry')
    expect(retries).toHaveLength(1)
    expect(retries[0]?.type === 'retry' && retries[0].error).toMatchObject({
      kind: 'network',
      provider: 'gemini',
    })
    expect(result.stopReason).toBe('max_tokens')

    // Output was already shown: a retry would duplicate it, so the cut reply fails the send.
    await expect(session.send('And at sunset?')).rejects.toMatchObject({ kind: 'network', retryable: true })
    expect(session.state).toBe('error')
    await agent.close()
    expect(server.requests.length - before).toBe(3)

    const reopened = new SqlitePersister({ filename })
    try {
      const stored = await reopened.getMessages(session.id)
      expect(stored.map((message) => [message.seq, message.type, message.incomplete ?? false])).toEqual([
        [0, 'user', false],
        [1, 'agent', false],
        [2, 'user', false],
        [3, 'agent', true],
      ])
      expect(stored[1]?.content).toEqual([{ type: 'text', text: result.text }])
      expect(stored[1]?.usage).toEqual({
        inputTokens: 7,
        outputTokens: 198,
        reasoningTokens: 45,
        totalTokens: 205,
      })
      expect(stored[2]?.content).toBe('And at sunset?')
      expect(stored[3]).toMatchObject({
        content: [{ type: 'text', text: 'The answer is' }],
        stopReason: 'error',
      })
    } finally {
      await reopened.close()
    }
  })
})
