import type { AgentError } from '@agentx/core'
import type { MessageRow } from './message-row.js'
import type { PostgresStatements } from './postgres-statements.js'
import type { SessionRow } from './session-row.js'

/** How a queued call settles. */
export interface Settle {
  /** Receives what a task's `run` resolved to (`undefined` for upserts). */
  resolve: (value: unknown) => void
  reject: (error: AgentError) => void
}

/** One queued write call; `index` numbers the calls in call order. */
export type WriteJob = Settle & { index: number } & (
    | { kind: 'message'; row: MessageRow }
    | { kind: 'session'; row: SessionRow }
    | { kind: 'task'; action: string; run: (statements: PostgresStatements) => Promise<unknown> }
  )

/**
 * Queued writes taken together: one task, or message and session upserts written as one
 * multi-row message statement followed by one multi-row session statement. The key sets are its
 * footprint, which decides whether it may run beside another step.
 */
export interface WriteStep {
  readonly jobs: WriteJob[]
  readonly isTask: boolean
  /** `session_id`, `id` of each message. */
  readonly messageKeys: Set<string>
  /** `session_id`, `seq` of each message. */
  readonly seqKeys: Set<string>
  /** The sessions the messages belong to. */
  readonly messageSessions: Set<string>
  /** The sessions upserted. */
  readonly sessionIds: Set<string>
}

/**
 * The next step from `queue[start]` on (nothing removed): one task, or the longest run of at most
 * `maxSize` message and session upserts in which no key repeats and no message follows an upsert
 * of its own session (that message might depend on the session being created). Writing its
 * messages first, then its sessions, gives every call the outcome it has in call order.
 *
 * The keys are built here rather than kept with each queued call: a burst of queued messages then
 * holds only its rows.
 */
export function planWriteStep(queue: readonly WriteJob[], start: number, maxSize: number): WriteStep {
  const step: WriteStep = {
    jobs: [],
    isTask: queue[start]?.kind === 'task',
    messageKeys: new Set(),
    seqKeys: new Set(),
    messageSessions: new Set(),
    sessionIds: new Set(),
  }
  for (let index = start; index < queue.length; index++) {
    if (!joinStep(step, queue[index]!, maxSize)) break
  }
  return step
}

/**
 * Adds `job` to `step` if it may join it (see {@link planWriteStep}); `false` when the step is
 * complete without it, so that no later call can join it either.
 */
export function joinStep(step: WriteStep, job: WriteJob, maxSize: number): boolean {
  if (step.jobs.length >= maxSize || (step.isTask && step.jobs.length > 0)) return false
  if (job.kind === 'task') {
    if (step.jobs.length > 0) return false
  } else if (job.kind === 'message') {
    const { session_id: sessionId } = job.row
    const key = `${sessionId}\u0000${job.row.id}`
    const seqKey = `${sessionId}\u0000${job.row.seq}`
    if (step.messageKeys.has(key) || step.seqKeys.has(seqKey) || step.sessionIds.has(sessionId)) return false
    step.messageKeys.add(key)
    step.seqKeys.add(seqKey)
    step.messageSessions.add(sessionId)
  } else {
    if (step.sessionIds.has(job.row.id)) return false
    step.sessionIds.add(job.row.id)
  }
  step.jobs.push(job)
  return true
}

/**
 * The keys of the steps being written, counted, so that whether one more step may start is one
 * look-up per key of that step rather than a comparison with every running step.
 *
 * A step may run while others are still running without changing any call's outcome when neither
 * it nor any of them is a task (deletes), they touch no common message id or seq, and none of them
 * upserts a session that another writes messages into or upserts too.
 *
 * One exception for steps on one pipelined connection (a *lane*), where the server runs a step
 * only after the steps sent before it on that connection: such a step may write messages into a
 * session that earlier steps on the same lane upsert, since the server creates the session first.
 * If an earlier step fails and the messages then find no session, the persister waits for it to
 * settle and writes the messages again (see `PostgresPersister`), so they get the outcome they
 * have in call order.
 *
 * One case is out of sight: a message re-saved with a *different* seq frees its old seq, which a
 * concurrent step could then take. The kernel never moves a message to another seq.
 */
export class RunningFootprint {
  #tasks = 0
  readonly #messageKeys = new Map<string, number>()
  readonly #seqKeys = new Map<string, number>()
  readonly #messageSessions = new Map<string, number>()
  readonly #sessionIds = new Map<string, number>()
  /** The sessions upserted by the steps of each lane (each a part of `#sessionIds`). */
  readonly #laneSessionIds = new Map<number, Map<string, number>>()

  /** Whether `step` may start now on `lane` (a pipelined connection), or on the pool (`-1`). */
  admits(step: WriteStep, lane: number): boolean {
    if (step.isTask) return this.#tasks === 0 && this.#sessionIds.size === 0 && this.#messageKeys.size === 0
    if (this.#tasks > 0) return false
    if (!isDisjoint(step.messageKeys, this.#messageKeys)) return false
    if (!isDisjoint(step.seqKeys, this.#seqKeys)) return false
    if (!isDisjoint(step.sessionIds, this.#sessionIds)) return false
    if (!isDisjoint(step.sessionIds, this.#messageSessions)) return false
    const onLane = this.#laneSessionIds.get(lane)
    for (const session of step.messageSessions) {
      const upserts = this.#sessionIds.get(session)
      if (upserts !== undefined && upserts !== onLane?.get(session)) return false
    }
    return true
  }

  add(step: WriteStep, lane: number): void {
    this.#count(step, lane, 1)
  }

  remove(step: WriteStep, lane: number): void {
    this.#count(step, lane, -1)
  }

  #count(step: WriteStep, lane: number, delta: 1 | -1): void {
    if (step.isTask) {
      this.#tasks += delta
      return
    }
    countAll(this.#messageKeys, step.messageKeys, delta)
    countAll(this.#seqKeys, step.seqKeys, delta)
    countAll(this.#messageSessions, step.messageSessions, delta)
    countAll(this.#sessionIds, step.sessionIds, delta)
    if (lane < 0) return
    let onLane = this.#laneSessionIds.get(lane)
    if (onLane === undefined) {
      onLane = new Map()
      this.#laneSessionIds.set(lane, onLane)
    }
    countAll(onLane, step.sessionIds, delta)
  }
}

/** Whether `later` writes messages into a session that `earlier` upserts. */
export function dependsOnSessionOf(later: WriteStep, earlier: WriteStep): boolean {
  for (const session of later.messageSessions) if (earlier.sessionIds.has(session)) return true
  return false
}

function isDisjoint(keys: ReadonlySet<string>, counted: ReadonlyMap<string, number>): boolean {
  if (counted.size === 0) return true
  for (const key of keys) if (counted.has(key)) return false
  return true
}

function countAll(counted: Map<string, number>, keys: ReadonlySet<string>, delta: 1 | -1): void {
  for (const key of keys) {
    const count = (counted.get(key) ?? 0) + delta
    if (count === 0) counted.delete(key)
    else counted.set(key, count)
  }
}
