import type { StandardSchemaV1 } from '../contracts/standard-schema.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import { cloneJson } from '../persistence/json-copy.js'

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

/**
 * The outcome of checking a value against a schema. A failure has `schemaFailed` when the schema
 * itself failed rather than the value (a Standard Schema whose `validate` threw — its error is
 * `cause` — or returned no result).
 */
export type SchemaCheck =
  | { ok: true; value: unknown }
  | { ok: false; issues: string[]; schemaFailed?: true; cause?: unknown }

/**
 * Checks `value` against `schema`: a Standard Schema validates it (and may transform it); a JSON
 * Schema object is checked for the structural subset every provider honours — `type`, `enum`,
 * `const`, `required`, `properties`, `additionalProperties: false`, `items`, `minItems`/`maxItems`,
 * `minLength`/`maxLength`, `minimum`/`maximum`. Other keywords are not checked. Never throws.
 *
 * The value is first copied as JSON ({@link cloneJson}); the copy is what a Standard Schema
 * validates and what a JSON Schema check returns, so the caller (a tool's `execute`,
 * `SendResult.output`) gets a fresh, mutable object of its own. Keywords and keys count only as
 * own properties: `required: ['toString']` is not met by `{}`. An own `__proto__` key is refused
 * anywhere in the value: it is harmless as the copy's own data, but application code that
 * assigns or merges the value (`Object.assign`, a deep merge) would replace a prototype with it,
 * and no tool input or structured output needs that key.
 */
export async function checkAgainst(schema: SchemaLike, value: unknown): Promise<SchemaCheck> {
  let copy: unknown
  try {
    copy = cloneJson(value, '$', { refuseProtoKeys: true })
  } catch (error) {
    return { ok: false, issues: [messageOf(error)] }
  }
  if (isStandardSchema(schema)) return checkStandard(schema, copy)
  const issues: string[] = []
  checkJson(schema, copy, '$', issues)
  return issues.length === 0 ? { ok: true, value: copy } : { ok: false, issues }
}

/**
 * Runs a Standard Schema's `validate`. One that throws, or returns something other than a result
 * (`{ value }` or `{ issues }`), is a failed check naming the schema's vendor — never a crash of
 * the send, never an `undefined` value taken as valid.
 */
async function checkStandard(schema: StandardSchemaV1, value: unknown): Promise<SchemaCheck> {
  const vendor = String(schema['~standard'].vendor)
  let result: unknown
  try {
    result = await schema['~standard'].validate(value)
  } catch (cause) {
    const issue = `the ${vendor} schema's validate() threw: ${messageOf(cause)}`
    return { ok: false, issues: [issue], schemaFailed: true, cause }
  }
  const notAResult = {
    ok: false as const,
    schemaFailed: true as const,
    issues: [
      `the ${vendor} schema's validate() returned ${describeResult(result)}, not a Standard Schema result ({ value } or { issues })`,
    ],
  }
  if (typeof result !== 'object' || result === null) return notAResult
  const issues = (result as { issues?: unknown }).issues
  if (issues !== undefined) {
    if (!Array.isArray(issues)) return notAResult
    return {
      ok: false,
      issues: issues.length > 0 ? issues.map(describeIssue) : [`the ${vendor} schema refused the value`],
    }
  }
  if (!('value' in result)) return notAResult
  return { ok: true, value: (result as { value: unknown }).value }
}

function describeResult(result: unknown): string {
  if (result === null || Array.isArray(result)) return result === null ? 'null' : 'an array'
  if (typeof result === 'object') return 'an object'
  return typeof result === 'number' || typeof result === 'boolean' ? String(result) : typeof result
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message || error.name : String(error)
}

function describeIssue(issue: unknown): string {
  const { message, path } = (typeof issue === 'object' && issue !== null ? issue : {}) as {
    message?: unknown
    path?: unknown
  }
  const text = typeof message === 'string' && message !== '' ? message : 'invalid'
  const segments = (Array.isArray(path) ? path : []).map((segment: unknown) =>
    String(typeof segment === 'object' && segment !== null ? (segment as { key?: unknown }).key : segment),
  )
  return segments.length === 0 ? text : `${segments.join('.')}: ${text}`
}

function typeOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

/** `object[key]` when `key` is an own property of `object`; inherited members never count. */
function own(object: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined
}

function isSchemaObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function checkJson(schema: Record<string, unknown>, value: unknown, at: string, issues: string[]): void {
  const actual = typeOf(value)
  const type = own(schema, 'type')
  const types = type === undefined ? undefined : ([] as unknown[]).concat(type)
  if (
    types !== undefined &&
    !types.some((option) => option === actual || (option === 'number' && actual === 'integer'))
  ) {
    issues.push(`${at}: expected ${types.join(' or ')}, got ${actual}`)
    return
  }
  const options = own(schema, 'enum')
  if (Array.isArray(options) && !options.some((option) => JSON.stringify(option) === JSON.stringify(value))) {
    issues.push(`${at}: must be one of ${options.map((option) => JSON.stringify(option)).join(', ')}`)
  }
  if (Object.hasOwn(schema, 'const') && JSON.stringify(schema.const) !== JSON.stringify(value)) {
    issues.push(`${at}: must be ${JSON.stringify(schema.const)}`)
  }
  const limit = (key: string): number | undefined => {
    const bound = own(schema, key)
    return typeof bound === 'number' ? bound : undefined
  }
  if (typeof value === 'string') {
    if (value.length < (limit('minLength') ?? 0)) issues.push(`${at}: too short`)
    if (value.length > (limit('maxLength') ?? Number.POSITIVE_INFINITY)) issues.push(`${at}: too long`)
  }
  if (typeof value === 'number') {
    const minimum = limit('minimum')
    const maximum = limit('maximum')
    if (minimum !== undefined && value < minimum) issues.push(`${at}: below ${minimum}`)
    if (maximum !== undefined && value > maximum) issues.push(`${at}: above ${maximum}`)
  }
  if (Array.isArray(value)) {
    if (value.length < (limit('minItems') ?? 0)) issues.push(`${at}: too few items`)
    if (value.length > (limit('maxItems') ?? Number.POSITIVE_INFINITY)) issues.push(`${at}: too many items`)
    const items = own(schema, 'items')
    if (isSchemaObject(items)) {
      value.forEach((item, index) => {
        checkJson(items, item, `${at}[${index}]`, issues)
      })
    }
  }
  if (actual === 'object') {
    const object = value as Record<string, unknown>
    const declared = own(schema, 'properties')
    const properties = isSchemaObject(declared) ? declared : {}
    const required = own(schema, 'required')
    for (const key of Array.isArray(required) ? required : []) {
      if (typeof key === 'string' && !Object.hasOwn(object, key)) issues.push(`${at}.${key}: required`)
    }
    for (const key of Object.keys(object)) {
      const property = own(properties, key)
      if (isSchemaObject(property)) checkJson(property, object[key], `${at}.${key}`, issues)
      else if (own(schema, 'additionalProperties') === false) issues.push(`${at}.${key}: not allowed`)
    }
  }
}
