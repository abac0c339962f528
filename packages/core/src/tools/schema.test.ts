// The kernel's schema check (tool input and structured output, DESIGN §10.5): own properties only,
// no prototype games, and a Standard Schema that misbehaves is an invalid value, never a crash.
import { describe, expect, it } from 'vitest'
import { createAgent } from '../agent/create-agent.js'
import type { ToolResultBlock } from '../contracts/messages.js'
import { InMemoryPersister } from '../persistence/in-memory-persister.js'
import { ScriptedAdapter } from '../testing/scripted-adapter.js'
import { textTurn, toolCallTurn } from '../testing/stream-helpers.js'
import { checkAgainst, type SchemaLike } from './schema.js'

const schema = {
  type: 'object',
  properties: { n: { type: 'number' } },
  required: ['n'],
  additionalProperties: false,
}

/** A Standard Schema whose `validate` is `validate`. */
const standard = (validate: (value: unknown) => unknown): SchemaLike =>
  ({ '~standard': { version: 1, vendor: 'acme', validate } }) as unknown as SchemaLike

describe('checkAgainst: JSON Schema keys are own properties', () => {
  it('required keys must be own properties: {} does not have "toString"', async () => {
    const check = await checkAgainst({ type: 'object', required: ['toString', 'constructor'] }, {})
    expect(check).toEqual({
      ok: false,
      issues: ['$.toString: required', '$.constructor: required'],
    })
  })

  it('an own "__proto__" key is refused, with or without additionalProperties', async () => {
    const input = JSON.parse('{"n": 1, "__proto__": {"isAdmin": true}}')
    const strict = await checkAgainst(schema, input)
    expect(strict.ok).toBe(false)
    expect(JSON.stringify(strict)).toContain('__proto__')
    const open = await checkAgainst({ type: 'object' }, JSON.parse('{"a": {"__proto__": {"x": 1}}}'))
    expect(open.ok).toBe(false)
    expect(JSON.stringify(open)).toContain('$.a.__proto__')
  })

  it('a schema keyword inherited through the prototype is not a keyword', async () => {
    const inherited = Object.create({ required: ['n'], additionalProperties: false })
    expect(await checkAgainst(inherited, { other: 1 })).toEqual({ ok: true, value: { other: 1 } })
    const properties = Object.create({ n: { type: 'string' } })
    expect(await checkAgainst({ type: 'object', properties }, { n: 1 })).toEqual({
      ok: true,
      value: { n: 1 },
    })
  })

  it('the value that passes is a fresh plain copy, not the object given', async () => {
    const value = Object.freeze({ n: 1, nested: Object.freeze({ a: [1] }) })
    const check = await checkAgainst({ type: 'object' }, value)
    expect(check).toEqual({ ok: true, value: { n: 1, nested: { a: [1] } } })
    const copy = (check as { value: { nested: object } }).value
    expect(copy).not.toBe(value)
    expect(copy.nested).not.toBe(value.nested)
    expect(Object.isFrozen(copy)).toBe(false)
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
  })
})

describe('checkAgainst: a Standard Schema that misbehaves', () => {
  it('a validate() that throws is a failed check naming the vendor, with the error as cause', async () => {
    const boom = new Error('validate exploded')
    const check = await checkAgainst(
      standard(() => {
        throw boom
      }),
      { a: 1 },
    )
    expect(check).toMatchObject({ ok: false, cause: boom })
    expect(JSON.stringify(check)).toMatch(/acme.*validate exploded/)
  })

  it('a validate() that returns something other than a result is a failed check, not an undefined value', async () => {
    for (const returned of [42, null, undefined, {}, { issues: 'bad' }]) {
      const check = await checkAgainst(
        standard(() => returned),
        { a: 1 },
      )
      expect(check.ok, JSON.stringify(returned)).toBe(false)
      expect(JSON.stringify(check)).toMatch(/acme/)
    }
    expect(
      await checkAgainst(
        standard(async (value) => ({ value })),
        { a: 1 },
      ),
    ).toEqual({
      ok: true,
      value: { a: 1 },
    })
  })
})

