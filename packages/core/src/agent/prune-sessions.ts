import type { AgentPersister, SessionScope } from '../contracts/agent-persister.js'
import { ConfigurationError } from '../errors/configuration-error.js'
import type { AgentError } from '../errors/agent-error.js'
import { ValidationError } from '../errors/validation-error.js'
import { describe, isPlainObject, rejectUnknownKeys } from '../session/validate-input.js'
import { SESSION_TRANSITIONS, type SessionState } from '../session/session-state.js'
import { MAX_TIMER_MS } from '../util/abort.js'
import type { Logger } from '../util/logger.js'
import { startPeriodicTask } from '../util/periodic-task.js'

/** Options of `agent.pruneSessions` and {@link pruneSessions}. At least one of `inactiveForMs` and `before` is required. */
export interface PruneSessionsOptions {
  /** Sessions whose `lastActivity` is more than this many milliseconds ago. Default is no age limit. */
  inactiveForMs?: number
  /** Sessions whose `lastActivity` is strictly before this instant. Default is no cut-off. */
  before?: string | Date
  /**
   * Only sessions in one of these states. Default is every state except `active`. With a store
   * that has leases, a session a send runs in (in this process or another) is never pruned, even
   * when `active` is named: naming it prunes the sessions a process that died left `active`.
   * Without leases the store cannot tell a running send: do not name `active` while sends run (a
   * send in progress may write its session back after the prune).
   */
  states?: readonly SessionState[]
}

/** `AgentConfig.retention`: prune on a timer. */
export interface RetentionOptions {
  /** Sessions inactive for longer than this (ms) are deleted with their messages and children. */
  inactiveForMs: number
  /** Default is every state except `active` (see {@link PruneSessionsOptions.states}). */
  states?: readonly SessionState[]
  /** How often to prune, in ms; the first run starts at once. Default is `3600000` (one hour). */
  intervalMs?: number
}

/** A running retention timer: see {@link startRetention}. */
export interface RetentionTimer {
  /** Stops the timer and resolves when a prune that is running has settled. Idempotent. */
  stop(): Promise<void>
}

/** The earliest instant a `Date` can hold (ECMAScript's time range). */
const EARLIEST_DATE_MS = -8.64e15

/** Default of {@link RetentionOptions.intervalMs}: one hour. */
export const DEFAULT_RETENTION_INTERVAL_MS = 3_600_000

/**
 * Deletes (cascade: messages and child sessions) every session of `scope` whose `lastActivity`
 * is older than the cut-off `options` describe, through the persister's `deleteSessions`
 * (capability `retention`, an indexed delete). Resolves to how many sessions were removed,
 * children included. When both `inactiveForMs` and `before` are given, the earlier instant wins
 * (a session must satisfy both). `now` is the clock (ms), for tests.
 *
 * Rejects with {@link ValidationError} for options that select no cut-off or are malformed, and
 * with {@link ConfigurationError} when the persister has no `deleteSessions`.
 */
export async function pruneSessions(
  persister: AgentPersister,
  scope: SessionScope,
  options: PruneSessionsOptions,
  now: () => number = Date.now,
): Promise<number> {
  const cutOff = resolveCutOff(options, now)
  validateStates(options.states, 'pruneSessions: states', (message) => new ValidationError(message))
  const states = options.states ?? DEFAULT_PRUNE_STATES
  if (typeof persister.deleteSessions !== 'function') {
    throw new ConfigurationError(
      'pruneSessions needs a persister with the retention capability (deleteSessions): use @agentx/persister-sqlite, @agentx/persister-postgres or InMemoryPersister, or add deleteSessions to your persister.',
    )
  }
  return persister.deleteSessions({
    lastActivityBefore: cutOff,
    states,
    ...(scope.userId === undefined ? {} : { userId: scope.userId }),
    ...(scope.appName === undefined ? {} : { appName: scope.appName }),
  })
}

/**
 * Runs `prune` at once and then every `intervalMs` on an unref'd timer (it never keeps a process
 * alive). A run never overlaps the previous one; a failure is logged as a warning and the next
 * tick tries again, so nothing becomes an unhandled rejection. The agent calls it from
 * `initialize()` with its `AgentConfig.retention` and stops it in `close()`.
 */
export function startRetention(
  prune: () => Promise<number>,
  options: { intervalMs?: number; logger?: Logger },
): RetentionTimer {
  const intervalMs = options.intervalMs ?? DEFAULT_RETENTION_INTERVAL_MS
  if (!Number.isSafeInteger(intervalMs) || intervalMs <= 0 || intervalMs > MAX_TIMER_MS) {
    throw new ConfigurationError(
      `retention.intervalMs must be a positive integer of at most ${MAX_TIMER_MS} ms (about 24.8 days), got ${String(intervalMs)}.`,
    )
  }
  return startPeriodicTask(
    async () => {
      const removed = await prune()
      if (removed > 0) options.logger?.info('agentx: retention pruned sessions', { removed })
    },
    {
      intervalMs,
      immediately: true,
      failure: 'agentx: retention failed; retrying at the next interval',
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    },
  )
}

const DEFAULT_PRUNE_STATES: readonly SessionState[] = (
  Object.keys(SESSION_TRANSITIONS) as SessionState[]
).filter((state) => state !== 'active')

/**
 * Checks `states` of a prune (`pruneSessions`, `AgentConfig.retention`): an array of session
 * states, or absent. A misspelled state would silently select nothing; throws what `error` makes.
 */
export function validateStates(value: unknown, name: string, error: (message: string) => AgentError): void {
  if (value === undefined) return
  const known = Object.keys(SESSION_TRANSITIONS)
  if (!Array.isArray(value)) throw error(`${name} must be an array of session states (${known.join(', ')}).`)
  for (const state of value) {
    if (typeof state !== 'string' || !known.includes(state)) {
      throw error(`${name} must hold session states (${known.join(', ')}), got ${describe(state)}.`)
    }
  }
}

function resolveCutOff(options: PruneSessionsOptions, now: () => number): string {
  const given: unknown = options
  if (!isPlainObject(given)) throw new ValidationError('pruneSessions: options must be an object.')
  // A misspelled key (`state` for `states`) would otherwise widen what is deleted.
  rejectUnknownKeys(given, ['inactiveForMs', 'before', 'states'], 'pruneSessions option', (message) => {
    return new ValidationError(message)
  })
  const limits: number[] = []
  if (options.inactiveForMs !== undefined) {
    if (!Number.isSafeInteger(options.inactiveForMs) || options.inactiveForMs < 0) {
      throw new ValidationError(
        `pruneSessions: inactiveForMs must be a non-negative safe integer (milliseconds), got ${String(options.inactiveForMs)}.`,
      )
    }
    limits.push(now() - options.inactiveForMs)
  }
  if (options.before !== undefined) {
    const before: unknown = options.before
    const time =
      before instanceof Date ? before.getTime() : typeof before === 'string' ? Date.parse(before) : Number.NaN
    if (Number.isNaN(time)) {
      throw new ValidationError('pruneSessions: before must be an ISO-8601 string or a valid Date.')
    }
    limits.push(time)
  }
  if (limits.length === 0) {
    throw new ValidationError('pruneSessions needs inactiveForMs or before: it never deletes every session.')
  }
  // A cut-off before the earliest instant a Date holds (an inactiveForMs of many millennia) prunes nothing older than that.
  return new Date(Math.max(Math.min(...limits), EARLIEST_DATE_MS)).toISOString()
}
