import type { DecodedOutput } from './wire-dialect.js'

type Json = Record<string, unknown>

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Reads a JSON Schema format object as the protocols carry it — `{ schema, name?, strict? }`,
 * with `type: 'json_schema'` where the protocol tags it — into a {@link DecodedOutput}.
 * Anything else (absent, another format type, no schema object) is `undefined`.
 */
export function decodeJsonSchemaFormat(
  format: unknown,
  options: { tagged: boolean },
): DecodedOutput | undefined {
  if (!isObject(format) || !isObject(format.schema)) return undefined
  if (options.tagged && format.type !== 'json_schema') return undefined
  const output: DecodedOutput = { schema: format.schema }
  if (typeof format.name === 'string') output.name = format.name
  if (typeof format.strict === 'boolean') output.strict = format.strict
  return output
}

/** `body[first][second]`, when `body[first]` is an object. */
export function nested(body: Json, first: string, second: string): unknown {
  const parent = body[first]
  return isObject(parent) ? parent[second] : undefined
}
