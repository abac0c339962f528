import type { AgentError } from '@agentx/core'
import { isAgentError, PersistenceError, ValidationError } from '@agentx/core'

/** The SQLSTATE of a PostgreSQL error (`23505`, …), if `error` carries one. */
export function postgresCode(error: unknown): string | undefined {
  const fields = error as { code?: unknown; syscall?: unknown } | null | undefined
  const code = fields?.code
  // A Node system error has a `syscall`; its code can look like a SQLSTATE (`EPIPE`).
  if (typeof fields?.syscall === 'string') return undefined
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined
}

/** Node socket error codes of a connection that could not be made or was lost. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
])

/**
 * Whether `error` means the connection to the server failed or was cut (refused, reset, the
 * backend terminated, the server shutting down or starting up) — the kind of failure a server
 * restart causes, after which the same statement on a new connection may succeed.
 */
export function isConnectionError(error: unknown): boolean {
  const code = postgresCode(error)
  if (code !== undefined) {
    // 08: connection exception; 57P01-03: admin/crash shutdown, cannot connect now; 53300: too many connections.
    return (
      code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300'
    )
  }
  const systemCode = (error as { code?: unknown } | null | undefined)?.code
  if (typeof systemCode === 'string' && NETWORK_CODES.has(systemCode)) return true
  const message = error instanceof Error ? error.message : ''
  return /Connection terminated|connection timeout|Client has encountered a connection error|Connection closed/i.test(
    message,
  )
}

/**
 * Whether running the same statement again right away may succeed: a lost connection, or a
 * deadlock / serialization failure between processes writing the same rows.
 */
export function isTransientError(error: unknown): boolean {
  const code = postgresCode(error)
  return code === '40001' || code === '40P01' || isConnectionError(error)
}

/**
 * Whether `error` is caused by the values of one row (an integrity or data error, a value too
 * large), so that the other rows of the same multi-row statement may still be written. A timeout,
 * a lost connection or a server error is not: writing row by row would only repeat it.
 */
export function isRowError(error: unknown): boolean {
  const code = postgresCode(error)
  return (
    code !== undefined &&
    (code.startsWith('23') || code.startsWith('22') || code === '54000' || code === '54001')
  )
}

/**
 * Turns an error of pg (or of the network) into an {@link AgentError} with a stable code; the
 * driver's error is kept as `cause`. An {@link AgentError} passes through unchanged.
 *
 * `action` says what was being done ("save a session"), `server` names the server without any
 * credentials ("127.0.0.1:5432/app, schema public").
 */
export function mapPostgresError(error: unknown, action: string, server: string): AgentError {
  if (isAgentError(error)) return error
  const code = postgresCode(error)
  const reason = error instanceof Error ? error.message : String(error)
  const where = `PostgreSQL (${server})`
  if (code === undefined) {
    if (isConnectionError(error)) {
      const systemCode = (error as { code?: unknown }).code
      const refused = systemCode === 'ECONNREFUSED'
      return new PersistenceError(
        refused
          ? `Could not ${action}: connecting to ${where} was refused (ECONNREFUSED). Is the server running and listening on that host and port?`
          : `Could not ${action}: the connection to ${where} failed or was lost (${reason}).`,
        { cause: error, retryable: true },
      )
    }
    return new PersistenceError(`Could not ${action} in ${where}: ${reason}`, { cause: error })
  }
  const detail = `${code}: ${reason}`
  if (code === '57014') {
    return new PersistenceError(
      `Could not ${action}: the statement ran longer than the statement timeout of ${where} and was cancelled (${detail}). Try again; if it keeps happening, raise statementTimeoutMs or look for long-held locks.`,
      { code: 'BUSY', cause: error, retryable: true },
    )
  }
  if (code === '55P03' || code === '40001' || code === '40P01') {
    return new PersistenceError(
      `Could not ${action}: ${where} reported a lock conflict with another connection (${detail}). Try again.`,
      { code: 'BUSY', cause: error, retryable: true },
    )
  }
  if (code === '23503') {
    return new PersistenceError(`Could not ${action}: a referenced row does not exist (${detail}).`, {
      code: 'NOT_FOUND',
      cause: error,
    })
  }
  if (code === '23505') {
    return new PersistenceError(`Could not ${action}: the row conflicts with an existing one (${detail}).`, {
      code: 'CONFLICT',
      cause: error,
    })
  }
  if (code === '54000' || code === '54001' || code === '22001') {
    return new PersistenceError(
      `Could not ${action}: the value is larger than ${where} allows (${detail}).`,
      {
        code: 'PAYLOAD_TOO_LARGE',
        cause: error,
      },
    )
  }
  if (code.startsWith('22')) {
    return new ValidationError(`Could not ${action}: ${where} rejected a value (${detail}).`, {
      cause: error,
    })
  }
  if (code === '28P01' || code === '28000') {
    return new PersistenceError(
      `Could not ${action}: ${where} refused the credentials (${code}). Check the user and password of the connection.`,
      { cause: error, retryable: false },
    )
  }
  if (code === '3D000') {
    return new PersistenceError(`Could not ${action}: the database of ${where} does not exist (${detail}).`, {
      cause: error,
      retryable: false,
    })
  }
  if (code === '42501') {
    return new PersistenceError(
      `Could not ${action}: the database user lacks a privilege on ${where} (${detail}). Grant it, or choose another schema.`,
      { cause: error, retryable: false },
    )
  }
  if (code === '42P07') {
    return new PersistenceError(
      `Could not ${action}: a table that AgentX creates already exists in ${where} and does not belong to AgentX (${detail}). Pass options.schema to keep AgentX's tables in a schema of their own.`,
      { cause: error, retryable: false },
    )
  }
  if (code.startsWith('42')) {
    // Syntax or undefined object: the schema was changed behind this package's back.
    return new PersistenceError(`Could not ${action} in ${where} (${detail}).`, {
      cause: error,
      retryable: false,
    })
  }
  return new PersistenceError(`Could not ${action} in ${where} (${detail}).`, {
    cause: error,
    retryable: isTransientError(error) || code.startsWith('53') || code.startsWith('58'),
  })
}
