// The public API of @agentx/adapter-gemini.

export type { ConvertToGeminiContentsOptions, GeminiConversation } from './convert-to-gemini-contents.js'
export { convertToGeminiContents } from './convert-to-gemini-contents.js'
export type { GeminiAdapterOptions, GeminiProviderOptions } from './gemini-adapter.js'
export {
  createGeminiAdapter,
  DEFAULT_GEMINI_MODEL,
  DEFAULT_IDLE_TIMEOUT_MS,
  GeminiAdapter,
} from './gemini-adapter.js'
export type { GeminiProviderMetadata } from './gemini-provider-metadata.js'
export type { MapGeminiErrorContext } from './map-gemini-error.js'
export { GEMINI_PROVIDER, geminiIdentity, mapGeminiError, mapGeminiStreamError } from './map-gemini-error.js'
export { mapGeminiFinishReason } from './map-gemini-finish-reason.js'
export { GeminiStreamMapper } from './map-gemini-stream.js'
export type { GeminiChunk } from './map-gemini-stream.js'
export { mapGeminiUsage } from './map-gemini-usage.js'
