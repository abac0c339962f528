import { ValidationError } from '@agentx/core'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { toClaudeOutputFormat } from './claude-output-format.js'
import { claudeIdentity } from './map-claude-error.js'

const identity = claudeIdentity([])

/** The JSON Schema core derives from a zod schema (what the adapter receives as output.schema). */
function fromZod(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dropped, ...rest } = schema['~standard'].jsonSchema!.input({ target: 'draft-2020-12' })
  return rest
}

function format(schema: Record<string, unknown>) {
  return toClaudeOutputFormat({ name: 'output', schema }, identity)
}

describe('toClaudeOutputFormat', () => {
  it('closes every object of a zod schema and keeps its types, properties, required and enums', () => {
    const Book = z.object({
      title: z.string(),
      genre: z.enum(['novel', 'poetry']),
      authors: z.array(z.object({ name: z.string() })),
      publisher: z.object({ name: z.string(), city: z.string().optional() }).nullable(),
      year: z.number().int(),
    })
    expect(format(fromZod(Book))).toEqual({
      type: 'json_schema',
      schema: {
        type: 'object',
        properties: {
          title: { type: 'string' },
          genre: { type: 'string', enum: ['novel', 'poetry'] },
          authors: {
            type: 'array',
            items: {
              type: 'object',
              properties: { name: { type: 'string' } },
              required: ['name'],
              additionalProperties: false,
            },
          },
          publisher: {
            anyOf: [
              {
                type: 'object',
                properties: { name: { type: 'string' }, city: { type: 'string' } },
                required: ['name'],
                additionalProperties: false,
              },
              { type: 'null' },
            ],
          },
          // zod's int() bounds (±2^53−1) are left out rather than spelled out to the model.
          year: { type: 'integer' },
        },
        required: ['title', 'genre', 'authors', 'publisher', 'year'],
        additionalProperties: false,
      },
    })
  })

  it('moves the constraints Claude cannot enforce into the description, keeps those it can', () => {
    const schema = {
      type: 'object',
      properties: {
        code: { type: 'string', description: 'An order code.', pattern: '^[A-Z]{3}$', minLength: 3 },
        email: { type: 'string', format: 'email' },
        colour: { type: 'string', format: 'hex-colour' },
        score: { type: 'number', minimum: 0, maximum: 10 },
        tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
        pairs: { type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 4 },
        choice: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
      },
      required: ['code'],
    }
    const { schema: sent } = format(schema)
    expect(sent.properties).toEqual({
      code: { type: 'string', description: 'An order code.\n\n{pattern: "^[A-Z]{3}$", minLength: 3}' },
      email: { type: 'string', format: 'email' },
      colour: { type: 'string', description: '{format: "hex-colour"}' },
      score: { type: 'number', description: '{minimum: 0, maximum: 10}' },
      tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
      pairs: { type: 'array', items: { type: 'integer' }, description: '{minItems: 2, maxItems: 4}' },
      choice: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
    })
    // The caller's schema is left as it was.
    expect(schema.properties.code).toEqual({
      type: 'string',
      description: 'An order code.',
      pattern: '^[A-Z]{3}$',
      minLength: 3,
    })
  })

  it('keeps local definitions and references, closing the objects they define', () => {
    const { schema } = format({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { home: { $ref: '#/$defs/address' }, work: { $ref: '#/$defs/address' } },
      required: ['home', 'work'],
      $defs: {
        address: { type: 'object', properties: { street: { type: 'string' } }, required: ['street'] },
      },
    })
    expect(schema).toEqual({
      $defs: {
        address: {
          type: 'object',
          properties: { street: { type: 'string' } },
          required: ['street'],
          additionalProperties: false,
        },
      },
      type: 'object',
      properties: { home: { $ref: '#/$defs/address' }, work: { $ref: '#/$defs/address' } },
      required: ['home', 'work'],
      additionalProperties: false,
    })
  })

  it('refuses what Claude cannot express before any request: open objects and values of any type', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [fromZod(z.object({ labels: z.record(z.string(), z.string()) })), '$.labels'],
      [{ type: 'object', properties: {}, additionalProperties: true }, '$'],
      [fromZod(z.object({ payload: z.unknown() })), '$.payload'],
      [{ type: 'object', properties: { list: { type: 'array', items: {} } } }, '$.list[]'],
    ]
    for (const [schema, path] of cases) {
      let error: unknown
      try {
        format(schema)
      } catch (caught) {
        error = caught
      }
      expect(error).toBeInstanceOf(ValidationError)
      expect((error as Error).message).toMatch(
        /^output\.schema is not supported by the Claude adapter \(provider 'claude'\): Claude's structured output cannot express /,
      )
      expect((error as Error).message).toContain(`(at ${path})`)
    }
  })
})
