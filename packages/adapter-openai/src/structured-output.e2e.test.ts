// Structured output (DESIGN §10.5) through the real OpenAIAdapter, in both API modes, against the
// contract kit's fake servers: a zod schema given to send() reaches the wire as Responses
// text.format or Chat Completions response_format (strict only when the schema qualifies), and the
// JSON reply comes back typed in SendResult.output.
import {
  type FakeProvider,
  openAIChatDialect,
  openAIResponsesDialect,
  startFakeProvider,
  type WireDialect,
} from '@agentx/contract-tests'
import { createAgent, InMemoryPersister } from '@agentx/core'
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest'
import { z } from 'zod'
import type { OpenAIApi } from './openai-adapter-options.js'
import { OpenAIAdapter } from './openai-adapter.js'

const Trip = z.object({
  city: z.string(),
  days: z.number().int(),
  hotel: z.object({ name: z.string() }).nullable(),
})
type Trip = z.infer<typeof Trip>

/** `note` is optional: strict mode would need it required, so the adapter sends strict: false. */
const Review = z.object({ stars: z.number().int().min(1).max(5), note: z.string().optional() })
type Review = z.infer<typeof Review>

const reply = (text: string) => ({
  response: { blocks: [{ type: 'text' as const, text }], stopReason: 'end_turn' as const, deltaSize: 7 },
})

interface Mode {
  name: string
  api: OpenAIApi
  dialect: WireDialect
  /** The native structured-output field of a request body. */
  formatOf(body: Record<string, unknown>): unknown
  /** That field for a name, schema and strict flag. */
  expected(name: string, schema: unknown, strict: boolean): unknown
}

const MODES: Mode[] = [
  {
    name: 'Responses API',
    api: 'responses',
    dialect: openAIResponsesDialect,
    formatOf: (body) => body.text,
    expected: (name, schema, strict) => ({ format: { type: 'json_schema', name, schema, strict } }),
  },
  {
    name: 'Chat Completions',
    api: 'chat',
    dialect: openAIChatDialect,
    formatOf: (body) => body.response_format,
    expected: (name, schema, strict) => ({ type: 'json_schema', json_schema: { name, schema, strict } }),
  },
]

describe.each(MODES)('createAgent + OpenAIAdapter ($name): send() with a zod output schema', (mode) => {
  let fake: FakeProvider | undefined
  afterEach(async () => {
    await fake?.close()
    fake = undefined
  })

  async function agentFor() {
    fake = await startFakeProvider({ dialect: mode.dialect })
    const adapter = new OpenAIAdapter({ api: mode.api, apiKey: 'sk-structured-e2e', baseURL: fake.baseURL })
    return { agent: createAgent({ model: 'gpt-e2e' }, { adapter, persister: new InMemoryPersister() }), fake }
  }
  const bodyOf = (server: FakeProvider, index: number) =>
    JSON.parse(server.requests[index]?.received.body ?? '{}') as Record<string, unknown>

  it('a schema that qualifies goes out strict, objects closed; the reply comes back typed', async () => {
    const { agent, fake } = await agentFor()
    fake.enqueue(reply('{"city":"Oslo","days":3,"hotel":{"name":"Grand"}}'))
    const session = await agent.createSession()
    const result = await session.send<Trip>('Plan three days in Oslo.', {
      output: { schema: Trip, name: 'trip' },
    })

    expect(result.output).toEqual({ city: 'Oslo', days: 3, hotel: { name: 'Grand' } })
    expectTypeOf(result.output).toEqualTypeOf<Trip | undefined>()
    expect(mode.formatOf(bodyOf(fake, 0))).toEqual(
      mode.expected(
        'trip',
        {
          type: 'object',
          properties: {
            city: { type: 'string' },
            days: { type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
            hotel: {
              anyOf: [
                {
                  type: 'object',
                  properties: { name: { type: 'string' } },
                  required: ['name'],
                  additionalProperties: false,
                },
                { type: 'null' },
              ],
            },
          },
          required: ['city', 'days', 'hotel'],
          additionalProperties: false,
        },
        true,
      ),
    )
    expect(fake.requests[0]?.decoded.output).toMatchObject({ name: 'trip', strict: true })
    await agent.close()
  })

  it('a schema with an optional field goes out unchanged with strict: false; the kernel still validates', async () => {
    const { agent, fake } = await agentFor()
    fake.enqueue(reply('{"stars":4}'), reply('{"stars":9}'))
    const session = await agent.createSession()
    const result = await session.send<Review>('Rate it.', { output: { schema: Review } })
    expect(result.output).toEqual({ stars: 4 })
    expectTypeOf(result.output).toEqualTypeOf<Review | undefined>()
    expect(mode.formatOf(bodyOf(fake, 0))).toEqual(
      mode.expected(
        'output',
        {
          type: 'object',
          properties: { stars: { type: 'integer', minimum: 1, maximum: 5 }, note: { type: 'string' } },
          required: ['stars'],
        },
        false,
      ),
    )
    // Best-effort mode lets a reply outside the schema through; the kernel rejects it.
    await expect(session.send<Review>('Again.', { output: { schema: Review } })).rejects.toMatchObject({
      code: 'OUTPUT_INVALID',
    })
    await agent.close()
  })
})
