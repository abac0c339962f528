// The public API of @agentx/adapter-openai.

export { createOpenAIAdapter } from './create-openai-adapter.js'
export { OpenAIAdapter } from './openai-adapter.js'
export type { OpenAIAdapterOptions, OpenAIApi } from './openai-adapter-options.js'
export type { OpenAIProviderOptions } from './openai-provider-options.js'
