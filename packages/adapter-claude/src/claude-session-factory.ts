import type { SessionFactory, SessionInit } from '@agentx/core'
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

  createSession(init: SessionInit): ClaudeSession {
    return new ClaudeSession(init)
  }
}
