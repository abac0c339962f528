import { AgentError, type AgentErrorOptions } from './agent-error.js'

/** Input that can never succeed: an empty id, content that is not JSON, a bad limit … Code `VALIDATION`. */
export class ValidationError extends AgentError {
  override name = 'ValidationError'
  constructor(message: string, options: Omit<AgentErrorOptions, 'retryable'> = {}) {
    super(message, 'VALIDATION', { ...options, retryable: false })
  }
}
