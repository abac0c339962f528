import type {
  AgentAdapter,
  AgentPersister,
  AnyMessage,
  SessionData,
  SessionFactory,
  SessionRuntimeOptions,
  TokenUsage,
} from '@agentx/core'
import { ClaudeSession } from './claude-session.js'

/**
 * The {@link SessionFactory} that makes {@link ClaudeSession}s, so agent messages keep Claude's
 * response metadata. Pass it as `deps.sessionFactory`; the default factory works with Claude too.
 *
 * @example
 * createAgent({}, { adapter: createClaudeAdapter(), sessionFactory: new ClaudeSessionFactory() })
 */
export class ClaudeSessionFactory implements SessionFactory {
  readonly specificationVersion = 'v1' as const

  createSession(
    id: string,
    metadata: SessionData,
    adapter: AgentAdapter,
    options: SessionRuntimeOptions,
    persister?: AgentPersister,
    messages?: AnyMessage[],
    tokenUsage?: TokenUsage,
  ): ClaudeSession {
    return new ClaudeSession(id, metadata, adapter, options, persister, messages, tokenUsage)
  }
}
