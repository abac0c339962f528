import { ValidationError } from '@agentx/core'

/** `String.prototype.isWellFormed` (Node ≥ 20; newer than the ES2023 lib this package targets). */
type WellFormedString = string & { isWellFormed(): boolean }

/** Whether `text` has an unpaired UTF-16 surrogate, which UTF-8 text in SQLite cannot hold. */
export function hasLoneSurrogate(text: string): boolean {
  return !(text as WellFormedString).isWellFormed()
}

/**
 * Collects the fields of one row that its columns cannot hold exactly. They are stored as JSON in
 * the row's `extra` column (JSON escapes unpaired surrogates as `\udXXX`, so they round-trip) and
 * laid over the columns when the row is read.
 */
export class ExtraFields {
  readonly #what: string
  #fields: Record<string, unknown> | undefined

  constructor(what: string) {
    this.#what = what
  }

  /** Adds a field; `__proto__` and other hostile keys stay plain data. */
  add(key: string, value: unknown): void {
    this.#fields ??= {}
    Object.defineProperty(this.#fields, key, { value, enumerable: true, writable: true, configurable: true })
  }

  /**
   * The column value of a text field: the text itself, or, when it has unpaired surrogates, a
   * readable well-formed copy (U+FFFD in their place) while the exact text goes to `extra`.
   */
  text(key: string, value: unknown): string {
    if (typeof value !== 'string') throw new ValidationError(`${this.#what}.${key} must be a string.`)
    if (!hasLoneSurrogate(value)) return value
    this.add(key, value)
    return value.replace(/\p{Cs}/gu, '\uFFFD')
  }

  /** The JSON text for the `extra` column, or `null` when every field fit its column. */
  toJson(): string | null {
    return this.#fields === undefined ? null : JSON.stringify(this.#fields)
  }
}

/**
 * A key column value (an id, a user id, an app name): it is compared and indexed, so it is stored
 * exactly or rejected with `VALIDATION` — two different ids must never collapse into one.
 */
export function keyText(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new ValidationError(`${what} must be a string.`)
  if (hasLoneSurrogate(value)) {
    throw new ValidationError(
      `${what} contains an unpaired UTF-16 surrogate, which SQLite cannot store as text.`,
    )
  }
  return value
}

/** Lays the `extra` column of a row over the object built from its columns. */
export function applyExtra<T extends object>(target: T, extra: string | null): T {
  if (extra === null) return target
  const fields = JSON.parse(extra) as Record<string, unknown>
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
