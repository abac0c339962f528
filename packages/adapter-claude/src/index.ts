// The public API of @agentx/adapter-claude.
export {
  ClaudeAdapter,
  createClaudeAdapter,
  DEFAULT_CLAUDE_IDLE_TIMEOUT_MS,
  DEFAULT_CLAUDE_MAX_OUTPUT_TOKENS,
  DEFAULT_CLAUDE_MODEL,
} from './claude-adapter.js'
export type { ClaudeAdapterOptions, ClaudeProviderOptions } from './claude-adapter.js'
export { ClaudeSession } from './claude-session.js'
export { ClaudeSessionFactory } from './claude-session-factory.js'
export { convertToClaudeMessages, MISSING_TOOL_RESULT } from './convert-to-claude-messages.js'
export type {
  ClaudeContentBlockParam,
  ClaudeMessageParam,
  ClaudePrompt,
  ConvertToClaudeMessagesInput,
} from './convert-to-claude-messages.js'
export { CLAUDE_PROVIDER, mapClaudeError } from './map-claude-error.js'
export type { ClaudeStopCause, MapClaudeErrorContext } from './map-claude-error.js'
export { mapClaudeStopReason, mapClaudeStream } from './map-claude-stream.js'
export type { ClaudeMessageEvent, ClaudeResponseMetadata, ClaudeStreamEvent } from './map-claude-stream.js'
