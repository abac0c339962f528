import type { SessionData } from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import { isAgentError } from '../errors/agent-error.js'
import { SessionBusyError } from '../errors/session-busy-error.js'
import { isAgentTool } from '../tools/agent-tool.js'
import type { PendingToolCall } from '../tools/tool.js'
import { repliedInstead } from './approvals.js'
import { waitingBatch } from './send-loop.js'
import { profileFor, toolsFor } from './send-profile.js'
import type { Session } from './session.js'
import type { SessionCore } from './session-core.js'
import {
  type ForkOptions,
  planFork,
  readStoredSession,
  validateForkOptions,
  writeFork,
} from './session-fork.js'
import { deletedElsewhere, isDeletedError } from './session-lease.js'
import { refresh } from './session-sync.js'
import {
  applySessionUpdate,
  changesSendSettings,
  revertSessionUpdate,
  type SessionUpdate,
  validateSessionUpdate,
} from './session-update.js'
import { closeWaitingChildren } from './subagents.js'
import { mergeTools, resultEvent } from './tool-step.js'
import { thrownText } from '../util/thrown-text.js'

/** No send runs and no write is in flight. */
export function isIdle(core: SessionCore): boolean {
  return core.run === undefined && (core.queue === undefined || core.queue.idle)
}

/** `session.update()`: validated, stored; with leases, applied to what the store holds. */
export async function updateSession(core: SessionCore, update: SessionUpdate): Promise<void> {
  core.assertUsable()
  const checked = validateSessionUpdate(update)
  if (core.busy && changesSendSettings(checked)) throw new SessionBusyError(core.id)
  // Several processes: start from what the store holds, not from this object's older copy — unless
  // a send runs (or starts meanwhile): it reads the store itself and owns the record.
  if (core.lease && core.persister && isIdle(core)) {
    const { persister } = core
    await underLease(core, async () => {
      const stored = await persister.getSession(core.id)
      if (stored === null) throw deletedElsewhere(core.id)
      if (isIdle(core)) {
        core.data = { ...stored }
        core.usage = { ...stored.tokenUsage }
      } else if (changesSendSettings(checked)) throw new SessionBusyError(core.id)
      await applyAndStore(core, checked)
    })
    return
  }
  await applyAndStore(core, checked)
}

/**
 * Applies a checked update and resolves once it is stored (held: a retry keeps the process alive
 * meanwhile). A store that refuses it for good (not retryable: the write is dropped) leaves the
 * object as it was; a retryable failure leaves the update queued, retried in the background.
 */
async function applyAndStore(core: SessionCore, checked: SessionUpdate): Promise<void> {
  const before = { ...core.data }
  if (!applySessionUpdate(core.data, checked)) return
  try {
    await core.durable(core.saveSession())
  } catch (error) {
    if (isAgentError(error) && !error.retryable) revertSessionUpdate(core.data, checked, before)
    throw error
  }
}

/**
 * `session.complete()` once the busy check passed: state `completed`, stored. With leases, applied
 * under the lease to what the store holds (its state and record), not this object's older copy.
 */
export async function completeSession(core: SessionCore): Promise<void> {
  const complete = (): Promise<void> | undefined => {
    core.setState('completed')
    core.data.lastActivity = new Date().toISOString()
    return core.saveSession()
  }
  if (core.lease === undefined) return core.write(complete())
  await underLease(core, async () => {
    await refresh(core)
    if (core.busy) throw new SessionBusyError(core.id)
    // Durable before the lease is let go: the next holder reads it.
    await core.durable(complete())
  })
}

/**
 * Runs a change of the session's record while holding its lease (DESIGN §10.6): a send running in
 * another process owns the record and saves it when it ends, so the change is refused with
 * `SessionBusyError` instead of being written and then silently overwritten. The lease is let go
 * afterwards unless a send of this object started meanwhile (it holds the same lease).
 */
async function underLease<T>(core: SessionCore, change: () => Promise<T>): Promise<T> {
  const lease = core.lease
  if (lease === undefined) return change()
  try {
    await lease.claim()
    try {
      return await change()
    } finally {
      if (core.run === undefined) await lease.release()
    }
  } catch (error) {
    // Deleted by another process: deleted here too, and nothing of it is written again.
    if (isDeletedError(error)) await core.markDeleted()
    throw error
  }
}

/**
 * `session.delete()` once a send of this object has settled: the store's record and messages
 * (children cascade), then the object becomes `deleted`. With leases it holds the session's lease
 * first, so a send running in another process is not cut from under it: `SessionBusyError`, and
 * nothing is deleted. A session another process already deleted is simply deleted here too.
 */
