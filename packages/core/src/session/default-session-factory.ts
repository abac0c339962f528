import type { SessionFactory, SessionInit } from '../contracts/session-factory.js'
import { BaseSession } from './base-session.js'

/** The {@link SessionFactory} used when `AgentDeps.sessionFactory` is not given: makes {@link BaseSession}s. */
export class DefaultSessionFactory implements SessionFactory {
  readonly specificationVersion = 'v1' as const

  createSession(init: SessionInit): BaseSession {
    return new BaseSession(init)
  }
}