describe('the checks through a session', () => {
  it('a tool call with "__proto__" or without a required own key never reaches execute', async () => {
    const seen: unknown[] = []
    const adapter = new ScriptedAdapter([
      toolCallTurn([
        { id: 'c1', name: 'set', input: JSON.parse('{"n": 1, "__proto__": {"isAdmin": true}}') },
        { id: 'c2', name: 'set', input: {} },
      ]),
      textTurn('fin'),
    ])
    const agent = createAgent({}, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    const tools = [
      {
        name: 'set',
        description: 's',
        inputSchema: { ...schema, required: ['n', 'toString'] },
        execute: (input: unknown) => {
          seen.push(input)
          return 'ran'
        },
      },
    ]
    await session.send('go', { tools })
    expect(seen).toEqual([])
    const [first, second] = adapter.calls[1]!.prompt as ToolResultBlock[]
    expect(first!.isError).toBe(true)
    expect(JSON.stringify(first!.content)).toContain('__proto__')
    expect(second!.isError).toBe(true)
    expect(JSON.stringify(second!.content)).toContain('toString: required')
    await agent.close()
  })

  it('structured output with an own "__proto__" key rejects with OUTPUT_INVALID', async () => {
    const adapter = new ScriptedAdapter([textTurn('{"n": 1, "__proto__": {"isAdmin": true}}')])
    const agent = createAgent({}, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    await expect(session.send('q', { output: { schema } })).rejects.toMatchObject({
      name: 'ValidationError',
      code: 'OUTPUT_INVALID',
    })
    await agent.close()
  })

  it('an output validator that throws rejects with a ValidationError OUTPUT_INVALID; the reply stays stored', async () => {
    const boom = new Error('validate exploded')
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([textTurn('{"a":1}'), textTurn('plain')])
    const agent = createAgent({ durability: 'sync' }, { adapter, persister })
    const session = await agent.createSession()
    const error = await session
      .send('q', {
        output: {
          schema: standard(() => {
            throw boom
          }),
        },
      })
      .catch((caught: unknown) => caught)
    expect(error).toMatchObject({ name: 'ValidationError', code: 'OUTPUT_INVALID', cause: boom })
    expect((error as Error).message).toContain('validate exploded')
    expect(session.state).toBe('error')
    expect((await persister.getMessages(session.id)).map((message) => message.type)).toEqual([
      'user',
      'agent',
    ])
    expect((await session.send('again')).text).toBe('plain')
    await agent.close()
  })

  it('an output validator that returns a non-result rejects with OUTPUT_INVALID instead of output undefined', async () => {
    const adapter = new ScriptedAdapter([textTurn('{"a":1}')])
    const agent = createAgent({}, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    const error = await session
      .send('q', { output: { schema: standard(() => 42) } })
      .catch((caught: unknown) => caught)
    expect(error).toMatchObject({ name: 'ValidationError', code: 'OUTPUT_INVALID' })
    expect((error as Error).message).toMatch(/could not check the reply.*acme.*returned 42/)
    await agent.close()
  })

  it('a tool validator that throws or returns a non-result gives an isError result; execute never runs', async () => {
    let runs = 0
    const execute = () => {
      runs += 1
      return 'ran'
    }
    const adapter = new ScriptedAdapter([
      toolCallTurn([
        { id: 'a', name: 'throws', input: {} },
        { id: 'b', name: 'answers42', input: {} },
      ]),
      textTurn('fin'),
    ])
    const tools = [
      {
        name: 'throws',
        description: 't',
        inputSchema: standard(() => {
          throw new Error('validate exploded')
        }),
        execute,
      },
      { name: 'answers42', description: 't', inputSchema: standard(() => 42), execute },
    ]
    const agent = createAgent({ tools }, { adapter, persister: new InMemoryPersister() })
    const session = await agent.createSession()
    await session.send('go')
    expect(runs).toBe(0)
    const [first, second] = adapter.calls[1]!.prompt as ToolResultBlock[]
    expect(first).toMatchObject({ isError: true })
    expect(JSON.stringify(first!.content)).toContain('validate exploded')
    expect(second).toMatchObject({ isError: true })
    expect(JSON.stringify(second!.content)).toMatch(/acme/)
    await agent.close()
  })
})
