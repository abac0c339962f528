import type { Session } from '../session/session.js'
import type { AgentAdapter } from './agent-adapter.js'
import type { AgentPersister, SessionData } from './agent-persister.js'
import type { AnyMessage, TokenUsage } from './messages.js'
import type { SessionRuntimeOptions } from '../session/session-runtime-options.js'

/**
 * Makes session objects. The agent calls it when a session is created and when a stored one is
 * first accessed. A provider package may ship its own (a {@link BaseSession} subclass overriding
 * `transformMessage` / `extractSessionId`); {@link DefaultSessionFactory} is used otherwise.
 */
export interface SessionFactory {
  /** Contract version. Default is `'v1'`. */
  readonly specificationVersion?: 'v1'
  /**
   * @param messages the stored messages when the caller already has them; `undefined` means the
   *   session loads them itself on first use (lazy hydration).
   * @param tokenUsage the stored usage. Default is `metadata.tokenUsage`.
   */
  createSession(
    id: string,
    metadata: SessionData,
    adapter: AgentAdapter,
    options: SessionRuntimeOptions,
    persister?: AgentPersister,
    messages?: AnyMessage[],
    tokenUsage?: TokenUsage,
  ): Session
}
