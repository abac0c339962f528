// Structured output (DESIGN §10.5) through the real GeminiAdapter against the contract kit's fake
// Gemini server: a zod schema given to send() reaches the wire as generationConfig.responseMimeType
// application/json + responseJsonSchema, and the JSON reply comes back typed in SendResult.output.
import { type FakeProvider, geminiDialect, startFakeProvider } from '@agentx/contract-tests'
import { createAgent, InMemoryPersister } from '@agentx/core'
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest'
import { z } from 'zod'
import { GeminiAdapter } from './gemini-adapter.js'

let fake: FakeProvider

beforeEach(async () => {
  fake = await startFakeProvider({ dialect: geminiDialect })
})
afterEach(async () => {
  await fake.close()
})

const Recipe = z.object({
  title: z.string(),
  minutes: z.number().int().min(1),
  ingredients: z.array(z.object({ name: z.string(), grams: z.number().optional() })),
})
type Recipe = z.infer<typeof Recipe>

const reply = (text: string) => ({
  response: { blocks: [{ type: 'text' as const, text }], stopReason: 'end_turn' as const, deltaSize: 8 },
})

function agentWith() {
  const adapter = new GeminiAdapter({ apiKey: 'g-structured-e2e', baseURL: fake.baseURL })
  return createAgent({ model: 'gemini-2.5-flash' }, { adapter, persister: new InMemoryPersister() })
}

describe('createAgent + GeminiAdapter: send() with a zod output schema', () => {
  it('sends responseMimeType application/json with the schema as responseJsonSchema; the reply comes back typed', async () => {
    const agent = agentWith()
    fake.enqueue(
      reply('{"title":"Pancakes","minutes":20,"ingredients":[{"name":"flour","grams":200},{"name":"egg"}]}'),
    )
    const session = await agent.createSession()
    const result = await session.send<Recipe>('A quick pancake recipe.', { output: { schema: Recipe } })

    expect(result.output).toEqual({
      title: 'Pancakes',
      minutes: 20,
      ingredients: [{ name: 'flour', grams: 200 }, { name: 'egg' }],
    })
    expectTypeOf(result.output).toEqualTypeOf<Recipe | undefined>()
    const body = JSON.parse(fake.requests[0]?.received.body ?? '{}') as {
      generationConfig?: Record<string, unknown>
    }
    expect(body.generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseJsonSchema: {
        type: 'object',
        properties: {
          title: { type: 'string' },
          minutes: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
          ingredients: {
            type: 'array',
            items: {
              type: 'object',
              properties: { name: { type: 'string' }, grams: { type: 'number' } },
              required: ['name'],
            },
          },
        },
        required: ['title', 'minutes', 'ingredients'],
      },
    })
    expect(fake.requests[0]?.decoded.output?.schema).toEqual(body.generationConfig?.responseJsonSchema)
    await agent.close()
  })

  it('a reply that does not match rejects with OUTPUT_INVALID, and the next send without output asks for none', async () => {
    const agent = agentWith()
    fake.enqueue(reply('{"title":"Pancakes","minutes":0,"ingredients":[]}'), reply('Sure, here it is.'))
    const session = await agent.createSession()
    await expect(session.send<Recipe>('Again.', { output: { schema: Recipe } })).rejects.toMatchObject({
      code: 'OUTPUT_INVALID',
    })
    const plain = await session.send('In prose, please.')
    expect(plain.text).toBe('Sure, here it is.')
    expect(plain.output).toBeUndefined()
    expect(fake.requests.map((request) => request.decoded.output !== undefined)).toEqual([true, false])
    await agent.close()
  })
})
