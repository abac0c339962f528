/**
 * The structured output of the tour (DESIGN §10.5): the example schema the UI offers (and the
 * demo's `/json` sends with), and how the offline demo answers a request that asks for structured
 * output — with a value made from the schema, the way a model would fill it in.
 */

/** What a send's `output` option carries: a JSON Schema and its name. */
export interface OutputSpecification {
  name: string
  schema: Record<string, unknown>
}

/** The example schema: a small weather report. Its `examples` make the demo's answer. */
export const DEMO_OUTPUT: OutputSpecification = {
  name: 'weather_report',
  schema: {
    type: 'object',
    properties: {
      city: { type: 'string', examples: ['Paris'] },
      temperatureC: { type: 'number', examples: [21] },
      conditions: { type: 'string', enum: ['sunny', 'cloudy', 'rain', 'snow'], examples: ['sunny'] },
      advice: {
        type: 'array',
        items: { type: 'string' },
        examples: [['wear sunglasses', 'drink water']],
      },
    },
    required: ['city', 'temperatureC', 'conditions', 'advice'],
    additionalProperties: false,
  },
}

const MAX_DEPTH = 8

/**
 * A value that matches a JSON Schema, as the demo's structured answer: a property's first
 * `examples` entry, `const`, `default` or first `enum` value when it has one, else a placeholder of
 * its type (objects get every declared property, arrays one item). Covers what a hand-written
 * schema uses; `$ref` and combinators are answered with `null`.
 */
export function exampleOf(schema: unknown, depth = 0): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema) || depth > MAX_DEPTH) return null
  const node = schema as Record<string, unknown>
  if (Array.isArray(node.examples) && node.examples.length > 0) return node.examples[0]
  if ('const' in node) return node.const
  if ('default' in node) return node.default
  if (Array.isArray(node.enum) && node.enum.length > 0) return node.enum[0]
  const type = Array.isArray(node.type) ? node.type.find((candidate) => candidate !== 'null') : node.type
  switch (type) {
    case 'object': {
      const properties = (node.properties ?? {}) as Record<string, unknown>
      return Object.fromEntries(
        Object.entries(properties).map(([key, property]) => [key, exampleOf(property, depth + 1)]),
      )
    }
    case 'array': {
      const count = typeof node.minItems === 'number' ? Math.max(1, Math.min(node.minItems, 3)) : 1
      return Array.from({ length: count }, () => exampleOf(node.items, depth + 1))
    }
    case 'string': {
      const text = typeof node.description === 'string' ? node.description : 'text'
      const minLength = typeof node.minLength === 'number' ? node.minLength : 0
      return text
        .padEnd(minLength, '.')
        .slice(0, typeof node.maxLength === 'number' ? node.maxLength : undefined)
    }
    case 'integer':
    case 'number':
      return typeof node.minimum === 'number' ? node.minimum : 42
    case 'boolean':
      return true
    default:
      return null
  }
}

/**
 * A value that does NOT match the schema, for `/json broken`: the example missing its required
 * properties but the first (or of another type, when nothing is required), so the kernel answers
 * `OUTPUT_INVALID` and the UI shows why.
 */
export function brokenExampleOf(schema: Record<string, unknown>): unknown {
  const example = exampleOf(schema)
  const required = Array.isArray(schema.required)
    ? schema.required.filter((key): key is string => typeof key === 'string')
    : []
  if (typeof example !== 'object' || example === null || Array.isArray(example) || required.length === 0) {
    return typeof example === 'string' ? 42 : 'not what the schema asks for'
  }
  const broken = { ...(example as Record<string, unknown>) }
  for (const key of required.length > 1 ? required.slice(1) : required) delete broken[key]
  return broken
}
