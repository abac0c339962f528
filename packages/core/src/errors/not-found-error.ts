import { AgentError, type AgentErrorOptions } from './agent-error.js'

/** Something named by id does not exist (e.g. saving a message into an unknown session). Code `NOT_FOUND`. */
export class NotFoundError extends AgentError {
  override name = 'NotFoundError'
  constructor(message: string, options: Omit<AgentErrorOptions, 'retryable'> = {}) {
    super(message, 'NOT_FOUND', { ...options, retryable: false })
  }
}
