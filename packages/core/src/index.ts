// The public API of @agentx/core, at a glance.

// Agent
export { AgentCore } from './agent/agent-core.js'
export type { Agent } from './agent/agent-core.js'
export type {
  AgentConfig,
  AgentDeps,
  CreateSessionOptions,
  GetSessionsOptions,
} from './agent/agent-config.js'
export { createAgent } from './agent/create-agent.js'
export { SessionManager } from './agent/session-manager.js'
export type { SessionManagerOptions } from './agent/session-manager.js'
export { DEFAULT_RETENTION_INTERVAL_MS, pruneSessions, startRetention } from './agent/prune-sessions.js'
export type { PruneSessionsOptions, RetentionOptions, RetentionTimer } from './agent/prune-sessions.js'

// Contracts
export type {
  AdapterMessage,
  AdapterStreamOptions,
  AgentAdapter,
  ToolDefinition,
} from './contracts/agent-adapter.js'
export type {
  AgentPersister,
  GetMessagesQuery,
  ListSessionsQuery,
  SessionData,
} from './contracts/agent-persister.js'
export type {
  DeleteSessionsQuery,
  MetadataFilter,
  SessionForkOrigin,
  SessionScope,
} from './contracts/agent-persister.js'
export type { SessionFactory } from './contracts/session-factory.js'
export type {
  AnyMessage,
  ContentBlock,
  ImageBlock,
  JsonValue,
  MessageCompaction,
  MessageType,
  ProviderMetadata,
  StopReason,
  TextBlock,
  ThinkingBlock,
  TokenUsage,
  ToolResultBlock,
  ToolUseBlock,
} from './contracts/messages.js'

// Errors
export {
  AdapterError,
  adapterErrorKindFromStatus,
  isAdapterError,
  isRetryableStatus,
  parseRetryAfterMs,
} from './errors/adapter-error.js'
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

// Sessions
export { BaseSession } from './session/base-session.js'
export { DefaultSessionFactory } from './session/default-session-factory.js'
export { WriteQueue } from './session/write-queue.js'
export { DEFAULT_LEASE_TTL_MS, SessionLease } from './session/session-lease.js'
export type { SessionLeaseOptions } from './session/session-lease.js'
export type { WriteQueueOptions } from './session/write-queue.js'
export { assertTransition, canTransition, SESSION_TRANSITIONS } from './session/session-state.js'
export type { SessionState } from './session/session-state.js'
export type { SendResult, SessionEvent, SessionListener } from './session/session-events.js'
export type { SendOptions, Session } from './session/session.js'
export type { Durability, SessionRuntimeOptions } from './session/session-runtime-options.js'

// Persistence helpers
export { compareByActivity, InMemoryPersister } from './persistence/in-memory-persister.js'
export { checkMessage } from './persistence/check-message.js'
export { cloneJson } from './persistence/json-copy.js'
export { validateMessage, validatePaging, validateSessionData } from './persistence/validate.js'
export type { InMemoryPersisterOptions } from './persistence/in-memory-persister.js'
export {
  validateClaimArguments,
  validateDeleteSessionsQuery,
  validateListQuery,
  validateMessagesQuery,
  validateReleaseArguments,
} from './persistence/validate.js'

// Tools, retry, utilities
export type { Tool, ToolContext } from './tools/tool.js'
export { toResultContent } from './tools/run-tools.js'
export { addUsage, emptyUsage } from './util/token-usage.js'
export { backoffDelay, DEFAULT_RETRY } from './retry/retry-options.js'
export type { RetryOptions } from './retry/retry-options.js'
export type { Logger } from './util/logger.js'
export { uuidv7 } from './util/uuid-v7.js'
