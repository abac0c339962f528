import { ValidationError } from '@agentx/core'

/**
 * PostgreSQL `text` and `jsonb` cannot hold U+0000, and `jsonb` rejects unpaired UTF-16 surrogates
 * (the driver would also turn them into U+FFFD on the way to UTF-8). Every string this package
 * writes — columns, JSON values and JSON keys — is therefore escaped with U+0010 (DLE, "data link
 * escape") as the escape character:
 *
 * - U+0010 → U+0010 U+0010
 * - U+0000 → U+0010 `0`
 * - an unpaired surrogate → U+0010 `u` and its four lowercase hex digits
 *
 * Any other string is stored unchanged, so ordinary text stays readable and queryable in SQL. The
 * encoding is reversible and injective: two different strings never encode to the same text, so
 * ids and other key columns stay exact.
 */
const ESCAPE = '\u0010'

// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 and U+0010 are exactly what is encoded.
const NEEDS_ENCODING = /[\u0000\u0010\uD800-\uDFFF]/
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 and U+0010 are exactly what is encoded.
const ENCODED_UNITS = /[\u0000\u0010]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 and U+0010 are exactly what is encoded.
const ESCAPE_SEQUENCES = /\u0010(?:(\u0010)|(0)|u([0-9a-f]{4}))/g
/** What `JSON.stringify` writes for U+0000, U+0010 and surrogates (it escapes unpaired ones). */
const JSON_NEEDS_ENCODING = /\\u(?:0000|0010|d[89a-f])/

/** Encodes `text` for a PostgreSQL text value (see the module comment). */
export function encodeText(text: string): string {
  if (!NEEDS_ENCODING.test(text)) return text
  return text.replace(ENCODED_UNITS, (unit) => {
    if (unit === '\u0000') return `${ESCAPE}0`
    if (unit === ESCAPE) return ESCAPE + ESCAPE
    return `${ESCAPE}u${unit.charCodeAt(0).toString(16)}`
  })
}

/** Reverses {@link encodeText}. */
export function decodeText(text: string): string {
  if (!text.includes(ESCAPE)) return text
  return text.replace(
    ESCAPE_SEQUENCES,
    (_match, doubled: string | undefined, nul: string | undefined, hex) =>
      doubled !== undefined
        ? ESCAPE
        : nul !== undefined
          ? '\u0000'
          : String.fromCharCode(Number.parseInt(hex, 16)),
  )
}

/**
 * The JSON text of `value` for a `jsonb` column, with every string and key encoded by
 * {@link encodeText}. `value` must be a JSON copy (from `cloneJson` / `validateMessage`).
 */
export function encodeJson(value: unknown): string {
  const json = JSON.stringify(value)
  // Fast path: most values have no character that needs encoding. A false positive (an escaped
  // backslash followed by "u0000" in the text) only costs the slow path.
  if (!JSON_NEEDS_ENCODING.test(json)) return json
  return JSON.stringify(mapStrings(value, encodeText))
}

/** Parses the text of a `jsonb` column written by {@link encodeJson}. */
export function decodeJson(json: string): unknown {
  const value: unknown = JSON.parse(json)
  // PostgreSQL prints U+0010 as \u0010; without one there is nothing to decode.
  return json.includes('\\u0010') ? mapStrings(value, decodeText) : value
}

/** A copy of a JSON value with `map` applied to every string and object key. */
function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === 'string') return map(value)
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map))
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) {
    // defineProperty: a key such as `__proto__` stays plain data.
    Object.defineProperty(out, map(key), {
      value: mapStrings((value as Record<string, unknown>)[key], map),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return out
}

/**
 * A key column value (an id, a user id, an app name) as stored: a string, encoded. Encoding is
 * injective, so two different ids never collapse into one.
 */
export function keyText(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new ValidationError(`${what} must be a string.`)
  return encodeText(value)
}

/** A required text field as stored. */
export function fieldText(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new ValidationError(`${what} must be a string.`)
  return encodeText(value)
}

/** The sort key of an id: its UTF-16 code units, big-endian, so `bytea` order is JavaScript's string order. */
export function idOrder(id: string): Buffer {
  return Buffer.from(id, 'utf16le').swap16()
}

/**
 * Collects the properties of one object that no column of its row holds (fields a newer
 * `@agentx/core` may add); they are stored in the row's `extra` jsonb column and laid back over
 * the columns when the row is read, so nothing is dropped.
 */
export function extraFields(source: object, known: ReadonlySet<string>): string | null {
  let fields: Record<string, unknown> | undefined
  for (const key of Object.keys(source)) {
    if (known.has(key)) continue
    fields ??= {}
    Object.defineProperty(fields, key, {
      value: (source as Record<string, unknown>)[key],
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return fields === undefined ? null : encodeJson(fields)
}

/** Lays the decoded `extra` column of a row over the object built from its columns. */
export function applyExtra<T extends object>(target: T, extra: string | null): T {
  if (extra === null) return target
  const fields = decodeJson(extra) as Record<string, unknown>
  for (const key of Object.keys(fields)) {
    Object.defineProperty(target, key, {
      value: fields[key],
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return target
}
