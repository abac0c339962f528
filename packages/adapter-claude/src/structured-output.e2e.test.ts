// Structured output (DESIGN §10.5) through the real ClaudeAdapter against the contract kit's fake
// Anthropic Messages server: a zod schema given to send() reaches the wire as
// output_config.format, the JSON reply comes back typed in SendResult.output, and a constraint that
// Claude cannot enforce (moved into the description) is still checked by the kernel.
import { anthropicMessagesDialect, type FakeProvider, startFakeProvider } from '@agentx/contract-tests'
import { createAgent, InMemoryPersister, type Tool } from '@agentx/core'
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest'
import { z } from 'zod'
import { ClaudeAdapter } from './claude-adapter.js'

let fake: FakeProvider

beforeEach(async () => {
  fake = await startFakeProvider({ dialect: anthropicMessagesDialect })
})
afterEach(async () => {
  await fake.close()
})

const Trip = z.object({
  city: z.string(),
  days: z.number().int().min(1),
  sights: z.array(z.object({ name: z.string(), free: z.boolean() })),
})
type Trip = z.infer<typeof Trip>

const reply = (text: string) => ({
  response: { blocks: [{ type: 'text' as const, text }], stopReason: 'end_turn' as const, deltaSize: 9 },
})

function agentWith(tools: Tool[] = []) {
  const persister = new InMemoryPersister()
  const agent = createAgent(
    { model: 'claude-sonnet-5-5', tools },
    { adapter: new ClaudeAdapter({ apiKey: 'fake-key-structured', baseURL: fake.baseURL }), persister },
  )
  return { agent, persister }
}

describe('createAgent + ClaudeAdapter: send() with a zod output schema', () => {
  it('sends output_config.format on every step of the send and returns the typed value', async () => {
    const lookups: unknown[] = []
    const { agent } = agentWith([
      {
        name: 'opening_hours',
        description: 'Whether a sight is free to enter',
        inputSchema: { type: 'object', properties: { sight: { type: 'string' } }, required: ['sight'] },
        execute: (input) => {
          lookups.push(input)
          return 'free entry'
        },
      },
    ])
    fake.enqueue(
      {
        response: {
          blocks: [{ type: 'tool-call', id: 'toolu_1', name: 'opening_hours', input: { sight: 'Opera' } }],
          stopReason: 'tool_use',
        },
      },
      reply('{"city":"Oslo","days":2,"sights":[{"name":"Opera","free":true}]}'),
    )
    const session = await agent.createSession()
    const result = await session.send<Trip>('Plan two days in Oslo.', {
      output: { schema: Trip, name: 'trip' },
    })

    expect(result.output).toEqual({ city: 'Oslo', days: 2, sights: [{ name: 'Opera', free: true }] })
    expectTypeOf(result.output).toEqualTypeOf<Trip | undefined>()
    expect(lookups).toEqual([{ sight: 'Opera' }])
    // Both model requests of the send asked for the schema, objects closed, min(1) spelled out.
    expect(fake.requests).toHaveLength(2)
    for (const request of fake.requests) {
      const body = JSON.parse(request.received.body) as { output_config?: unknown }
      expect(body.output_config).toEqual({
        format: {
          type: 'json_schema',
          schema: {
            type: 'object',
            properties: {
              city: { type: 'string' },
              days: { type: 'integer', description: '{minimum: 1}' },
              sights: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: { name: { type: 'string' }, free: { type: 'boolean' } },
                  required: ['name', 'free'],
                  additionalProperties: false,
                },
              },
            },
            required: ['city', 'days', 'sights'],
            additionalProperties: false,
          },
        },
      })
    }
    await agent.close()
  })

  it('a reply that breaks a constraint Claude could not enforce rejects with OUTPUT_INVALID; the reply stays stored', async () => {
    const { agent, persister } = agentWith()
    fake.enqueue(reply('{"city":"Oslo","days":0,"sights":[]}'))
    const session = await agent.createSession()
    const error = await session
      .send<Trip>('Plan a trip.', { output: { schema: Trip } })
      .catch((caught: unknown) => caught)
    expect(error).toMatchObject({ name: 'ValidationError', code: 'OUTPUT_INVALID' })
    expect((error as Error).message).toContain('days')
    expect(fake.requests[0]?.decoded.output?.schema).toMatchObject({ type: 'object' })
    await session.flush()
    const stored = await persister.getMessages(session.id)
    expect(stored.map((message) => message.type)).toEqual(['user', 'agent'])
    expect(stored[1]?.content).toEqual([{ type: 'text', text: '{"city":"Oslo","days":0,"sights":[]}' }])
    await agent.close()
  })
})
