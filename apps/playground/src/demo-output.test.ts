import { describe, expect, it } from 'vitest'
import { DEMO_JSON_OUTPUT } from './demo-adapter.js'
import { brokenExampleOf, DEMO_OUTPUT, exampleOf } from './demo-output.js'

describe('exampleOf', () => {
  it('fills the example schema in with its examples: the value /json answers', () => {
    expect(exampleOf(DEMO_OUTPUT.schema)).toEqual(DEMO_JSON_OUTPUT)
  })

  it('uses const, default and enum, then a placeholder of the type; arrays honour minItems', () => {
    expect(
      exampleOf({
        type: 'object',
        properties: {
          kind: { const: 'note' },
          size: { type: 'integer', default: 3 },
          colour: { enum: ['red', 'blue'] },
          text: { type: 'string', minLength: 8, maxLength: 10 },
          score: { type: 'number', minimum: 0.5 },
          done: { type: ['boolean', 'null'] },
          items: { type: 'array', items: { type: 'number' }, minItems: 2 },
          unknown: { $ref: '#/x' },
        },
      }),
    ).toEqual({
      kind: 'note',
      size: 3,
      colour: 'red',
      text: 'text....',
      score: 0.5,
      done: true,
      items: [42, 42],
      unknown: null,
    })
  })
})

describe('brokenExampleOf', () => {
  it('leaves out the required properties but the first, or answers another type', () => {
    expect(brokenExampleOf(DEMO_OUTPUT.schema)).toEqual({ city: 'Paris' })
    expect(brokenExampleOf({ type: 'string' })).toBe(42)
    expect(brokenExampleOf({ type: 'object', properties: { a: { type: 'string' } } })).toBe(
      'not what the schema asks for',
    )
  })
})
