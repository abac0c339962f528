// The public API of @agentx/core, at a glance: first what applications use, then what plugin
// authors (adapters, persisters, session factories) build on. Everything else is internal.

// --- Applications -------------------------------------------------------------------------------

// Agent
export type { Agent, AgentListener } from './agent/agent-core.js'
export type {
  AgentConfig,
  AgentDeps,
  CreateSessionOptions,
  GetSessionsOptions,
} from './agent/agent-config.js'
export { createAgent } from './agent/create-agent.js'
export type { PruneSessionsOptions, RetentionOptions } from './agent/prune-sessions.js'
export type { AgentProfile } from './agent/agent-profile.js'
export { agentTool } from './tools/agent-tool.js'
export type { AgentToolInput, AgentToolOptions } from './tools/agent-tool.js'
export type { SessionCacheOptions } from './agent/session-cache.js'

// Sessions
export type { SendOptions, Session } from './session/session.js'
export type { ForkOptions } from './session/session-fork.js'
export type { SessionUpdate } from './session/session-update.js'
export type { SendResult, SessionEvent, SessionListener } from './session/session-events.js'
export type { MessagesQuery } from './session/session-history.js'
export type { SessionState } from './contracts/session-state.js'
export { canTransition, SESSION_TRANSITIONS } from './session/session-state.js'
export type { Durability, WriteRetryOptions } from './session/session-runtime-options.js'

// Long conversations: compaction, knowledge, token estimates
export type { CompactionOptions, CompactOptions } from './session/compaction-options.js'
export { DEFAULT_COMPACTION_INSTRUCTIONS } from './session/compaction-options.js'
export type { KnowledgeEntry } from './agent/load-knowledge.js'
export { estimateTokens } from './util/estimate-tokens.js'

// Messages
export type {
  AnyMessage,
  MessageCompaction,
  ContentBlock,
  ImageBlock,
  JsonValue,
  MessageType,
  ProviderMetadata,
  StopReason,
  TextBlock,
  ThinkingBlock,
  TokenUsage,
  ToolResultBlock,
  ToolUseBlock,
} from './contracts/messages.js'

// Tools, retry, logging
export type { PendingToolCall, Tool, ToolAnswer, ToolApproval, ToolContext } from './tools/tool.js'
export { tool } from './tools/tool.js'
export type { SchemaLike } from './tools/schema.js'
export type {
  InferSchemaOutput,
  StandardIssue,
  StandardJsonSchemaConverter,
  StandardResult,
  StandardSchemaProps,
  StandardSchemaV1,
} from './contracts/standard-schema.js'
export type { RetryOptions } from './retry/retry-options.js'
export type { Logger } from './util/logger.js'

// Errors
export { AdapterError, isAdapterError } from './errors/adapter-error.js'
export type { AdapterErrorKind, AdapterErrorOptions } from './errors/adapter-error.js'
export { AgentError, isAgentError } from './errors/agent-error.js'
export type { AgentErrorOptions } from './errors/agent-error.js'
export { ConfigurationError } from './errors/configuration-error.js'
export { NotFoundError } from './errors/not-found-error.js'
export { PersistenceError } from './errors/persistence-error.js'
export type { PersistenceErrorCode, PersistenceErrorOptions } from './errors/persistence-error.js'
export { SessionBusyError } from './errors/session-busy-error.js'
export { SessionStateError } from './errors/session-state-error.js'
export { ValidationError } from './errors/validation-error.js'

// The store that is always there
export { InMemoryPersister } from './persistence/in-memory-persister.js'
export type { InMemoryPersisterOptions } from './persistence/in-memory-persister.js'

// --- Plugin authors -----------------------------------------------------------------------------

// Contracts
export type {
  AdapterMessage,
  AdapterStreamOptions,
  AgentAdapter,
  ToolDefinition,
} from './contracts/agent-adapter.js'
export type {
  AgentPersister,
  DeleteSessionsQuery,
  GetMessagesQuery,
  ListSessionsQuery,
  MetadataFilter,
  SessionData,
  SessionForkOrigin,
  SessionScope,
} from './contracts/agent-persister.js'
export type { SessionFactory, SessionInit } from './contracts/session-factory.js'
export type { SessionRuntimeOptions } from './session/session-runtime-options.js'

// Session building blocks
export { BaseSession } from './session/base-session.js'
export { DefaultSessionFactory } from './session/default-session-factory.js'
export { assertTransition } from './session/session-state.js'

// Helpers for adapters
export {
  adapterErrorKindFromStatus,
  isRetryableStatus,
  parseRetryAfterMs,
} from './errors/adapter-error.js'
export { toResultContent } from './tools/run-tools.js'
export { addUsage, emptyUsage } from './util/token-usage.js'
export { backoffDelay, DEFAULT_RETRY } from './retry/retry-options.js'

// Helpers for persisters
export { compareByActivity } from './persistence/in-memory-persister.js'
export { cloneJson } from './persistence/json-copy.js'
export { checkMessage } from './persistence/check-message.js'
export {
  validateClaimArguments,
  validateDeleteSessionsQuery,
  validateListQuery,
  validateMessage,
  validateMessagesQuery,
  validatePaging,
  validateReleaseArguments,
  validateSessionData,
} from './persistence/validate.js'
export { uuidv7 } from './util/uuid-v7.js'

// Helpers for every plugin
export { rejectUnknownOptions } from './util/reject-unknown-options.js'
