import type { StandardSchemaV1 } from '../contracts/standard-schema.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import { cloneJson } from '../persistence/json-copy.js'
import { thrownText } from '../util/thrown-text.js'

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
 * Schema object is checked for `type`, `enum`, `const`, `required`, `properties`,
 * `additionalProperties` (`false` or a schema), `minProperties`/`maxProperties`, `items`,
 * `prefixItems`, `minItems`/`maxItems`, `uniqueItems`, `minLength`/`maxLength`, `pattern`,
 * `format` (`date-time`, `date`, `time`, `email`, `uuid`, `uri`, `ipv4`, `ipv6`; others are not
 * checked), `minimum`/`maximum`, `exclusiveMinimum`/`exclusiveMaximum`, `multipleOf`, `allOf`,
 * `anyOf`, `oneOf`, `not`, `patternProperties`, boolean subschemas, and `$ref` to a place in the
 * same schema (`#/$defs/…`, `#anchor`; another document is not checked). Other keywords are not
 * checked. A check that would visit more than 100,000 schema nodes fails ("too complex"). Never
 * throws.
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
    return { ok: false, issues: [thrownText(error)] }
  }
  if (isStandardSchema(schema)) return checkStandard(schema, copy)
  const issues: string[] = []
  const budget = { steps: 0 }
  checkJson(schema, copy, '$', issues, { root: schema, refs: 0, budget })
  if (budget.steps > MAX_STEPS && !issues.some((issue) => issue.endsWith('too complex to check'))) {
    issues.unshift('$: the schema is too complex to check')
  }
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
    const issue = `the ${vendor} schema's validate() threw: ${thrownText(cause)}`
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

/** The whole schema (`$ref` targets) and how many `$ref`s were followed without going deeper into the value. */
interface JsonCheck {
  root: Record<string, unknown>
  refs: number
  /** Schema nodes visited so far in this check, shared by every branch. */
  budget: { steps: number }
}

/** At most this many schema nodes per check: `anyOf` over recursive `$ref`s must not hang a send. */
const MAX_STEPS = 100_000

/** At most this many `$ref`s in a row at one place of the value (`{ $ref: '#' }` at the root never ends). */
const MAX_REFS_IN_A_ROW = 32

