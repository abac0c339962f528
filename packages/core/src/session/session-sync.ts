import type { SessionData } from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import type { SessionCore } from './session-core.js'
import { deletedElsewhere } from './session-lease.js'

// A session object and the store: what another process (or the lease sweep) changed reaches this
// object only through these, and never over writes of its own that are still pending.

/**
 * Takes in the session's record as the store has it (a listing, a `getSession`): what another
 * process changed (its state after a send, a sweep's `interrupted`, an update) shows at once.
 * Ignored while this object runs a send, has writes of its own pending (they are newer) or is
 * deleted; the messages are taken in before the next send ({@link refresh}).
 */
export function takeIn(core: SessionCore, stored: SessionData): void {
  if (stored.id !== core.id || !mayTakeIn(core)) return
  if (stored.providerSessionId !== core.data.providerSessionId) core.forgetResumeIssuer()
  // Another process was active in it: the messages it appended are taken in by getMessages().
  if (
    stored.lastActivity !== core.data.lastActivity ||
    stored.tokenUsage.totalTokens !== core.usage.totalTokens
  ) {
    core.messagesBehind = true
  }
  const previous = core.data.state
  core.data = { ...stored }
  core.usage = { ...stored.tokenUsage }
  // Listeners (and the agent's subscribers) learn of a state another process (or the sweep) set.
  if (stored.state !== previous) core.emit({ type: 'state', state: stored.state, previous })
}

/** Whether the stored record may replace this object's: no send runs here, none of its writes is pending. */
export function mayTakeIn(core: SessionCore): boolean {
  return core.data.state !== 'deleted' && !core.busy && (core.queue === undefined || core.queue.idle)
}

/** {@link takeIn} of the record read from the store now; no read when it would be ignored. */
export async function reloadRecord(core: SessionCore): Promise<void> {
  if (core.persister === undefined || !mayTakeIn(core)) return
  const stored = await core.persister.getSession(core.id)
  if (stored !== null) takeIn(core, stored)
}

/**
 * Takes in what another process stored since this object last looked: the session's metadata
 * and the messages after the last one held. Only while this object has no write of its own
 * pending (its own writes are newer than the store).
 */
export async function refresh(core: SessionCore): Promise<void> {
  const persister = core.persister
  if (persister === undefined || (core.queue !== undefined && !core.queue.idle)) return
  const stored = await persister.getSession(core.id)
  if (stored === null) {
    throw deletedElsewhere(core.id)
  }
  // Another process's send may have left a new provider session id: whose it is, is unknown here.
  if (stored.providerSessionId !== core.data.providerSessionId) core.forgetResumeIssuer()
  core.data = { ...stored }
  core.usage = { ...stored.tokenUsage }
  await core.history.catchUp()
  core.messagesBehind = false
}

/**
 * Settles {@link SessionCore.unsure}: a user message whose write failed, but which the store may
 * have committed (the connection dropped after the commit). Reads what the store holds after the
 * last message held, before the next send writes anything, so the session never writes a second
 * message at that seq; rejects while the store cannot be read (the send fails before any write).
 * Returns the message when the store has it: it is part of the history from now on.
 */
export async function settleUnsure(core: SessionCore): Promise<AnyMessage | undefined> {
  const unsure = core.unsure
  if (unsure === undefined) return undefined
  await core.history.catchUp()
  core.unsure = undefined
  const messages = core.history.messages
  for (let i = messages.length - 1; i >= 0 && messages[i]!.seq >= unsure.seq; i--) {
    if (messages[i]!.id === unsure.id) return messages[i]
  }
  return undefined
}

/**
 * Takes in the messages another process appended, once the session's record showed that it was
 * active in the session ({@link takeIn}: a listing, a `getSession`): the history a page is served
 * from then matches the record (its usage, its last activity). No read otherwise.
 */
export async function catchUpMessages(core: SessionCore): Promise<void> {
  if (!core.messagesBehind || !mayTakeIn(core)) return
  await core.history.catchUp()
  core.messagesBehind = false
}
