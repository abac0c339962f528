import { AgentError, type AgentErrorOptions } from './agent-error.js'

/** Bad options, a missing key, or a default plugin that is not installed. Code `CONFIGURATION`. */
export class ConfigurationError extends AgentError {
  override name = 'ConfigurationError'
  constructor(message: string, options: Omit<AgentErrorOptions, 'retryable'> = {}) {
    super(message, 'CONFIGURATION', { ...options, retryable: false })
  }
}
