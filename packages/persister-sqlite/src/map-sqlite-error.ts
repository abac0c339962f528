import { isAgentError, PersistenceError, ValidationError } from '@agentx/core'
import type { AgentError } from '@agentx/core'

/** The extended result code of a better-sqlite3 `SqliteError` (`SQLITE_BUSY`, …), if it is one. */
export function sqliteCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined
}

/**
 * Turns an error of better-sqlite3 (or of Node while preparing the file) into a
 * {@link PersistenceError} with a stable code; the driver's error is kept as `cause`.
 * An {@link AgentError} passes through unchanged.
 *
 * `action` says what was being done ("save session s-1"), `filename` names the database.
 */
export function mapSqliteError(error: unknown, action: string, filename: string): AgentError {
  if (isAgentError(error)) return error
  const code = sqliteCode(error)
  const reason = error instanceof Error ? error.message : String(error)
  const where = `SQLite database ${filename}`
  if (code === undefined) {
    return new PersistenceError(`Could not ${action} in the ${where}: ${reason}`, { cause: error })
  }
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new PersistenceError(
      `Could not ${action}: the ${where} is locked by another connection (${code}) and stayed locked for longer than busyTimeoutMs. Try again.`,
      { code: 'BUSY', cause: error },
    )
  }
  if (code === 'SQLITE_TOOBIG') {
    return new PersistenceError(`Could not ${action}: the value is larger than SQLite allows (${code}).`, {
      code: 'PAYLOAD_TOO_LARGE',
      cause: error,
    })
  }
  if (code === 'SQLITE_ERROR' && /malformed JSON/i.test(reason)) {
    // The metadata index reads session metadata with SQLite's JSON functions, which refuse JSON
    // nested deeper than 1000 levels (what JSON.stringify made is valid otherwise). Nothing is written.
    return new ValidationError(
      `Could not ${action}: its metadata nests deeper than SQLite's JSON functions read (1000 levels).`,
      { cause: error },
    )
  }
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return new PersistenceError(
      `Could not ${action}: ${filename} is not a SQLite database or is corrupt (${code}: ${reason}). The file was left untouched; move it away or choose another filename.`,
      { cause: error, retryable: false },
    )
  }
  if (
    code.startsWith('SQLITE_READONLY') ||
    code.startsWith('SQLITE_CANTOPEN') ||
    code.startsWith('SQLITE_PERM')
  ) {
    return new PersistenceError(
      `Could not ${action}: the ${where} cannot be opened for writing (${code}: ${reason}). Check that its folder exists and is writable, or choose another filename.`,
      { cause: error, retryable: false },
    )
  }
  if (code === 'SQLITE_FULL') {
    return new PersistenceError(`Could not ${action}: the disk holding the ${where} is full (${code}).`, {
      cause: error,
    })
  }
  return new PersistenceError(`Could not ${action} in the ${where} (${code}: ${reason}).`, { cause: error })
}
