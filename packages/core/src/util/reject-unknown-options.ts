import { ConfigurationError } from '../errors/configuration-error.js'
import { describe, rejectUnknownKeys } from '../session/validate-input.js'

/**
 * Refuses an options object with a key `owner` does not know, as `createAgent` refuses an unknown
 * config key: a misspelling would otherwise be ignored without a word (`baseUrl` for `baseURL` sends
 * every request to the provider's default host). Throws a {@link ConfigurationError} that names the
 * closest known key (or says the options are not an object), e.g. `Unknown OpenAIAdapter option 'baseUrl' — did you mean 'baseURL'?`.
 */
export function rejectUnknownOptions(options: unknown, known: readonly string[], owner: string): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new ConfigurationError(`${owner} options must be an object, got ${describe(options)}.`)
  }
  rejectUnknownKeys(options, known, `${owner} option`, (message) => new ConfigurationError(message))
}
