import { ValidationError } from '../errors/validation-error.js'

/**
 * A deep copy of `value` with JSON semantics, for persisters that keep or return objects.
 *
 * `undefined` properties are left out, `-0` becomes `0`, keys such as `__proto__` stay plain data.
 * A cycle, a function, a symbol, a bigint or a non-finite number rejects with {@link ValidationError}
 * (rule P-ERR-004) instead of being changed silently.
 */
export function cloneJson<T>(value: T, path = '$'): T {
  return copy(value, path, new Set()) as T
}

function copy(value: unknown, path: string, seen: Set<object>): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new ValidationError(`${path} is ${value}, which JSON cannot hold.`)
    return value === 0 ? 0 : value
  }
  if (typeof value !== 'object') {
    throw new ValidationError(`${path} is a ${typeof value}, which JSON cannot hold.`)
  }
  if (seen.has(value)) throw new ValidationError(`${path} refers back to itself (a cycle).`)
  seen.add(value)
  try {
    if (Array.isArray(value)) {
      return value.map((item, index) => (item === undefined ? null : copy(item, `${path}[${index}]`, seen)))
    }
    if (value instanceof Date) return value.toISOString()
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[key]
      if (item === undefined) continue
      Object.defineProperty(out, key, {
        value: copy(item, `${path}.${key}`, seen),
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
