import type { AgentAdapter } from '../contracts/agent-adapter.js'
import type { AgentPersister, MetadataFilter } from '../contracts/agent-persister.js'
import type { SessionState } from '../contracts/session-state.js'
import type { SessionFactory } from '../contracts/session-factory.js'
import type { RetryOptions } from '../retry/retry-options.js'
import type { Durability, WriteRetryOptions } from '../session/session-runtime-options.js'
import type { AgentProfile } from './agent-profile.js'
import type { RetentionOptions } from './prune-sessions.js'
import type { CompactionOptions } from '../session/compaction-options.js'
import type { KnowledgeEntry } from './load-knowledge.js'
import type { SessionCacheOptions } from './session-cache.js'
import type { Tool } from '../tools/tool.js'
import type { Logger } from '../util/logger.js'

/** What an agent is: its defaults for every session. Plain data, validated by `createAgent`. */
export interface AgentConfig {
  /** The folder the default SQLite store lives in (`<workspace>/.agentx/data/agent.db`). Default is `process.cwd()`. */
  workspace?: string
  /** The model of new sessions. Default is the adapter's own default model. */
  model?: string
  /** The system prompt of new sessions. */
  systemPrompt?: string
  /**
   * Scope: the agent only sees (and only creates) sessions of this user. Default is every user;
   * `agent.withScope({ userId })` gives views of one agent per user.
   */
  userId?: string
  /** Scope: the agent only sees (and only creates) sessions of this app. Default is every app. */
  appName?: string
  /** Tools of every session. */
  tools?: Tool[]
  /** Model requests per send at most (the tool loop). Default is `20`. */
  maxSteps?: number
  /** Retries of failed model requests. Default is `{ maxRetries: 2, initialDelayMs: 500, maxDelayMs: 30000 }`. */
  retry?: RetryOptions
  /** When writes are durable: `sync` when `send` resolves, `async` at `flush()`/`close()`. Default is `'async'`. */
  durability?: Durability
  /** How often a streaming reply's partial text is saved, in ms. Default is `250`. */
  checkpointIntervalMs?: number
  /**
   * How the write queue retries a failing store: a caller waiting for a write (`sync` durability,
   * `flush()`) is told after `maxAttempts` failed attempts; the write itself stays queued and is
   * retried in the background, with a delay doubling from `initialDelayMs` up to `maxDelayMs`.
   * Default is `{ maxAttempts: 4, initialDelayMs: 25, maxDelayMs: 5000 }`.
   */
  writeRetry?: WriteRetryOptions
  /**
   * How long a session lease lasts without renewal, in ms (several processes on one store, DESIGN
   * §10.6): a send claims its session, renews the lease every third of this, and releases it at
   * the end; a process that dies leaves a lease that expires after this. Default is `30000`.
   */
  leaseTtlMs?: number
  /**
   * Deletes sessions of the agent's scope inactive for longer than `inactiveForMs` (with their
   * messages and children), at once on `initialize()` and then every `intervalMs` on an unref'd
   * timer. Needs a persister with `retention`. Default is none.
   */
  retention?: RetentionOptions
  /**
   * Compacts long conversations (DESIGN §10.4): before a model request whose input would pass
   * `thresholdTokens`, everything but the latest `keepRecentMessages` messages is summarised by
   * `adapter` (default: the session's) and the model sees the summary instead. Default is none.
   */
  compaction?: CompactionOptions
  /**
   * Reference texts appended to the system prompt of every model request as named sections:
   * file paths relative to `workspace` (read once in `initialize()`, which fails with a
   * `ConfigurationError` naming a missing or unreadable file) or `{ name, text }`. At most 1 MB
   * in total. Default is none.
   */
  knowledge?: KnowledgeEntry[]
  /**
   * Named profiles sharing each session's conversation (DESIGN §10.3): `send(…, { agent })` picks
   * one, `handoffs` let one hand over to another, `agentTool(name)` runs one in a child session.
   * The top-level config is the profile `default`. With profiles, every agent message carries
   * `agentName`. Default is none.
   */
  agents?: Record<string, AgentProfile>
  /**
   * How many sessions stay in memory, and for how long: a session that is not running is dropped
   * (with the messages it holds) past `max` sessions, least recently used first, or after `idleMs`
   * without use, and reloaded from the store by the next `getSession`. A `Session` object the
   * application still holds keeps working, and `getSession` returns that same object.
   * Default is `{ max: 1000, idleMs: 600000 }`.
   */
  sessionCache?: SessionCacheOptions
}

/** The plugins of an agent. Missing ones are resolved in `initialize()`. */
export interface AgentDeps {
  /** Default is `@agentx/adapter-claude` (key from `ANTHROPIC_API_KEY`), imported on `initialize()`. */
  adapter?: AgentAdapter
  /** Default is `@agentx/persister-sqlite` at `<workspace>/.agentx/data/agent.db`, imported on `initialize()`. */
  persister?: AgentPersister
  /** Default is {@link DefaultSessionFactory}. */
  sessionFactory?: SessionFactory
  logger?: Logger
}

/** Options of `agent.createSession`. */
export interface CreateSessionOptions {
  /**
   * The session's id, chosen by the caller (e.g. the id of a chat in your own database): a
   * non-empty string of at most 256 characters, without NUL or unpaired surrogates, kept exactly as
   * given. An id that is already stored, in any scope, rejects with an `AgentError` of code
   * `SESSION_EXISTS` and writes nothing. Default is a new UUIDv7.
   */
  id?: string
  /** Default is the agent's `model`. */
  model?: string
  /** Default is the agent's `systemPrompt`. */
  systemPrompt?: string
  /** Default is `''`, which the first message fills in. */
  summary?: string
  metadata?: Record<string, unknown>
  /** Tools of this session (kept in memory; they win over the agent's by name). */
  tools?: Tool[]
  /**
   * Compaction of this session instead of the agent's `compaction` (kept in memory like `tools`:
   * a session loaded again later runs with the agent's). Default is the agent's.
   */
  compaction?: CompactionOptions
  cwd?: string
}

/** Options of `agent.getSessions`: a page of the agent's sessions, newest activity first, filtered. */
export interface GetSessionsOptions {
  /** Page size. Default is `50`. */
  limit?: number
  /** Sessions to skip. Default is `0`. */
  offset?: number
  /** Only sessions in this state, or in one of these states. Default is any state. */
  state?: SessionState | readonly SessionState[]
  /** Only sessions whose metadata holds exactly `value` at the top-level `key`. Default is any. */
  metadata?: MetadataFilter
  /** Whether child sessions (agents run as tools) are listed too. Default is `false`. */
  includeChildren?: boolean
}
