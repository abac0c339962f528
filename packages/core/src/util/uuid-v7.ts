import { getRandomValues } from 'node:crypto'

let lastMs = 0
let sequence = 0

/** Random bytes drawn 4 KiB at a time: one system call per 256 ids, not one per id. */
const POOL = new Uint8Array(4096)
let poolOffset = POOL.length
/** `HEX[b]` is the byte `b` as two lowercase hex digits. */
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'))

/**
 * A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then random bits. Ids made in the same
 * millisecond carry an increasing 12-bit counter, so ids from one process sort in creation order
 * and B-tree inserts stay append-only.
 */
export function uuidv7(now: number = Date.now()): string {
  if (poolOffset === POOL.length) {
    getRandomValues(POOL)
    poolOffset = 0
  }
  const r = poolOffset
  poolOffset += 16
  if (now <= lastMs) {
    sequence += 1
    if (sequence > 0xfff) {
      lastMs += 1
      sequence = 0
    }
    now = lastMs
  } else {
    lastMs = now
    sequence = POOL[r + 6]! & 0x07 // start low so the counter has room to grow
  }
  const high = Math.floor(now / 0x100000000)
  const low = now >>> 0
  const h = HEX
  return (
    h[(high >>> 8) & 0xff]! +
    h[high & 0xff]! +
    h[(low >>> 24) & 0xff]! +
    h[(low >>> 16) & 0xff]! +
    '-' +
    h[(low >>> 8) & 0xff]! +
    h[low & 0xff]! +
    '-' +
    h[0x70 | ((sequence >>> 8) & 0x0f)]! +
    h[sequence & 0xff]! +
    '-' +
    h[0x80 | (POOL[r + 8]! & 0x3f)]! +
    h[POOL[r + 9]!]! +
    '-' +
    h[POOL[r + 10]!]! +
    h[POOL[r + 11]!]! +
    h[POOL[r + 12]!]! +
    h[POOL[r + 13]!]! +
    h[POOL[r + 14]!]! +
    h[POOL[r + 15]!]!
  )
}
