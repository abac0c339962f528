import { ValidationError } from '../errors/validation-error.js'
import { thrownText } from '../util/thrown-text.js'

/** Options of {@link cloneJson}. */
export interface CopyJsonOptions {
  /**
   * Refuse an own `__proto__` key anywhere in the value. Default is `false` (it is copied as a
   * plain own data property).
   */
  refuseProtoKeys?: boolean
}

/**
 * A fresh, mutable deep copy of `value` as JSON would carry it, made of plain objects (prototype
 * `Object.prototype`), arrays and primitives — or a {@link ValidationError} naming the first part
 * that JSON cannot hold (rule P-ERR-004), instead of `JSON.stringify`'s silent changes. For
 * persisters that keep or return objects, and for what the kernel takes from application code.
 *
 * Like `JSON.stringify`: `toJSON()` is honoured (a `Date` becomes its ISO string), an `undefined`
 * property is left out, an `undefined` array item becomes `null`, `-0` becomes `0`. Refused: a
 * cycle, a function, a symbol, a bigint, `NaN`/`±Infinity`, `undefined` itself, and built-in
 * objects whose data JSON drops (`Map`, `Set`, `RegExp`, `Error`, `Promise`, typed arrays …: each
 * would be `{}`). Keys such as `__proto__` stay plain data.
 */
export function cloneJson<T>(value: T, path = '$', options: CopyJsonOptions = {}): T {
  try {
    return copy(value, '', path, new Set(), options.refuseProtoKeys === true) as T
  } catch (error) {
    if (error instanceof ValidationError) throw error
    // A getter or a toJSON() that throws, a revoked proxy …: the value cannot be read as JSON.
    throw new ValidationError(`${path} could not be read as JSON: ${thrownText(error)}`, { cause: error })
  }
}

function copy(value: unknown, key: string, path: string, seen: Set<object>, refuseProto: boolean): unknown {
  if (hasToJson(value)) value = value.toJSON(key)
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new ValidationError(`${path} is ${value}, which JSON cannot hold.`)
    return value === 0 ? 0 : value
  }
  if (typeof value !== 'object') {
    const what = value === undefined ? 'undefined' : `a ${typeof value}`
    throw new ValidationError(`${path} is ${what}, which JSON cannot hold.`)
  }
  if (seen.has(value))
    throw new ValidationError(`${path} refers back to itself (a cycle), which JSON cannot hold.`)
  seen.add(value)
  try {
    if (Array.isArray(value)) {
      const items: unknown[] = []
      for (let index = 0; index < value.length; index++) {
        const item: unknown = value[index]
        items.push(
          item === undefined ? null : copy(item, String(index), `${path}[${index}]`, seen, refuseProto),
        )
      }
      return items
    }
    // Class instances keep their own fields (as JSON.stringify does); built-ins such as a Map
    // would silently become `{}`.
    const tag = Object.prototype.toString.call(value).slice(8, -1)
    if (tag !== 'Object') throw new ValidationError(`${path} is a ${tag}, which JSON cannot hold.`)
    const out: Record<string, unknown> = {}
    for (const name of Object.keys(value)) {
      if (name === '__proto__' && refuseProto) {
        throw new ValidationError(
          `${path}.__proto__ is not allowed: assigned to an object, this key replaces its prototype.`,
        )
      }
      const item = (value as Record<string, unknown>)[name]
      if (item === undefined) continue
      // defineProperty, not assignment: a `__proto__` key stays plain data and never sets a prototype.
      Object.defineProperty(out, name, {
        value: copy(item, name, `${path}.${name}`, seen, refuseProto),
        enumerable: true,
        writable: true,
        configurable: true,
      })
    }
    return out
  } finally {
    seen.delete(value)
  }
}

function hasToJson(value: unknown): value is { toJSON(key: string): unknown } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { toJSON?: unknown }).toJSON === 'function'
  )
}
