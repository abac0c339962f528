/** The JSON Schema type names. */
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'])
const SCHEMA_KEYS = [
  'items',
  'additionalProperties',
  'not',
  'contains',
  'propertyNames',
  'if',
  'then',
  'else',
]
const SCHEMA_LIST_KEYS = ['prefixItems', 'allOf', 'anyOf', 'oneOf']
const SCHEMA_MAP_KEYS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']
const COUNT_KEYS = ['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties']
const NUMBER_KEYS = ['minimum', 'maximum']
/** Deeper than this a schema is not looked at (the check itself is bounded too). */
const MAX_DEPTH = 64

/**
 * What is wrong with the shape of a JSON Schema object, or `undefined`: the keywords the kernel and
 * the providers read must have their types (`type` a known type name, `required` a list of names,
 * `properties` a map of schemas, bounds numbers, `pattern` a regular expression …), so that a typo
 * is refused before anything is stored or sent instead of failing every reply (`type: 'bogus'`)
 * or checking nothing (`required: 'x'`). Unknown keywords are left alone. `at` names the place.
 * Used for a send's `output` schema, which the application writes; a tool's `inputSchema` may come
 * from elsewhere (an MCP server's, in an older draft) and is taken as given.
 */
export function schemaShapeProblem(schema: unknown, at: string, depth = 0): string | undefined {
  if (typeof schema === 'boolean') return undefined
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    return `${at} must be a JSON Schema (an object or a boolean).`
  }
  if (depth > MAX_DEPTH) return undefined
  const value = schema as Record<string, unknown>
  const own = (key: string): unknown => (Object.hasOwn(value, key) ? value[key] : undefined)
  const type = own('type')
  if (type !== undefined) {
    const names = Array.isArray(type) ? type : [type]
    if (names.length === 0 || !names.every((name) => typeof name === 'string' && TYPES.has(name))) {
      return `${at}.type must be one of ${[...TYPES].join(', ')} (or a list of them), got ${JSON.stringify(type)}.`
    }
  }
  const required = own('required')
  if (
    required !== undefined &&
    (!Array.isArray(required) || !required.every((key) => typeof key === 'string'))
  ) {
    return `${at}.required must be a list of property names.`
  }
  const options = own('enum')
  if (options !== undefined && !Array.isArray(options)) return `${at}.enum must be a list of values.`
  for (const key of COUNT_KEYS) {
    const count = own(key)
    if (count !== undefined && !(Number.isInteger(count) && (count as number) >= 0)) {
      return `${at}.${key} must be a non-negative integer.`
    }
  }
  for (const key of NUMBER_KEYS) {
    const bound = own(key)
    if (bound !== undefined && !Number.isFinite(bound)) return `${at}.${key} must be a number.`
  }
  for (const key of ['exclusiveMinimum', 'exclusiveMaximum']) {
    const bound = own(key)
    // A number (2019 and later) or a boolean (draft 4).
    if (bound !== undefined && !Number.isFinite(bound) && typeof bound !== 'boolean') {
      return `${at}.${key} must be a number.`
    }
  }
  const step = own('multipleOf')
  if (step !== undefined && !(Number.isFinite(step) && (step as number) > 0)) {
    return `${at}.multipleOf must be a number above 0.`
  }
  for (const key of ['pattern', 'format', '$ref', '$anchor', 'description', 'title']) {
    const text = own(key)
    if (text !== undefined && typeof text !== 'string') return `${at}.${key} must be a string.`
  }
  const pattern = own('pattern')
  if (typeof pattern === 'string' && compiles(pattern) === false) {
    return `${at}.pattern is not a valid regular expression: ${JSON.stringify(pattern)}.`
  }
  const unique = own('uniqueItems')
  if (unique !== undefined && typeof unique !== 'boolean') return `${at}.uniqueItems must be a boolean.`
  for (const key of SCHEMA_KEYS) {
    const sub = own(key)
    if (sub === undefined) continue
    const problem = schemaShapeProblem(sub, `${at}.${key}`, depth + 1)
    if (problem !== undefined) return problem
  }
  for (const key of SCHEMA_LIST_KEYS) {
    const list = own(key)
    if (list === undefined) continue
    if (!Array.isArray(list)) return `${at}.${key} must be a list of schemas.`
    for (let index = 0; index < list.length; index++) {
      const problem = schemaShapeProblem(list[index], `${at}.${key}[${index}]`, depth + 1)
      if (problem !== undefined) return problem
    }
  }
  for (const key of SCHEMA_MAP_KEYS) {
    const map = own(key)
    if (map === undefined) continue
    if (typeof map !== 'object' || map === null || Array.isArray(map))
      return `${at}.${key} must be an object of schemas.`
    for (const [name, sub] of Object.entries(map)) {
      const problem = schemaShapeProblem(sub, `${at}.${key}.${name}`, depth + 1)
      if (problem !== undefined) return problem
    }
    if (key === 'patternProperties') {
      const bad = Object.keys(map).find((name) => compiles(name) === false)
      if (bad !== undefined)
        return `${at}.patternProperties has a key that is not a regular expression: ${JSON.stringify(bad)}.`
    }
  }
  return undefined
}

/** Whether `pattern` compiles as a JavaScript regular expression (with the `u` flag, or without). */
function compiles(pattern: string): boolean {
  for (const flags of ['u', '']) {
    try {
      new RegExp(pattern, flags)
      return true
    } catch {}
  }
  return false
}