function checkJson(
  schema: Record<string, unknown>,
  value: unknown,
  at: string,
  issues: string[],
  check: JsonCheck,
): void {
  if (++check.budget.steps > MAX_STEPS) {
    // Every branch checked past the budget fails, so no `anyOf` passes by running out of it.
    issues.push(`${at}: the schema is too complex to check`)
    return
  }
  const reference = own(schema, '$ref')
  if (typeof reference === 'string') {
    // A reference this check cannot resolve (another document, an unknown name) is not checked.
    const target = resolveReference(check.root, reference)
    if (target !== undefined && check.refs >= MAX_REFS_IN_A_ROW)
      issues.push(`${at}: the schema's $ref '${reference}' never ends`)
    else if (target !== undefined) checkSub(target, value, at, issues, { ...check, refs: check.refs + 1 })
  }
  const deeper: JsonCheck = { ...check, refs: 0 }
  const passes = (sub: unknown): boolean => {
    const found: string[] = []
    checkSub(sub, value, at, found, check)
    return found.length === 0
  }
  const allOf = own(schema, 'allOf')
  if (Array.isArray(allOf)) for (const sub of allOf) checkSub(sub, value, at, issues, check)
  const anyOf = own(schema, 'anyOf')
  if (Array.isArray(anyOf) && anyOf.length > 0 && !anyOf.some(passes))
    issues.push(`${at}: matches none of anyOf`)
  const oneOf = own(schema, 'oneOf')
  if (Array.isArray(oneOf) && oneOf.length > 0) {
    const matched = oneOf.filter(passes).length
    if (matched !== 1) issues.push(`${at}: matches ${matched} of oneOf, not exactly one`)
  }
  const not = own(schema, 'not')
  if ((isSchemaObject(not) || typeof not === 'boolean') && passes(not))
    issues.push(`${at}: matches the schema of not`)
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
  if (Array.isArray(options) && !options.some((option) => canonical(option) === canonical(value))) {
    issues.push(`${at}: must be one of ${options.map((option) => JSON.stringify(option)).join(', ')}`)
  }
  if (Object.hasOwn(schema, 'const') && canonical(schema.const) !== canonical(value)) {
    issues.push(`${at}: must be ${JSON.stringify(schema.const)}`)
  }
  const limit = (key: string): number | undefined => {
    const bound = own(schema, key)
    return typeof bound === 'number' ? bound : undefined
  }
  if (typeof value === 'string') {
    // Lengths count code points, as JSON Schema does.
    const length = [...value].length
    if (length < (limit('minLength') ?? 0)) issues.push(`${at}: too short`)
    if (length > (limit('maxLength') ?? Number.POSITIVE_INFINITY)) issues.push(`${at}: too long`)
    const pattern = own(schema, 'pattern')
    if (typeof pattern === 'string') {
      const expression = compilePattern(pattern)
      if (expression === undefined)
        issues.push(`${at}: the schema's pattern '${pattern}' is not a valid expression`)
      else if (!expression.test(value)) issues.push(`${at}: does not match ${pattern}`)
    }
    const format = own(schema, 'format')
    if (typeof format === 'string' && Object.hasOwn(FORMATS, format) && !FORMATS[format]!(value)) {
      issues.push(`${at}: not a valid ${format}`)
    }
  }
  if (typeof value === 'number') {
    const minimum = limit('minimum')
    const maximum = limit('maximum')
    const above = limit('exclusiveMinimum')
    const below = limit('exclusiveMaximum')
    const step = limit('multipleOf')
    if (minimum !== undefined && value < minimum) issues.push(`${at}: below ${minimum}`)
    if (maximum !== undefined && value > maximum) issues.push(`${at}: above ${maximum}`)
    if (above !== undefined && value <= above) issues.push(`${at}: not above ${above}`)
    if (below !== undefined && value >= below) issues.push(`${at}: not below ${below}`)
    if (step !== undefined && step > 0 && !isMultipleOf(value, step))
      issues.push(`${at}: not a multiple of ${step}`)
  }
  if (Array.isArray(value)) {
    if (value.length < (limit('minItems') ?? 0)) issues.push(`${at}: too few items`)
    if (value.length > (limit('maxItems') ?? Number.POSITIVE_INFINITY)) issues.push(`${at}: too many items`)
    const prefix = own(schema, 'prefixItems')
    const leading = Array.isArray(prefix) ? prefix : []
    const items = own(schema, 'items')
    value.forEach((item, index) => {
      checkSub(index < leading.length ? leading[index] : items, item, `${at}[${index}]`, issues, deeper)
    })
    if (own(schema, 'uniqueItems') === true) {
      const seen = new Set(value.map((item) => canonical(item)))
      if (seen.size !== value.length) issues.push(`${at}: items are not unique`)
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
    const keys = Object.keys(object)
    if (keys.length < (limit('minProperties') ?? 0)) issues.push(`${at}: too few properties`)
    if (keys.length > (limit('maxProperties') ?? Number.POSITIVE_INFINITY))
      issues.push(`${at}: too many properties`)
    const additional = own(schema, 'additionalProperties')
    const patternSchemas = own(schema, 'patternProperties')
    const patterned = isSchemaObject(patternSchemas) ? Object.entries(patternSchemas) : []
    for (const key of keys) {
      let matched = Object.hasOwn(properties, key)
      if (matched) checkSub(properties[key], object[key], `${at}.${key}`, issues, deeper)
      for (const [pattern, sub] of patterned) {
        if (compilePattern(pattern)?.test(key) !== true) continue
        matched = true
        checkSub(sub, object[key], `${at}.${key}`, issues, deeper)
      }
      if (!matched && additional !== undefined)
        checkSub(additional, object[key], `${at}.${key}`, issues, deeper)
    }
  }
}

/** Checks `value` against a subschema: an object, or `true` (anything) / `false` (nothing). */
function checkSub(sub: unknown, value: unknown, at: string, issues: string[], check: JsonCheck): void {
  if (sub === false) issues.push(`${at}: not allowed`)
  else if (isSchemaObject(sub)) checkJson(sub, value, at, issues, check)
}

/**
 * The subschema a local `$ref` points at: `#`, a JSON Pointer into the schema (`#/$defs/name`), or
 * a `$anchor` (`#name`). `undefined` when it names nothing here.
 */
function resolveReference(root: Record<string, unknown>, reference: string): unknown {
  if (!reference.startsWith('#')) return undefined
  const fragment = reference.slice(1)
  if (fragment === '') return root
  if (!fragment.startsWith('/')) return findAnchor(root, decodeURIComponent(fragment), 0)
  let target: unknown = root
  for (const raw of fragment.slice(1).split('/')) {
    const key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~')
    if (typeof target !== 'object' || target === null) return undefined
    target = Object.hasOwn(target, key) ? (target as Record<string, unknown>)[key] : undefined
  }
  return isSchemaObject(target) || typeof target === 'boolean' ? target : undefined
}

/** The subschema whose `$anchor` is `name`, searched depth-first (bounded). */
function findAnchor(node: unknown, name: string, depth: number): Record<string, unknown> | undefined {
  if (depth > 64 || typeof node !== 'object' || node === null) return undefined
  if (isSchemaObject(node) && own(node, '$anchor') === name) return node
  for (const child of Object.values(node)) {
    const found = findAnchor(child, name, depth + 1)
    if (found !== undefined) return found
  }
  return undefined
}

const patterns = new Map<string, RegExp | undefined>()

function compilePattern(pattern: string): RegExp | undefined {
  if (!patterns.has(pattern)) {
    let expression: RegExp | undefined
    // ECMA-262 with `u` as JSON Schema says; a pattern only the looser syntax reads, without it.
    for (const flags of ['u', '']) {
      try {
        expression = new RegExp(pattern, flags)
        break
      } catch {
        expression = undefined
      }
    }
    if (patterns.size > 256) patterns.clear()
    patterns.set(pattern, expression)
  }
  return patterns.get(pattern)
}

/**
 * Whether `value` is an integer multiple of `step`, exactly for decimal numbers (`0.3` of `0.1`):
 * both are scaled by their decimal places to integers; past 2^53 the float quotient decides.
 */
function isMultipleOf(value: number, step: number): boolean {
  const places = Math.max(decimalPlaces(value), decimalPlaces(step))
  const scale = 10 ** places
  const scaledValue = Math.round(value * scale)
  const scaledStep = Math.round(step * scale)
  if (
    places <= 20 &&
    Number.isSafeInteger(scaledValue) &&
    Number.isSafeInteger(scaledStep) &&
    scaledStep !== 0
  ) {
    return scaledValue % scaledStep === 0
  }
  return Number.isInteger(value / step)
}

/** The decimal places of a number as JavaScript prints it (`1e-10` has 10). */
function decimalPlaces(value: number): number {
  const [mantissa = '', exponent = '0'] = String(value).toLowerCase().split('e')
  const fraction = mantissa.split('.')[1]?.length ?? 0
  return Math.max(0, fraction - Number(exponent))
}

/** A JSON text of `value` with object keys sorted, for `uniqueItems`. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (isSchemaObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
      .join(',')}}`
  }
  return JSON.stringify(value)
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const TIME = /^([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(Z|[+-]([01]\d|2[0-3]):?[0-5]\d)?$/i

function isDate(text: string): boolean {
  const match = DATE.exec(text)
  if (match === null) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate()
  return month >= 1 && month <= 12 && day >= 1 && day <= days
}

/**
 * The `format`s checked (RFC 3339 dates and times, and the common text formats); others pass.
 * Lenient where models commonly are (a time without its offset, as JSON Schema validators accept by
 * default): the check refuses what is clearly not the format, never a usable value.
 */
const FORMATS: Record<string, (text: string) => boolean> = {
  date: isDate,
  time: (text) => TIME.test(text),
  'date-time': (text) => {
    const split = text.search(/[Tt ]/)
    return split === 10 && isDate(text.slice(0, 10)) && TIME.test(text.slice(11))
  },
  email: (text) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(text),
  uuid: (text) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text),
  uri: (text) => /^[a-z][a-z0-9+.-]*:[^\s]*$/i.test(text) && URL.canParse(text),
  ipv4: (text) => /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/.test(text),
  ipv6: (text) => /^[0-9a-f:.]+$/i.test(text) && text.includes(':') && URL.canParse(`http://[${text}]/`),
}
