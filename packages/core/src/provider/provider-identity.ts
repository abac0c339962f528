/**
 * Who an adapter is, as its errors name it. Every helper of `@agentx/core/provider` that builds an
 * {@link AdapterError} takes one, so that all adapters word, classify and redact alike.
 *
 * An adapter makes one per instance (the secrets are its API key) and passes it to each helper.
 *
 * @example
 * const identity: ProviderIdentity = { name: 'claude', label: 'Claude', secrets: [apiKey], apiKeyEnv: 'ANTHROPIC_API_KEY' }
 */
export interface ProviderIdentity {
  /** The adapter's `getName()`: `AdapterError.provider` and the key of its `providerOptions`. */
  readonly name: string
  /** How messages name the provider, e.g. `Claude`. */
  readonly label: string
  /** Values that MUST NOT appear in any error (the API key). Default is none. */
  readonly secrets?: readonly string[]
  /** The environment variable the API key comes from, named in the advice of an authentication error. Default is none. */
  readonly apiKeyEnv?: string
}
