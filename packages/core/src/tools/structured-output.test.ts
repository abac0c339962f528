// Structured output and typed tools (DESIGN §10.5) with zod 4 and valibot as the Standard Schema
// libraries; core itself depends on neither.
import * as v from 'valibot'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../agent/create-agent.js'
import type { ToolResultBlock } from '../contracts/messages.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn, toolCallTurn } from '../testing/stream-helpers.js'
import { toJsonSchema } from './schema.js'
import { tool } from './tool.js'

const Person = z.object({ name: z.string(), age: z.number().int().min(0) })

async function run(reply: string, schema: Parameters<typeof toJsonSchema>[0]) {
  const persister = new InMemoryPersister()
  const adapter = new ScriptedAdapter([textTurn(reply)])
  const agent = createAgent({}, { adapter, persister })
  const session = await agent.createSession()
  const sent = session.send<{ name: string; age: number }>('Extract the person.', {
    output: { schema, name: 'person' },
  })
  return { persister, adapter, agent, session, sent }
}

describe('structured output', () => {
  it('a zod schema: the adapter gets its JSON Schema, the result holds the parsed, typed value', async () => {
    const { adapter, agent, sent } = await run('{"name":"Ada","age":36}', Person)
    const result = await sent
    expect(result.output).toEqual({ name: 'Ada', age: 36 })
    expectTypeOf(result.output).toEqualTypeOf<{ name: string; age: number } | undefined>()
    const output = adapter.calls[0]!.options.output!
    expect(output.name).toBe('person')
    expect(output.schema).toMatchObject({
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: 'integer' } },
      required: ['name', 'age'],
    })
    expect(output.schema.$schema).toBeUndefined()
    await agent.close()
  })

  it('a JSON Schema object works as is; a Markdown fence around the JSON is tolerated', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }
    const { adapter, agent, sent } = await run('```json\n{"name":"Grace"}\n```', schema)
    expect((await sent).output).toEqual({ name: 'Grace' })
    expect(adapter.calls[0]!.options.output).toEqual({ name: 'person', schema })
    await agent.close()
  })

  it('text that does not parse rejects with OUTPUT_INVALID and the reply stays stored', async () => {
    const { persister, agent, session, sent } = await run('Ada is 36.', Person)
    await expect(sent).rejects.toMatchObject({ name: 'ValidationError', code: 'OUTPUT_INVALID' })
    expect(session.state).toBe('error')
    await session.flush()
    const stored = await persister.getMessages(session.id)
    expect(stored.map((m) => m.type)).toEqual(['user', 'agent'])
    expect(stored[1]!.content).toEqual([{ type: 'text', text: 'Ada is 36.' }])
    await agent.close()
  })

  it('JSON that does not validate rejects with OUTPUT_INVALID naming the issue', async () => {
    const { agent, sent } = await run('{"name":"Ada","age":-1}', Person)
    const error = (await sent.catch((e: unknown) => e)) as Error
    expect(error).toMatchObject({ code: 'OUTPUT_INVALID' })
    expect(error.message).toContain('age')
    await agent.close()
  })

  it('a bad output option is a ValidationError before anything is stored', async () => {
    const persister = new InMemoryPersister()
    const agent = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    const session = await agent.createSession()
    for (const output of [
      {},
      { schema: 'x' },
      { schema: {}, name: 'no spaces allowed' },
      { schema: {}, extra: 1 },
    ]) {
      await expect(session.send('x', { output } as never)).rejects.toMatchObject({ code: 'VALIDATION' })
    }
    expect(await persister.getMessages(session.id)).toEqual([])
    await agent.close()
  })
})

