import type { SessionState } from '../contracts/session-state.js'
import { SessionStateError } from '../errors/session-state-error.js'

export type { SessionState }

/** Every allowed transition: `SESSION_TRANSITIONS[from]` lists the states `from` may move to. */
export const SESSION_TRANSITIONS: Readonly<Record<SessionState, readonly SessionState[]>> = {
  created: ['active', 'completed', 'deleted'],
  active: ['idle', 'error', 'aborted', 'waiting_input', 'completed', 'interrupted', 'deleted'],
  idle: ['active', 'completed', 'deleted'],
  waiting_input: ['active', 'completed', 'deleted'],
  error: ['active', 'completed', 'deleted'],
  aborted: ['active', 'completed', 'deleted'],
  completed: ['active', 'deleted'],
  interrupted: ['active', 'completed', 'deleted'],
  deleted: [],
}

/** Whether `from → to` is allowed by {@link SESSION_TRANSITIONS}. */
export function canTransition(from: SessionState, to: SessionState): boolean {
  return SESSION_TRANSITIONS[from].includes(to)
}

/** Throws {@link SessionStateError} unless `from → to` is allowed. */
export function assertTransition(from: SessionState, to: SessionState): void {
  if (!canTransition(from, to)) {
    throw new SessionStateError(`A session cannot go from '${from}' to '${to}'.`, { state: from })
  }
}

/** Whether a send may start in this state. */
export function canSend(state: SessionState): boolean {
  return canTransition(state, 'active')
}
