import type { StandardIssue, StandardSchemaV1 } from '../contracts/standard-schema.js'
import { ConfigurationError } from '../errors/configuration-error.js'

/** A JSON Schema object, or a Standard Schema (zod 4, valibot, arktype …). */
export type SchemaLike = Record<string, unknown> | StandardSchemaV1

/** Whether `value` is a Standard Schema (has a `~standard` object with `validate`). */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  const standard = (value as { '~standard'?: { validate?: unknown } } | null)?.['~standard']
  return typeof standard === 'object' && standard !== null && typeof standard.validate === 'function'
}

const jsonSchemas = new WeakMap<object, Record<string, unknown>>()

/**
 * The JSON Schema of `schema`: itself for a JSON Schema object; for a Standard Schema, the one its
 * library derives through `~standard.jsonSchema` (draft 2020-12), computed once per schema.
 * `undefined` for a Standard Schema whose library has no such converter (valibot 1.x, say): it is
 * still accepted, validated by the kernel, and the provider is told less (see `send-profile.ts`).
 * A converter that fails is a {@link ConfigurationError}.
 */
export function toJsonSchema(schema: SchemaLike, what: string): Record<string, unknown> | undefined {
  if (!isStandardSchema(schema)) return schema
  const cached = jsonSchemas.get(schema)
  if (cached) return cached
  const converter = schema['~standard'].jsonSchema
  if (converter === undefined || typeof converter.input !== 'function') return undefined
  let derived: Record<string, unknown>
  try {
    derived = converter.input({ target: 'draft-2020-12' })
  } catch (cause) {
    throw new ConfigurationError(
      `${what}: the ${schema['~standard'].vendor} schema could not be turned into a JSON Schema.`,
      {
        cause,
      },
    )
  }
  const { $schema: _ignored, ...rest } = derived
  jsonSchemas.set(schema, rest)
  return rest
}

/** The outcome of checking a value against a schema. */
export type SchemaCheck = { ok: true; value: unknown } | { ok: false; issues: string[] }

/**
 * Checks `value` against `schema`: a Standard Schema validates it (and may transform it); a JSON
 * Schema object is checked for the structural subset every provider honours — `type`, `enum`,
 * `const`, `required`, `properties`, `additionalProperties: false`, `items`, `minItems`/`maxItems`,
 * `minLength`/`maxLength`, `minimum`/`maximum`. Other keywords are not checked.
 */
export async function checkAgainst(schema: SchemaLike, value: unknown): Promise<SchemaCheck> {
  if (isStandardSchema(schema)) {
    const result = await schema['~standard'].validate(value)
    if (result.issues === undefined) return { ok: true, value: result.value }
    return { ok: false, issues: result.issues.map(describeIssue) }
  }
  const issues: string[] = []
  checkJson(schema, value, '$', issues)
  return issues.length === 0 ? { ok: true, value } : { ok: false, issues }
}

function describeIssue(issue: StandardIssue): string {
  const path = (issue.path ?? []).map((segment) =>
    String(typeof segment === 'object' ? segment.key : segment),
  )
  return path.length === 0 ? issue.message : `${path.join('.')}: ${issue.message}`
}

function typeOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

function checkJson(schema: Record<string, unknown>, value: unknown, at: string, issues: string[]): void {
  const actual = typeOf(value)
  const types = schema.type === undefined ? undefined : ([] as unknown[]).concat(schema.type)
  if (
    types !== undefined &&
    !types.some((type) => type === actual || (type === 'number' && actual === 'integer'))
  ) {
    issues.push(`${at}: expected ${types.join(' or ')}, got ${actual}`)
    return
  }
  if (
    Array.isArray(schema.enum) &&
    !schema.enum.some((option) => JSON.stringify(option) === JSON.stringify(value))
  ) {
    issues.push(`${at}: must be one of ${schema.enum.map((option) => JSON.stringify(option)).join(', ')}`)
  }
  if ('const' in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) {
    issues.push(`${at}: must be ${JSON.stringify(schema.const)}`)
  }
  if (typeof value === 'string') {
    if (typeof schema.minLength === 'number' && value.length < schema.minLength)
      issues.push(`${at}: too short`)
    if (typeof schema.maxLength === 'number' && value.length > schema.maxLength)
      issues.push(`${at}: too long`)
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum)
      issues.push(`${at}: below ${schema.minimum}`)
    if (typeof schema.maximum === 'number' && value > schema.maximum)
      issues.push(`${at}: above ${schema.maximum}`)
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems)
      issues.push(`${at}: too few items`)
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems)
      issues.push(`${at}: too many items`)
    const items = schema.items
    if (typeof items === 'object' && items !== null && !Array.isArray(items)) {
      value.forEach((item, index) => {
        checkJson(items as Record<string, unknown>, item, `${at}[${index}]`, issues)
      })
    }
  }
  if (actual === 'object') {
    const object = value as Record<string, unknown>
    const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>
    for (const key of Array.isArray(schema.required) ? schema.required : []) {
      if (typeof key === 'string' && !(key in object)) issues.push(`${at}.${key}: required`)
    }
    for (const [key, item] of Object.entries(object)) {
      const property = properties[key]
      if (property !== undefined && typeof property === 'object')
        checkJson(property, item, `${at}.${key}`, issues)
      else if (schema.additionalProperties === false) issues.push(`${at}.${key}: not allowed`)
    }
  }
}
