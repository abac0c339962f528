import { getRandomValues } from 'node:crypto'

let lastMs = 0
let sequence = 0

/**
 * A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then random bits. Ids made in the same
 * millisecond carry an increasing 12-bit counter, so ids from one process sort in creation order
 * and B-tree inserts stay append-only.
 */
export function uuidv7(now: number = Date.now()): string {
  const bytes = new Uint8Array(16)
  getRandomValues(bytes)
  if (now <= lastMs) {
    sequence += 1
    if (sequence > 0xfff) {
      lastMs += 1
      sequence = 0
    }
    now = lastMs
  } else {
    lastMs = now
    sequence = bytes[6]! & 0x07 // start low so the counter has room to grow
  }
  const high = Math.floor(now / 0x100000000)
  const low = now >>> 0
  bytes[0] = (high >>> 8) & 0xff
  bytes[1] = high & 0xff
  bytes[2] = (low >>> 24) & 0xff
  bytes[3] = (low >>> 16) & 0xff
  bytes[4] = (low >>> 8) & 0xff
  bytes[5] = low & 0xff
  bytes[6] = 0x70 | ((sequence >>> 8) & 0x0f)
  bytes[7] = sequence & 0xff
  bytes[8] = 0x80 | (bytes[8]! & 0x3f)
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
