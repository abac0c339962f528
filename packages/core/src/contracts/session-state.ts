/**
 * The lifecycle state of a session, stored in {@link SessionData.state} and shown as
 * `session.state`.
 *
 * `created` → `active` → `idle`; `error` after a failed send and `aborted` after `abort()` (both
 * accept the next send); `interrupted` is what start-up writes over a session found `active`
 * (the process died mid-send); `completed` after `complete()` (a later send reopens it);
 * `deleted` is final. The allowed moves are the table `SESSION_TRANSITIONS`.
 */
export type SessionState =
  | 'created'
  | 'active'
  | 'idle'
  | 'error'
  | 'aborted'
  | 'completed'
  | 'deleted'
  | 'interrupted'
