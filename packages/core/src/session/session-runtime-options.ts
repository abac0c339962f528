import type { Tool } from '../tools/tool.js'
import type { RetryOptions } from '../retry/retry-options.js'
import type { Logger } from '../util/logger.js'
import type { SessionProfile } from './session-profile.js'
import type { ChildSessions } from './subagents.js'
import type { WriteQueueOptions } from './write-queue.js'
import type { CompactionOptions } from './compaction-options.js'

/** Where `send` waits for storage: `sync` awaits every write, `async` only `flush()`/`close()`. */
export type Durability = 'sync' | 'async'

/** The settings a session runs with, resolved by the agent from its config. */
export interface SessionRuntimeOptions {
  /** Default model when the session data names none. */
  model: string
  systemPrompt?: string
  tools: Tool[]
  /** Default is `20`. */
  maxSteps: number
  retry: Required<RetryOptions>
  /** Default is `'async'`. */
  durability: Durability
  /** How often a streaming reply's partial text is saved. Default is `250`. */
  checkpointIntervalMs: number
  /** How the write queue retries a failing store. Default is `{ maxAttempts: 4, initialDelayMs: 25, maxDelayMs: 5000 }`. */
  writeRetry?: WriteRetryOptions
  /**
   * This agent instance's lease owner id: with a persister that has `leases`, a send claims its
   * session under it (DESIGN §10.6). Default is none (no claims).
   */
  owner?: string
  /** How long a lease lasts without renewal, in ms. Default is `30000`. */
  leaseTtlMs?: number
  /**
   * The profiles of `AgentConfig.agents` (DESIGN §10.3), the top-level one named `default`.
   * Default is none: the session runs the top-level config alone and writes no `agentName`.
   */
  profiles?: ReadonlyMap<string, SessionProfile>
  /** Where agent tools open their child sessions. Default is none (agent tools fail). */
  children?: ChildSessions
  logger?: Logger
  /**
   * When the session compacts its conversation by itself (DESIGN §10.4), already validated.
   * Default is none: it never does (`session.compact()` still works).
   */
  compaction?: CompactionOptions
  /**
   * The knowledge sections, rendered once in `initialize()` (see `renderKnowledge`), appended to
   * the system prompt of every model request. Default is none.
   */
  knowledge?: string
}

/** How hard the write queue tries a failing store (see `AgentConfig.writeRetry`). */
export type WriteRetryOptions = Pick<WriteQueueOptions, 'maxAttempts' | 'initialDelayMs' | 'maxDelayMs'>
