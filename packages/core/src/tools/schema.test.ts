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

describe('checkAgainst: the JSON Schema keywords the adapters leave to the kernel', () => {
  // Providers' constrained decoding drops some keywords (Claude moves them into `description`,
  // OpenAI's non-strict mode and Gemini ignore some): the kernel must still refuse a reply that
  // breaks them. Before, each of these values came back as valid output.
  const refused: Array<[string, Record<string, unknown>, unknown, RegExp]> = [
    ['pattern', { type: 'string', pattern: '^[A-Z]{3}$' }, 'not-a-code', /does not match/],
    ['format date-time', { type: 'string', format: 'date-time' }, '2026-02-30T10:00:00Z', /date-time/],
    ['format email', { type: 'string', format: 'email' }, 'nobody', /email/],
    ['format uuid', { type: 'string', format: 'uuid' }, '1234', /uuid/],
    ['multipleOf', { type: 'number', multipleOf: 0.5 }, 0.3, /multiple of 0.5/],
    ['exclusiveMinimum', { type: 'number', exclusiveMinimum: 0 }, 0, /not above 0/],
    ['exclusiveMaximum', { type: 'number', exclusiveMaximum: 10 }, 10, /not below 10/],
    ['anyOf', { anyOf: [{ type: 'integer' }, { type: 'null' }] }, 'x', /none of anyOf/],
    ['oneOf', { oneOf: [{ type: 'number' }, { type: 'integer' }] }, 3, /2 of oneOf/],
    ['allOf', { allOf: [{ type: 'string' }, { minLength: 3 }] }, 'ab', /too short/],
    ['not', { not: { type: 'string' } }, 'x', /schema of not/],
    [
      '$ref',
      { $defs: { n: { type: 'integer' } }, properties: { c: { $ref: '#/$defs/n' } } },
      { c: 'x' },
      /\$\.c: expected integer/,
    ],
    [
      'additionalProperties schema',
      { type: 'object', additionalProperties: { type: 'number' } },
      { a: 'x' },
      /\$\.a: expected number/,
    ],
    [
      'prefixItems',
      { type: 'array', prefixItems: [{ type: 'string' }], items: false },
      ['a', 1],
      /\$\[1\]: not allowed/,
    ],
    [
      'uniqueItems',
      { type: 'array', uniqueItems: true },
      [
        { a: 1, b: 2 },
        { b: 2, a: 1 },
      ],
      /not unique/,
    ],
    ['minProperties', { type: 'object', minProperties: 1 }, {}, /too few properties/],
    ['properties: false', { properties: { a: false } }, { a: 1 }, /\$\.a: not allowed/],
    ['allOf [false]', { allOf: [false] }, 1, /not allowed/],
    ['anyOf [false]', { anyOf: [false] }, 1, /none of anyOf/],
    ['not: true', { not: true }, 1, /schema of not/],
    ['multipleOf 1 (a tiny fraction)', { type: 'number', multipleOf: 1 }, 1e-10, /multiple of 1/],
    ['multipleOf 2 (a near miss)', { type: 'number', multipleOf: 2 }, 4.0000000001, /multiple of 2/],
    ['format ipv6 (URL syntax around it)', { type: 'string', format: 'ipv6' }, '::1]/a?b#c', /ipv6/],
    ['a $ref to false', { $defs: { no: false }, $ref: '#/$defs/no' }, 1, /not allowed/],
    ['a $ref that never ends', { $ref: '#' }, 1, /never ends/],
  ]
  for (const [keyword, jsonSchema, value, message] of refused) {
    it(`refuses a value that breaks ${keyword}`, async () => {
      const check = await checkAgainst(jsonSchema, value)
      expect(check.ok).toBe(false)
      expect((check as { issues: string[] }).issues.join('\n')).toMatch(message)
    })
  }

  it('accepts values that meet them, and recursive schemas through $ref', async () => {
    const accepted: Array<[Record<string, unknown>, unknown]> = [
      [{ type: 'string', pattern: '^[A-Z]{3}$' }, 'ABC'],
      [{ type: 'string', format: 'date-time' }, '2026-02-28T10:00:00.5+01:00'],
      [{ type: 'string', format: 'date' }, '2024-02-29'],
      [{ type: 'string', format: 'time' }, '10:00:00'],
      [{ type: 'string', format: 'date-time' }, '2026-01-01T10:00:00'],
      [{ type: 'string', format: 'email' }, 'first.last+tag@example.co.uk'],
      [{ type: 'string', format: 'uri' }, 'https://example.com/a?b=c'],
      [{ type: 'string', format: 'ipv6' }, '::1'],
      [{ type: 'string', format: 'a-format-the-kernel-does-not-know' }, 'anything'],
      [{ type: 'number', multipleOf: 0.1 }, 0.3],
      [{ anyOf: [{ type: 'integer' }, { type: 'null' }] }, null],
      [{ oneOf: [{ type: 'string' }, { type: 'integer' }] }, 3],
      [{ type: 'string', maxLength: 2 }, '😀😀'],
      [{ enum: [{ a: 1, b: 2 }] }, { b: 2, a: 1 }],
      [{ const: { a: [1, { c: 3, d: 4 }] } }, { a: [1, { d: 4, c: 3 }] }],
      [
        { type: 'object', patternProperties: { '^x-': { type: 'string' } }, additionalProperties: false },
        { 'x-a': 'ok' },
      ],
      [{ $defs: { any: true }, $ref: '#/$defs/any' }, { anything: 1 }],
      [{ $defs: { s: { $anchor: 'str', type: 'string' } }, $ref: '#str' }, 'text'],
      [{ $ref: 'https://example.com/other-document.json' }, 1],
      [{ $ref: '#/$defs/missing' }, 1],
      [{ type: 'number', multipleOf: 0.01 }, 19.99],
      [{ type: 'integer', multipleOf: 3 }, 9007199254740990],
      [
        {
          $defs: {
            node: {
              type: 'object',
              properties: { next: { anyOf: [{ $ref: '#/$defs/node' }, { type: 'null' }] } },
            },
          },
          $ref: '#/$defs/node',
        },
        { next: { next: { next: null } } },
      ],
    ]
    for (const [jsonSchema, value] of accepted) {
      expect(await checkAgainst(jsonSchema, value)).toEqual({ ok: true, value })
    }
  })
})

