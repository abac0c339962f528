import { OpenAIAdapter } from './openai-adapter.js'
import type { OpenAIAdapterOptions } from './openai-adapter-options.js'

/**
 * Creates an {@link OpenAIAdapter}: `createAgent(config, { adapter: createOpenAIAdapter() })`.
 * Same options as the constructor; throws a `ConfigurationError` on bad options.
 */
export function createOpenAIAdapter(options: OpenAIAdapterOptions = {}): OpenAIAdapter {
  return new OpenAIAdapter(options)
}
