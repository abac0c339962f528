import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { toOpenAIJsonSchemaFormat } from './openai-output-format.js'

/** The JSON Schema core derives from a zod schema (what the adapter receives as output.schema). */
function fromZod(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dropped, ...rest } = schema['~standard'].jsonSchema!.input({ target: 'draft-2020-12' })
  return rest
}

const format = (schema: Record<string, unknown>) => toOpenAIJsonSchemaFormat({ name: 'trip', schema })

describe('toOpenAIJsonSchemaFormat', () => {
  it('uses strict mode for a schema that qualifies as it is, closing every object', () => {
    const Trip = z.object({
      city: z.string().min(1),
      days: z.number().int(),
      hotel: z.object({ name: z.string() }).nullable(),
      sights: z.array(z.object({ name: z.string(), kind: z.enum(['museum', 'park']) })),
    })
    const schema = fromZod(Trip)
    expect(format(schema)).toEqual({
      name: 'trip',
      strict: true,
      schema: {
        type: 'object',
        properties: {
          city: { type: 'string', minLength: 1 },
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
          sights: {
            type: 'array',
            items: {
              type: 'object',
              properties: { name: { type: 'string' }, kind: { type: 'string', enum: ['museum', 'park'] } },
              required: ['name', 'kind'],
              additionalProperties: false,
            },
          },
        },
        required: ['city', 'days', 'hotel', 'sights'],
        additionalProperties: false,
      },
    })
    // The caller's schema is left as it was.
    expect(schema).not.toHaveProperty('additionalProperties')
  })

  it('closes objects inside $defs and keeps references', () => {
    const result = format({
      type: 'object',
      properties: { home: { $ref: '#/$defs/address' } },
      required: ['home'],
      $defs: {
        address: { type: 'object', properties: { street: { type: 'string' } }, required: ['street'] },
      },
    })
    expect(result.strict).toBe(true)
    expect(result.schema).toMatchObject({
      properties: { home: { $ref: '#/$defs/address' } },
      $defs: { address: { additionalProperties: false } },
      additionalProperties: false,
    })
  })

  it('sends any other schema unchanged with strict: false, rather than rewriting what it accepts', () => {
    const cases: Record<string, Record<string, unknown>> = {
      'an optional field': fromZod(z.object({ city: z.string(), note: z.string().optional() })),
      'an open object (record)': fromZod(z.object({ labels: z.record(z.string(), z.string()) })),
      'additionalProperties: true': { type: 'object', properties: {}, additionalProperties: true },
      'a root that is not an object': fromZod(z.array(z.string())),
      'a union at the root': { anyOf: [{ type: 'object', properties: {} }, { type: 'null' }] },
      'allOf in a property': {
        type: 'object',
        properties: { a: { allOf: [{ type: 'string' }] } },
        required: ['a'],
      },
      'oneOf in an array': {
        type: 'object',
        properties: { a: { type: 'array', items: { oneOf: [{ type: 'string' }, { type: 'integer' }] } } },
        required: ['a'],
      },
      uniqueItems: {
        type: 'object',
        properties: { a: { type: 'array', items: { type: 'string' }, uniqueItems: true } },
        required: ['a'],
      },
      'an array without items': { type: 'object', properties: { a: { type: 'array' } }, required: ['a'] },
      'a tuple': {
        type: 'object',
        properties: { a: { type: 'array', prefixItems: [{ type: 'string' }] } },
        required: ['a'],
      },
      'a value of any type': fromZod(z.object({ payload: z.unknown() })),
    }
    for (const [what, schema] of Object.entries(cases)) {
      expect({ what, ...format(schema) }).toEqual({ what, name: 'trip', schema, strict: false })
    }
  })
})