describe('checkAgainst: a schema that would take forever', () => {
  it('an anyOf of recursive $refs is refused as too complex, at once, instead of hanging the send', async () => {
    const schema = {
      $defs: { a: { anyOf: [{ $ref: '#/$defs/a' }, { $ref: '#/$defs/a' }] } },
      $ref: '#/$defs/a',
    }
    // Before, 2^32 branches blocked the event loop for good (the test's own timeout would fire).
    const check = await checkAgainst(schema, 1)
    expect(check).toMatchObject({
      ok: false,
      issues: expect.arrayContaining(['$: the schema is too complex to check']),
    })
  })
})

describe('JSON Schemas of the wrong shape are refused before anything is stored or sent', () => {
  const bad: Array<[Record<string, unknown>, RegExp]> = [
    [{ type: 'bogus' }, /output\.schema\.type must be one of/],
    [{ type: 'object', required: 'x' }, /required must be a list of property names/],
    [{ type: 'object', properties: 5 }, /properties must be an object of schemas/],
    [{ type: 'string', minLength: 'abc' }, /minLength must be a non-negative integer/],
    [{ type: 'object', properties: { a: { type: 'strnig' } } }, /output\.schema\.properties\.a\.type/],
    [{ type: 'string', pattern: '(' }, /pattern is not a valid regular expression/],
    [{ anyOf: { type: 'string' } }, /anyOf must be a list of schemas/],
  ]
  it('an output schema: ValidationError, nothing stored, no request', async () => {
    const persister = new InMemoryPersister()
    const adapter = new ScriptedAdapter([])
    const agent = createAgent({}, { adapter, persister })
    const session = await agent.createSession()
    for (const [schema, message] of bad) {
      // Before, `type: 'bogus'` stored the message, asked the model and failed with OUTPUT_INVALID;
      // `required: 'x'` and the others checked nothing.
      await expect(session.send('hi', { output: { schema } })).rejects.toMatchObject({
        name: 'ValidationError',
        message: expect.stringMatching(message),
      })
    }
    expect(await persister.getMessages(session.id)).toEqual([])
    expect(adapter.calls).toEqual([])
    await agent.close()
  })

  it("a tool's inputSchema is taken as given (an MCP server's schema may be loose): its check is what it can read", async () => {
    const loose = {
      name: 'lookup',
      description: 'looks up',
      inputSchema: { type: 'object', properties: { q: { type: 'any', required: true } } },
      execute: () => 'x',
    }
    expect(() => createAgent({ tools: [loose] })).not.toThrow()
  })

  it('accepts the schemas people write: boolean subschemas, draft-4 exclusive bounds, unknown keywords', async () => {
    const agent = createAgent(
      {},
      { adapter: new ScriptedAdapter([textTurn('{"a":"x"}')]), persister: new InMemoryPersister() },
    )
    const session = await agent.createSession()
    const schema = {
      type: ['object', 'null'],
      properties: {
        a: { type: 'string', 'x-ui': 'wide' },
        b: true,
        c: { type: 'number', minimum: 0, exclusiveMaximum: true, maximum: 9 },
      },
      additionalProperties: false,
      required: ['a'],
      $defs: { unused: { enum: [1, 'x', null] } },
    }
    expect((await session.send('hi', { output: { schema } })).output).toEqual({ a: 'x' })
    await agent.close()
  })
})
