// The public API of @agentx/adapter-claude.

export type { ClaudeAdapterOptions, ClaudeProviderOptions } from './claude-adapter.js'
export {
  CLAUDE_API_VERSION_WITHOUT_SAMPLING,
  ClaudeAdapter,
  createClaudeAdapter,
  DEFAULT_CLAUDE_IDLE_TIMEOUT_MS,
  DEFAULT_CLAUDE_MAX_OUTPUT_TOKENS,
  DEFAULT_CLAUDE_MODEL,
} from './claude-adapter.js'
export { ClaudeSession } from './claude-session.js'
export { ClaudeSessionFactory } from './claude-session-factory.js'
export type {
  ClaudeContentBlockParam,
  ClaudeMessageParam,
  ClaudePrompt,
  ConvertToClaudeMessagesInput,
} from './convert-to-claude-messages.js'
export { convertToClaudeMessages, MISSING_TOOL_RESULT } from './convert-to-claude-messages.js'
export type { MapClaudeErrorContext } from './map-claude-error.js'
export { CLAUDE_PROVIDER, claudeIdentity, mapClaudeError, mapClaudeStreamError } from './map-claude-error.js'
export type { ClaudeMessageEvent, ClaudeResponseMetadata } from './map-claude-stream.js'
export { ClaudeStreamMapper, mapClaudeStopReason } from './map-claude-stream.js'
