/** Whether two JSON values are structurally equal (object key order does not matter). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const other = b as unknown[]
    return a.length === other.length && a.every((value, index) => jsonEqual(value, other[index]))
  }
  const left = Object.entries(a).filter(([, value]) => value !== undefined)
  const right = b as Record<string, unknown>
  const rightCount = Object.values(right).filter((value) => value !== undefined).length
  return left.length === rightCount && left.every(([key, value]) => jsonEqual(value, right[key]))
}
