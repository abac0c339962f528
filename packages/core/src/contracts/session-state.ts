/**
 * The lifecycle state of a session, stored in {@link SessionData.state} and shown as
 * `session.state`.
 *
 * `created` → `active` → `idle`; `waiting_input` when a send stopped for an approval or a client
 * tool's answer; `error` after a failed send and `aborted` after `abort()` (both accept the next
 * send and `retry()`); `interrupted` is what start-up writes over a session found `active`
 * (the process died mid-send); `completed` after `complete()` (a later send reopens it);
 * `deleted` is final. The allowed moves are the table `SESSION_TRANSITIONS`.
 */
export type SessionState =
  | 'created'
  | 'active'
  | 'idle'
  | 'waiting_input'
  | 'error'
  | 'aborted'
  | 'completed'
  | 'deleted'
  | 'interrupted'
