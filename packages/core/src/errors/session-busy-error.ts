import { AgentError } from './agent-error.js'

/** A `send` or `stream` was called while the session was still `active`. Code `SESSION_BUSY`. */
export class SessionBusyError extends AgentError {
  override name = 'SessionBusyError'
  readonly sessionId: string
  constructor(sessionId: string) {
    super(`Session ${sessionId} is busy: wait for the current send to finish or abort it.`, 'SESSION_BUSY', {
      retryable: true,
    })
    this.sessionId = sessionId
  }
}
