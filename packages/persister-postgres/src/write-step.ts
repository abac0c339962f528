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
    | { kind: 'message'; row: MessageRow; key: string; seqKey: string }
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
 * The next step from the head of `queue` (not removed): one task, or the longest run of at most
 * `maxSize` message and session upserts in which no key repeats and no message follows an upsert
 * of its own session (that message might depend on the session being created). Writing its
 * messages first, then its sessions, gives every call the outcome it has in call order.
 */
export function planWriteStep(queue: readonly WriteJob[], maxSize: number): WriteStep {
  const step: WriteStep = {
    jobs: [],
    isTask: queue[0]?.kind === 'task',
    messageKeys: new Set(),
    seqKeys: new Set(),
    messageSessions: new Set(),
    sessionIds: new Set(),
  }
  if (step.isTask) {
    step.jobs.push(queue[0]!)
    return step
  }
  for (const job of queue) {
    if (step.jobs.length >= maxSize || job.kind === 'task') break
    if (job.kind === 'message') {
      if (
        step.messageKeys.has(job.key) ||
        step.seqKeys.has(job.seqKey) ||
        step.sessionIds.has(job.row.session_id)
      ) {
        break
      }
      step.messageKeys.add(job.key)
      step.seqKeys.add(job.seqKey)
      step.messageSessions.add(job.row.session_id)
    } else {
      if (step.sessionIds.has(job.row.id)) break
      step.sessionIds.add(job.row.id)
    }
    step.jobs.push(job)
  }
  return step
}

/**
 * Whether `later` may run while `earlier` is still running without changing any call's outcome:
 * neither is a task (deletes), they touch no common message id or seq, and neither upserts a
 * session the other writes messages into or upserts too.
 *
 * One case is out of sight: a message re-saved with a *different* seq frees its old seq, which a
 * concurrent step could then take. The kernel never moves a message to another seq.
 */
export function canRunBeside(earlier: WriteStep, later: WriteStep): boolean {
  return (
    !earlier.isTask &&
    !later.isTask &&
    areDisjoint(earlier.messageKeys, later.messageKeys) &&
    areDisjoint(earlier.seqKeys, later.seqKeys) &&
    areDisjoint(earlier.sessionIds, later.sessionIds) &&
    areDisjoint(earlier.sessionIds, later.messageSessions) &&
    areDisjoint(later.sessionIds, earlier.messageSessions)
  )
}

function areDisjoint(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a]
  for (const item of small) if (large.has(item)) return false
  return true
}
