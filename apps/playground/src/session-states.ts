import type { SessionState } from '@agentx/core'

/** Every session state, for checking the `state` filter of `GET /api/sessions`. */
export const SESSION_STATES: readonly SessionState[] = [
  'created',
  'active',
  'idle',
  'error',
  'aborted',
  'waiting_input',
  'completed',
  'interrupted',
  'deleted',
]
