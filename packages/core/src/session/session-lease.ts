import type { AgentPersister } from '../contracts/agent-persister.js'
import { isAgentError } from '../errors/agent-error.js'
import { SessionBusyError } from '../errors/session-busy-error.js'
import { SessionStateError } from '../errors/session-state-error.js'
import type { Logger } from '../util/logger.js'
import { thrownText } from '../util/thrown-text.js'

/** Default of `AgentConfig.leaseTtlMs`: how long a lease lasts without renewal (30 s). */
export const DEFAULT_LEASE_TTL_MS = 30_000

/** Options of {@link SessionLease}. */
export interface SessionLeaseOptions {
  readonly persister: AgentPersister
  readonly sessionId: string
  /** This agent instance's owner id (unique per process and agent). */
  readonly owner: string
  /** Lease length in ms. Default is {@link DEFAULT_LEASE_TTL_MS}. */
  readonly ttlMs?: number
  /** Where renewal failures are reported. Default is none. */
  readonly logger?: Logger
  /**
   * Called once when a renewal finds the lease taken by another owner (this process stalled past
   * the lease's end and another process claimed the session). Default is none.
   */
  readonly onLost?: () => void
}

/**
 * The lease a send holds on its session while it runs (DESIGN §10.6), so that two processes on
 * one store never run a send of the same session at once.
 *
 * `claim()` claims the session through `persister.claimSession` and rejects with
 * {@link SessionBusyError} when another owner holds it; while held, the lease is renewed on an
 * unref'd timer every `ttlMs / 3`; `release()` stops renewing and releases it. With a persister
 * that has no `leases` capability every method is a no-op that resolves at once.
 */
export class SessionLease {
  readonly #options: SessionLeaseOptions
  readonly #ttlMs: number
  #timer: ReturnType<typeof setInterval> | undefined
  #renewing: Promise<void> | undefined
  #held = false
  #lost = false

  constructor(options: SessionLeaseOptions) {
    this.#options = options
    this.#ttlMs = options.ttlMs ?? DEFAULT_LEASE_TTL_MS
  }

  /** Whether `persister` implements the `leases` capability (`claimSession` and `releaseSession`). */
  static isSupportedBy(persister: AgentPersister): boolean {
    return typeof persister.claimSession === 'function' && typeof persister.releaseSession === 'function'
  }

  /** Whether the lease is held now (claimed, not released, not lost). */
  get isHeld(): boolean {
    return this.#held
  }

  /** Whether a renewal found the lease taken by another owner. */
  get isLost(): boolean {
    return this.#lost
  }

  /**
   * Claims the session (or renews an own lease) and starts renewing it. Rejects with
   * {@link SessionBusyError} when another owner holds a live lease, with {@link deletedElsewhere}'s
   * error when the store no longer has the session; a storage failure rejects with the persister's
   * error. Resolves at once when the persister has no leases.
   */
  async claim(): Promise<void> {
    const { persister, sessionId, owner } = this.#options
    if (!SessionLease.isSupportedBy(persister)) return
    let claimed: boolean
    try {
      claimed = await persister.claimSession!(sessionId, owner, this.#ttlMs)
    } catch (error) {
      // The store no longer has the session: another process deleted it.
      if (isAgentError(error) && error.code === 'NOT_FOUND') throw deletedElsewhere(sessionId, error)
      throw error
    }
    if (!claimed) throw new SessionBusyError(sessionId, { elsewhere: true })
    this.#held = true
    this.#lost = false
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#renew(), Math.max(1, Math.floor(this.#ttlMs / 3)))
      this.#timer.unref?.()
    }
  }

  /** Stops renewing without a release: the session, and its lease with it, is gone from the store. */
  abandon(): void {
    this.#stopTimer()
    this.#held = false
  }

  /**
   * Stops renewing and releases the lease. Never rejects: a failed release is logged, and the
   * lease then ends by itself after `ttlMs`.
   */
  async release(): Promise<void> {
    this.#stopTimer()
    await this.#renewing
    if (!this.#held) return
    this.#held = false
    const { persister, sessionId, owner, logger } = this.#options
    try {
      await persister.releaseSession!(sessionId, owner)
    } catch (error) {
      logger?.warn('agentx: releasing a session lease failed; it expires by itself', {
        sessionId,
        error: thrownText(error),
      })
    }
  }

  #renew(): void {
    if (this.#renewing || !this.#held) return
    const { persister, sessionId, owner, logger, onLost } = this.#options
    this.#renewing = persister.claimSession!(sessionId, owner, this.#ttlMs)
      .then(
        (renewed) => {
          if (renewed || !this.#held) return
          this.#held = false
          this.#lost = true
          this.#stopTimer()
          logger?.warn('agentx: a session lease was taken by another process', { sessionId })
          onLost?.()
        },
        (error: unknown) => {
          // A transient storage error: the lease stays valid until it expires; the next tick retries.
          logger?.warn('agentx: renewing a session lease failed; retrying', {
            sessionId,
            error: thrownText(error),
          })
        },
      )
      .finally(() => {
        this.#renewing = undefined
      })
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
  }
}

/**
 * The error of a call that found its session gone from the store (another process deleted it):
 * a {@link SessionStateError} in state `deleted`, as for a session deleted here.
 */
export function deletedElsewhere(id: string, cause?: unknown): SessionStateError {
  return new SessionStateError(`Session ${id} was deleted by another process.`, { state: 'deleted', cause })
}

/** Whether `error` says the session is deleted (here, or in the store by another process). */
export function isDeletedError(error: unknown): boolean {
  return error instanceof SessionStateError && error.state === 'deleted'
}