describe('typed tools', () => {
  it('tool() infers the input type from a zod schema; the adapter gets the derived JSON Schema', async () => {
    const seen: Array<{ city: string; days: number }> = []
    const forecast = tool({
      name: 'forecast',
      description: 'Weather forecast',
      inputSchema: z.object({ city: z.string(), days: z.number().int().max(7) }),
      execute: (input) => {
        expectTypeOf(input).toEqualTypeOf<{ city: string; days: number }>()
        seen.push(input)
        return 'sunny'
      },
    })
    const adapter = new ScriptedAdapter([
      toolCallTurn([{ id: 'f1', name: 'forecast', input: { city: 'Oslo', days: 3 } }]),
      textTurn('Sunny in Oslo.'),
    ])
    const agent = createAgent({ tools: [forecast] }, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    await session.send('Weather in Oslo?')
    expect(seen).toEqual([{ city: 'Oslo', days: 3 }])
    expect(adapter.calls[0]!.options.tools?.[0]?.inputSchema).toMatchObject({
      type: 'object',
      properties: { city: { type: 'string' } },
    })
    await agent.close()
  })

  it('invalid input never reaches execute: it becomes an isError result listing the issues, and the model can correct itself', async () => {
    let runs = 0
    const forecast = tool({
      name: 'forecast',
      description: 'Weather forecast',
      inputSchema: z.object({ city: z.string(), days: z.number().int().max(7) }),
      execute: () => {
        runs += 1
        return 'sunny'
      },
    })
    const adapter = new ScriptedAdapter([
      toolCallTurn([{ id: 'bad', name: 'forecast', input: { city: 42, days: 30 } }]),
      toolCallTurn([{ id: 'good', name: 'forecast', input: { city: 'Oslo', days: 2 } }]),
      textTurn('ok'),
    ])
    const agent = createAgent({ tools: [forecast] }, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    await session.send('go')
    expect(runs).toBe(1)
    const first = (adapter.calls[1]!.prompt as ToolResultBlock[])[0]!
    expect(first.isError).toBe(true)
    expect(JSON.stringify(first.content)).toMatch(/city/)
    expect(JSON.stringify(first.content)).toMatch(/days/)
    await agent.close()
  })

  it('plain JSON Schema tools keep working, and their required/type constraints are checked too', async () => {
    let runs = 0
    const adapter = new ScriptedAdapter([
      toolCallTurn([{ id: 't', name: 'echo', input: { text: 5 } }]),
      toolCallTurn([{ id: 'u', name: 'echo', input: { text: 'hi' } }]),
      textTurn('done'),
    ])
    const agent = createAgent(
      {
        tools: [
          {
            name: 'echo',
            description: 'echo',
            inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
            execute: (input) => {
              runs += 1
              return input
            },
          },
        ],
      },
      { adapter, persister: new InMemoryPersister() },
    )
    const session = await agent.createSession()
    await session.send('go')
    expect(runs).toBe(1)
    expect((adapter.calls[1]!.prompt as ToolResultBlock[])[0]!.isError).toBe(true)
    await agent.close()
  })

  it('a valibot tool schema (no JSON Schema converter): the provider gets an object schema, the kernel validates', async () => {
    const schema = v.object({ q: v.pipe(v.string(), v.minLength(2)) })
    expect((schema as { '~standard': { jsonSchema?: unknown } })['~standard'].jsonSchema).toBeUndefined()
    const seen: string[] = []
    const adapter = new ScriptedAdapter([
      toolCallTurn([{ id: 'a', name: 'search', input: { q: 1 } }]),
      toolCallTurn([{ id: 'b', name: 'search', input: { q: 'ok' } }]),
      textTurn('done'),
    ])
    const search = tool({
      name: 'search',
      description: 's',
      inputSchema: schema,
      execute: ({ q }) => {
        seen.push(q)
        return q
      },
    })
    const agent = createAgent({ tools: [search] }, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    await session.send('go')
    expect(adapter.calls[0]!.options.tools).toEqual([
      { name: 'search', description: 's', inputSchema: { type: 'object' } },
    ])
    const first = (adapter.calls[1]!.prompt as ToolResultBlock[])[0]!
    expect(first.isError).toBe(true)
    expect(JSON.stringify(first.content)).toContain('q')
    expect(seen).toEqual(['ok'])
    await agent.close()
  })

  it('a valibot output schema: no native format, the model is asked for JSON, the kernel validates', async () => {
    const schema = v.object({ name: v.string(), age: v.number() })
    const good = await run('{"name":"Ada","age":36}', schema)
    expect((await good.sent).output).toEqual({ name: 'Ada', age: 36 })
    expect(good.adapter.calls[0]!.options.output).toBeUndefined()
    expect(good.adapter.calls[0]!.options.systemPrompt).toMatch(/JSON/)
    await good.agent.close()
    const bad = await run('{"name":"Ada"}', schema)
    await expect(bad.sent).rejects.toMatchObject({ code: 'OUTPUT_INVALID' })
    await bad.agent.close()
  })

  it('a Standard Schema whose JSON Schema converter fails is a ConfigurationError naming it', () => {
    const broken = brokenConverter('cannot represent')
    expect(() =>
      createAgent({
        tools: [{ name: 'x', description: 'x', inputSchema: broken as never, execute: () => 'x' }],
      }),
    ).toThrow(/broken schema could not be turned into a JSON Schema/)
  })

  it("a send's output schema that cannot be turned into JSON Schema rejects with ValidationError, nothing stored", async () => {
    const broken = brokenConverter('cannot represent a Date')
    const persister = new InMemoryPersister()
    const agent = createAgent({}, { adapter: new ScriptedAdapter([]), persister })
    const session = await agent.createSession()
    // Before, a ConfigurationError: the agent's configuration was fine, the send's option was not.
    await expect(session.send('hi', { output: { schema: broken as never } })).rejects.toMatchObject({
      name: 'ValidationError',
      code: 'VALIDATION',
      message: expect.stringMatching(/could not be turned into a JSON Schema/),
    })
    expect(await persister.getMessages(session.id)).toEqual([])
    await agent.close()
  })

  it('toJsonSchema turns a Standard Schema into JSON Schema once and leaves JSON Schema objects alone', () => {
    const json = { type: 'object' }
    expect(toJsonSchema(json, 'x')).toBe(json)
    const first = toJsonSchema(Person, 'person')
    expect(toJsonSchema(Person, 'person')).toBe(first)
  })
})

/** A Standard Schema of vendor `broken` whose JSON Schema converter throws `message`. */
function brokenConverter(message: string) {
  return {
    '~standard': {
      version: 1,
      vendor: 'broken',
      validate: (value: unknown) => ({ value }),
      jsonSchema: {
        input: () => {
          throw new Error(message)
        },
        output: () => ({}),
      },
    },
  }
}
