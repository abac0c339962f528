import type { AdapterStreamOptions } from '@agentx/core'

type Json = Record<string, unknown>

/**
 * The JSON Schema format of OpenAI's structured outputs: the body of Responses `text.format`
 * (with `type: 'json_schema'`) and of Chat Completions `response_format.json_schema`.
 */
export interface OpenAIJsonSchemaFormat {
  name: string
  schema: Json
  /** Strict schema adherence: only when the schema qualifies ({@link toOpenAIJsonSchemaFormat}). */
  strict: boolean
}

/**
 * Keywords strict mode rejects (the list `openai`'s own `toStrictJsonSchema` refuses), plus the
 * tuple keyword `additionalItems`.
 */
const STRICT_UNSUPPORTED_KEYWORDS = [
  '$anchor',
  '$dynamicAnchor',
  '$dynamicRef',
  '$recursiveAnchor',
  '$recursiveRef',
  'additionalItems',
  'allOf',
  'contains',
  'contentEncoding',
  'contentMediaType',
  'contentSchema',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
  'else',
  'if',
  'maxContains',
  'maxProperties',
  'minContains',
  'minProperties',
  'not',
  'oneOf',
  'patternProperties',
  'prefixItems',
  'propertyNames',
  'then',
  'unevaluatedItems',
  'unevaluatedProperties',
  'uniqueItems',
]

/**
 * OpenAI's JSON Schema format for a send's structured output, for both APIs.
 *
 * Strict mode (`strict: true`, constrained decoding) is used only when the schema qualifies
 * without changing what it accepts: the root is an object, every property of every object is
 * `required` (optional fields written as nullable ones), no object allows extra properties, every
 * part has a type (or `anyOf`, `enum`, `const`, `$ref`), and no keyword outside strict mode's
 * subset appears (`allOf`, `oneOf`, `not`, `patternProperties`, `uniqueItems`, tuples …). The
 * schema then goes out with `additionalProperties: false` on every object, as strict mode demands.
 * Any other schema goes out unchanged with `strict: false`: OpenAI follows it on a best-effort
 * basis, and the kernel validates the reply either way. The schema is never rewritten to qualify
 * (turning optional fields into nullable required ones would change the values the caller's
 * schema accepts).
 */
export function toOpenAIJsonSchemaFormat(
  output: NonNullable<AdapterStreamOptions['output']>,
): OpenAIJsonSchemaFormat {
  const strict = strictSchema(output.schema)
  return strict === undefined
    ? { name: output.name, schema: output.schema, strict: false }
    : { name: output.name, schema: strict, strict: true }
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The strict-mode copy of `schema` (objects closed), or `undefined` when it does not qualify. */
function strictSchema(schema: Json): Json | undefined {
  if (schema.type !== 'object' || schema.anyOf !== undefined) return undefined
  const closed = closeStrict(schema)
  return isObject(closed) ? closed : undefined
}

/** `undefined` marks a part strict mode cannot take as it is. */
function closeStrict(node: unknown): unknown {
  if (!isObject(node)) return undefined
  if (STRICT_UNSUPPORTED_KEYWORDS.some((keyword) => node[keyword] !== undefined)) return undefined
  // Strict mode constrains every value: a part that allows any value has no strict form.
  if (['type', 'anyOf', '$ref', 'enum', 'const'].every((keyword) => node[keyword] === undefined))
    return undefined
  const copy: Json = { ...node }
  for (const keyword of ['$defs', 'definitions', 'properties'] as const) {
    const map = node[keyword]
    if (map === undefined) continue
    if (!isObject(map)) return undefined
    const entries: Array<[string, unknown]> = []
    for (const [name, child] of Object.entries(map)) {
      const strict = closeStrict(child)
      if (strict === undefined) return undefined
      entries.push([name, strict])
    }
    copy[keyword] = Object.fromEntries(entries)
  }
  if (node.items !== undefined) {
    const items = closeStrict(node.items)
    if (items === undefined) return undefined
    copy.items = items
  }
  if (node.anyOf !== undefined) {
    if (!Array.isArray(node.anyOf)) return undefined
    const branches = node.anyOf.map(closeStrict)
    if (branches.includes(undefined)) return undefined
    copy.anyOf = branches
  }
  const types = ([] as unknown[]).concat(node.type)
  if (types.includes('array') && node.items === undefined) return undefined
  if (types.includes('object') || node.properties !== undefined) {
    if (node.additionalProperties !== undefined && node.additionalProperties !== false) return undefined
    const required = Array.isArray(node.required) ? node.required : []
    if (Object.keys((node.properties ?? {}) as Json).some((name) => !required.includes(name)))
      return undefined
    copy.additionalProperties = false
  }
  return copy
}
