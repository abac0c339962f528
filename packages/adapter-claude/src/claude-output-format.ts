import type { AdapterStreamOptions } from '@agentx/core'
import { unsupportedOption } from '@agentx/core/provider'
import type { ProviderIdentity } from '@agentx/core/provider'

type Json = Record<string, unknown>

/** What the Messages API takes as `output_config.format`. */
export interface ClaudeOutputFormat {
  type: 'json_schema'
  schema: Json
}

/** String formats Claude's structured output enforces; any other `format` becomes a description. */
const SUPPORTED_STRING_FORMATS = new Set([
  'date-time',
  'time',
  'date',
  'duration',
  'email',
  'hostname',
  'uri',
  'ipv4',
  'ipv6',
  'uuid',
])

/** Keywords that constrain nothing: left out of the schema sent. */
const DROPPED_KEYWORDS = new Set(['$schema', '$id', '$comment'])

/**
 * Claude's `output_config.format` for a send's structured output: `{ type: 'json_schema', schema }`
 * with the schema adapted to what Claude's constrained decoding supports, the way
 * `@anthropic-ai/sdk`'s own `jsonSchemaOutputFormat()` helper adapts it:
 *
 * - every object is closed (`additionalProperties: false`, which Claude requires);
 * - `oneOf` becomes `anyOf`;
 * - constraints Claude cannot enforce (`minimum`, `maxLength`, `pattern`, `minItems` above 1,
 *   unsupported string formats …) move into the `description`, so the model still reads them.
 *
 * The kernel validates the reply against the caller's original schema, so those constraints still
 * hold. A schema Claude cannot express at all is refused before the request with a
 * `ValidationError` naming the place: an object that allows extra properties
 * (`additionalProperties: true` or a schema, e.g. a zod `record`), or a part with no `type`
 * (nor `anyOf`, `allOf`, `enum`, `const`, `$ref`), e.g. a zod `unknown`.
 */
export function toClaudeOutputFormat(
  output: NonNullable<AdapterStreamOptions['output']>,
  provider: ProviderIdentity,
): ClaudeOutputFormat {
  return { type: 'json_schema', schema: adaptSchema(output.schema, '$', provider) }
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isPrimitive(value: unknown): boolean {
  return value === null || typeof value !== 'object'
}

function refuse(provider: ProviderIdentity, path: string, reason: string): never {
  throw unsupportedOption(
    provider,
    'output.schema',
    `Claude's structured output cannot express ${reason} (at ${path}). Describe that part with a type and named properties, or leave output out and ask for JSON in the prompt.`,
  )
}

function adaptMap(value: unknown, path: string, provider: ProviderIdentity): Json {
  if (!isObject(value)) return {}
  return Object.fromEntries(
    Object.entries(value).map(([name, schema]) => [name, adaptSchema(schema, `${path}.${name}`, provider)]),
  )
}

function adaptSchema(input: unknown, path: string, provider: ProviderIdentity): Json {
  if (!isObject(input)) return refuse(provider, path, 'a schema that is not an object')
  const rest: Json = { ...input }
  const take = (keyword: string): unknown => {
    const value = rest[keyword]
    delete rest[keyword]
    return value
  }
  const adapted: Json = {}
  for (const keyword of DROPPED_KEYWORDS) take(keyword)

  const defs = take('$defs')
  if (defs !== undefined) adapted.$defs = adaptMap(defs, `${path}.$defs`, provider)
  const definitions = take('definitions')
  if (definitions !== undefined) adapted.definitions = adaptMap(definitions, `${path}.definitions`, provider)
  const ref = take('$ref')
  if (typeof ref === 'string') {
    // A reference stands alone: Claude takes nothing beside it.
    adapted.$ref = ref
    return adapted
  }

  const enumValues = rest.enum
  if (Array.isArray(enumValues) && enumValues.length > 0 && enumValues.every(isPrimitive))
    adapted.enum = take('enum')
  if ('const' in rest && isPrimitive(rest.const)) adapted.const = take('const')

  const anyOf = take('anyOf') ?? take('oneOf')
  const allOf = take('allOf')
  // Named properties make an object, with or without `type`.
  const type = take('type') ?? ('properties' in rest ? 'object' : undefined)
  if (Array.isArray(anyOf))
    adapted.anyOf = anyOf.map((branch, index) => adaptSchema(branch, `${path}.anyOf[${index}]`, provider))
  if (Array.isArray(allOf))
    adapted.allOf = allOf.map((branch, index) => adaptSchema(branch, `${path}.allOf[${index}]`, provider))
  if (type !== undefined) adapted.type = type
  else if (!('enum' in adapted || 'const' in adapted || 'anyOf' in adapted || 'allOf' in adapted))
    refuse(provider, path, 'a value of any type (a schema without type)')

  const description = take('description')
  if (typeof description === 'string') adapted.description = description
  const title = take('title')
  if (typeof title === 'string') adapted.title = title

  const types = ([] as unknown[]).concat(type)
  const isObjectType = types.includes('object') || 'properties' in rest
  if (isObjectType) {
    const additional = take('additionalProperties')
    if (additional !== undefined && additional !== false)
      refuse(provider, path, 'an object with properties beyond the named ones (additionalProperties)')
    adapted.properties = adaptMap(take('properties'), path, provider)
    const required = take('required')
    if (Array.isArray(required)) adapted.required = required
    adapted.additionalProperties = false
  }
  if (types.includes('string')) {
    const format = rest.format
    if (typeof format === 'string' && SUPPORTED_STRING_FORMATS.has(format)) adapted.format = take('format')
  }
  if (types.includes('array')) {
    const items = take('items')
    if (items !== undefined) adapted.items = adaptSchema(items, `${path}[]`, provider)
    const minItems = rest.minItems
    if (minItems === 0 || minItems === 1) adapted.minItems = take('minItems')
  }
  // zod's int() bounds (±2^53−1) say nothing a model needs to read.
  if (rest.minimum === Number.MIN_SAFE_INTEGER) delete rest.minimum
  if (rest.maximum === Number.MAX_SAFE_INTEGER) delete rest.maximum

  const leftover = Object.entries(rest).filter(([, value]) => value !== undefined)
  if (leftover.length > 0) {
    const note = `{${leftover.map(([key, value]) => `${key}: ${JSON.stringify(value)}`).join(', ')}}`
    adapted.description = typeof adapted.description === 'string' ? `${adapted.description}\n\n${note}` : note
  }
  return adapted
}
