import { AgentError, type AgentErrorOptions } from './agent-error.js'

/**
 * Input that can never succeed: an empty id, content that is not JSON, a bad limit … Code
 * `VALIDATION`, or `OUTPUT_INVALID` when a model's structured output does not parse or validate.
 */
export class ValidationError extends AgentError {
  override name = 'ValidationError'
  constructor(
    message: string,
    options: Omit<AgentErrorOptions, 'retryable'> & { code?: 'VALIDATION' | 'OUTPUT_INVALID' } = {},
  ) {
    const { code, ...rest } = options
    super(message, code ?? 'VALIDATION', { ...rest, retryable: false })
  }
}