export async function deleteSession(core: SessionCore): Promise<void> {
  const { persister } = core
  try {
    // Refused while held elsewhere, before anything of this object is let go.
    await core.lease?.claim()
  } catch (error) {
    if (!isDeletedError(error)) throw error
  }
  await core.queue?.discard()
  // The lease goes with the record: nothing to release.
  await persister?.deleteSession(core.id)
  await core.markDeleted()
}

/**
 * The store no longer holds this session (a parent's delete cascaded to it, `pruneSessions`, another
 * process): `deleted` at once, a running send stopped first (`stop`), nothing still queued written.
 */
export async function forgetSession(core: SessionCore, stop: () => Promise<void>): Promise<void> {
  if (core.data.state === 'deleted') return
  if (core.running) {
    if (core.run !== undefined && !core.run.settled) core.deletedWhileRunning = true
    await stop()
    // Deleted meanwhile (the application called delete()): nothing more to do.
    if ((core.data.state as string) === 'deleted') return
    // The aborted send wrote its end (the session record, a partial reply) after the store
    // deleted it: delete again what it brought back, once nothing more is queued.
    await core.queue?.discard()
    await core.persister?.deleteSession(core.id).catch((error: unknown) => {
      core.options.logger?.warn(
        'agentx: what an aborted send wrote after its session was deleted could not be removed',
        {
          sessionId: core.id,
          error: thrownText(error),
        },
      )
    })
  }
  await core.markDeleted()
}

/**
 * `session.fork()`: copies the conversation (what the store holds, with leases) into a new
 * session written in one batch; `open` makes its object (through the agent's cache when it can).
 */
export async function forkSession(
  core: SessionCore,
  options: ForkOptions | undefined,
  open: (data: SessionData, messages: AnyMessage[]) => Session,
): Promise<Session> {
  core.assertUsable()
  const checked = validateForkOptions(options)
  if (core.busy) throw new SessionBusyError(core.id)
  let source: { data: SessionData; history: readonly AnyMessage[] }
  if (core.lease && core.persister) {
    // Several processes: copy what the store holds (this object's own writes first), read into a
    // snapshot of the fork's own, so a send starting meanwhile is not disturbed. Read under the
    // lease: a send running in another process is refused as here (its reply is half written).
    await core.queue?.flush({ report: false })
    const persister = core.persister
    const stored = await underLease(core, () => readStoredSession(persister, core.id))
    if (stored === null) {
      await core.markDeleted()
      throw deletedElsewhere(core.id)
    }
    source = stored
  } else {
    // The whole conversation: a compacted session holds only what follows its latest summary.
    source = { data: core.toSessionData(), history: await core.history.page() }
  }
  const plan = await planFork(source.data, source.history, checked, mergeTools(core.options.tools))
  if (core.persister) await writeFork(core.persister, plan)
  return (core.openSession ?? open)(plan.data, plan.messages)
}

/** `session.getPending()`: derived from the stored messages (and, with leases, what others stored). */
export async function pendingOf(core: SessionCore): Promise<PendingToolCall[]> {
  core.assertUsable()
  if (core.busy) return []
  // Several processes on one store: another one may have answered (or asked) since this object looked.
  if (core.lease !== undefined) await refresh(core)
  // Derived from the stored messages, not the state: a process that died after storing the
  // calls but before saving `waiting_input` left an `interrupted` session that still waits.
  if (core.data.state === 'active') return []
  await core.history.load()
  const tools = toolsFor(core, profileFor(core, core.data.activeAgent, true), {})
  const batch = await waitingBatch(core, tools, new AbortController().signal)
  return batch?.pending ?? []
}

/**
 * Gives up the calls a session waits on (its parent's user wrote instead of answering): they are
 * closed as not run, waiting children give up theirs, and the session is `completed`.
 */
export async function closePending(core: SessionCore): Promise<void> {
  if (core.busy || core.data.state !== 'waiting_input') return
  await core.history.load()
  const tools = toolsFor(core, profileFor(core, core.data.activeAgent, true), {})
  const batch = await waitingBatch(core, tools, new AbortController().signal)
  if (batch !== undefined) {
    await closeWaitingChildren(core.options.children, core.id, batch.calls, (call) =>
      isAgentTool(tools.get(call.name)),
    )
    const closed = repliedInstead(batch)
    for (const result of closed) core.emit(resultEvent(result))
    const message = core.history.append(core.newMessage('tool', closed))
    await core.write(core.show(message, core.queue?.saveMessage(message), (event) => core.emit(event)))
  }
  core.setState('completed')
  core.data.lastActivity = new Date().toISOString()
  await core.write(core.saveSession())
}
