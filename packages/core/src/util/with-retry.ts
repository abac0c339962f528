import { isAgentError } from '../errors/agent-error.js'
import { sleep } from './abort.js'

/**
 * Runs a storage operation again after a transient failure, a few times with a short doubling
 * delay (creating or forking a session must not fail on a hiccup). Errors that are not retryable
 * (`AgentError.retryable === false`) are thrown at once; anything else thrown counts as transient.
 */
export async function withRetry<T>(operation: () => Promise<T>, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation()
    } catch (error) {
      const retryable = !isAgentError(error) || error.retryable
      if (!retryable || attempt >= attempts) throw error
      await sleep(25 * 2 ** (attempt - 1))
    }
  }
}
