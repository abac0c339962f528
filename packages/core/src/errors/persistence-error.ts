import { AgentError } from './agent-error.js'

/** Codes a persister uses. */
export type PersistenceErrorCode =
  | 'PERSISTENCE'
  | 'VALIDATION'
  | 'CLOSED'
  | 'PAYLOAD_TOO_LARGE'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'BUSY'

/** Options of {@link PersistenceError}. */
export interface PersistenceErrorOptions {
  /** Default is `PERSISTENCE`. */
  code?: PersistenceErrorCode
  /** Default is `true` for `PERSISTENCE` and `BUSY`, `false` otherwise. */
  retryable?: boolean
  cause?: unknown
}

/** A storage operation failed: thrown by persisters, reported by the write queue and `flush()`. */
export class PersistenceError extends AgentError {
  override name = 'PersistenceError'
  constructor(message: string, options: PersistenceErrorOptions = {}) {
    const code = options.code ?? 'PERSISTENCE'
    super(message, code, {
      cause: options.cause,
      retryable: options.retryable ?? (code === 'PERSISTENCE' || code === 'BUSY'),
    })
  }
}
