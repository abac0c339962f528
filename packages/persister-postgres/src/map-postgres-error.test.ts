import { describe, expect, it } from 'vitest'
import { isTransientError, mapPostgresError, postgresCode } from './map-postgres-error.js'

/** A Node system error as a socket reports it. */
function systemError(code: string, syscall: string): Error {
  return Object.assign(new Error(`${syscall} ${code}`), { code, errno: -32, syscall })
}

describe('mapPostgresError', () => {
  it('treats a lost socket (EPIPE, ECONNRESET) as a retryable connection error, not as a SQLSTATE', () => {
    for (const code of ['EPIPE', 'ECONNRESET']) {
      const error = systemError(code, 'write')
      expect(postgresCode(error)).toBeUndefined()
      expect(isTransientError(error)).toBe(true)
      expect(mapPostgresError(error, 'save a message', 'server').retryable).toBe(true)
    }
  })

  it('reads the SQLSTATE of a server error', () => {
    const error = Object.assign(new Error('duplicate key'), { code: '23505', severity: 'ERROR' })
    expect(postgresCode(error)).toBe('23505')
    expect(isTransientError(error)).toBe(false)
  })
})
