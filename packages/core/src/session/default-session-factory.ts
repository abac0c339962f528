import type { AgentAdapter } from '../contracts/agent-adapter.js'
import type { AgentPersister, SessionData } from '../contracts/agent-persister.js'
import type { SessionFactory } from '../contracts/session-factory.js'
import type { AnyMessage, TokenUsage } from '../contracts/messages.js'
import { BaseSession } from './base-session.js'
import type { SessionRuntimeOptions } from './session-runtime-options.js'

/** The {@link SessionFactory} used when `AgentDeps.sessionFactory` is not given: makes {@link BaseSession}s. */
export class DefaultSessionFactory implements SessionFactory {
  readonly specificationVersion = 'v1' as const

  createSession(
    id: string,
    metadata: SessionData,
    adapter: AgentAdapter,
    options: SessionRuntimeOptions,
    persister?: AgentPersister,
    messages?: AnyMessage[],
    tokenUsage?: TokenUsage,
  ): BaseSession {
    return new BaseSession(id, metadata, adapter, options, persister, messages, tokenUsage)
  }
}
