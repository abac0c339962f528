// The public API of @agentx/adapter-openai.

export { convertToOpenAIChatMessages } from './convert-to-openai-chat-messages.js'
export type { OpenAIChatContentPart, OpenAIChatMessage } from './convert-to-openai-chat-messages.js'
export { convertToOpenAIResponsesInput } from './convert-to-openai-responses-input.js'
export type {
  ConvertToOpenAIResponsesInputOptions,
  OpenAIResponsesInputItem,
  OpenAIResponsesInputPart,
} from './convert-to-openai-responses-input.js'
export { createOpenAIAdapter } from './create-openai-adapter.js'
export { mapOpenAIError, mapOpenAIStreamError } from './map-openai-error.js'
export type { OpenAIErrorBody, OpenAIErrorContext } from './map-openai-error.js'
export { OpenAIAdapter } from './openai-adapter.js'
export type { OpenAIAdapterOptions, OpenAIApi } from './openai-adapter-options.js'
