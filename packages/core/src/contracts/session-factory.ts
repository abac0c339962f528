import type { Session } from '../session/session.js'
import type { SessionRuntimeOptions } from '../session/session-runtime-options.js'
import type { AgentAdapter } from './agent-adapter.js'
import type { AgentPersister, SessionData } from './agent-persister.js'
import type { AnyMessage } from './messages.js'

/**
 * What a {@link SessionFactory} gets to make one session object. The agent builds it when a
 * session is created and when a stored one is first accessed.
 */
export interface SessionInit {
  /** The session's stored metadata (its `id`, state, usage …). */
  data: SessionData
  /** The adapter this session talks to. */
  adapter: AgentAdapter
  /** The settings resolved from the agent's config. */
  options: SessionRuntimeOptions
  /** Where the session's writes go. Default is none (nothing is persisted). */
  persister?: AgentPersister
  /**
   * The stored messages when the caller already has them (a new session passes `[]`). Default is
   * `undefined`: the session loads them itself on first use (lazy hydration).
   */
  messages?: AnyMessage[]
  /**
   * Whether the agent that owns the session is closed. Once it returns `true`, every call of the
   * session rejects with code `AGENT_CLOSED` and reaches neither the adapter nor the store.
   * Default is never closed.
   */
  isClosed?: () => boolean
  /**
   * Makes the object of a session that this session created (`fork()`), given its stored data and
   * messages. The agent passes one that goes through its session cache, so the new session is the
   * object `agent.getSession(id)` returns and inherits this session's own tools. Default is a new
   * object of this session's class, made with the same adapter, options and persister.
   */
  openSession?: (data: SessionData, messages: AnyMessage[]) => Session
}

/**
 * Makes session objects. The agent calls it when a session is created and when a stored one is
 * first accessed. A provider package may ship its own (a {@link BaseSession} subclass overriding
 * `transformMessage` / `extractSessionId`); {@link DefaultSessionFactory} is used otherwise.
 */
export interface SessionFactory {
  /** Contract version. Default is `'v1'`. */
  readonly specificationVersion?: 'v1'
  /** Makes the session object described by `init`. MUST NOT do I/O. */
  createSession(init: SessionInit): Session
}
