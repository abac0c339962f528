// The public API of @agentx/adapter-openai.

export { createOpenAIAdapter } from './create-openai-adapter.js'
export { OpenAIChatStreamMapper } from './map-openai-chat-stream.js'
export {
  isUnknownPreviousResponse,
  mapOpenAIError,
  mapOpenAIStreamError,
  OPENAI_PROVIDER,
  openAIIdentity,
} from './map-openai-error.js'
export type { OpenAIErrorBody } from './map-openai-error.js'
export { OpenAIResponsesStreamMapper } from './map-openai-responses-stream.js'
export { OpenAIAdapter } from './openai-adapter.js'
export type { OpenAIAdapterOptions, OpenAIApi } from './openai-adapter-options.js'
export type { OpenAIProviderOptions } from './openai-provider-options.js'
