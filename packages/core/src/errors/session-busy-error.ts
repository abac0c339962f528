import { AgentError } from './agent-error.js'

/** A `send` or `stream` was called while the session was still `active`. Code `SESSION_BUSY`. */
export class SessionBusyError extends AgentError {
  override name = 'SessionBusyError'
  readonly sessionId: string
  /** `elsewhere`: another process (another agent instance) holds the session's lease. */
  constructor(sessionId: string, options: { elsewhere?: boolean } = {}) {
    super(
      options.elsewhere === true
        ? `Session ${sessionId} is held by another process: a send runs there (abort it there), or that process stopped and its lease runs out within leaseTtlMs; try again then.`
        : `Session ${sessionId} is busy: wait for the current send to finish or abort it.`,
      'SESSION_BUSY',
      { retryable: true },
    )
    this.sessionId = sessionId
  }
}
