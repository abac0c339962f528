import { AgentError } from './agent-error.js'
import type { SessionState } from '../contracts/session-state.js'

/** A call that the session's state does not allow (any call on a deleted session). Code `SESSION_STATE`. */
export class SessionStateError extends AgentError {
  override name = 'SessionStateError'
  readonly state: SessionState
  constructor(message: string, options: { state: SessionState; cause?: unknown }) {
    super(message, 'SESSION_STATE', { cause: options.cause, retryable: false })
    this.state = options.state
  }
}
