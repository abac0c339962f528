import type { AgentPersister, SessionScope } from '../contracts/agent-persister.js'
import { DEFAULT_LEASE_TTL_MS } from '../session/session-lease.js'
import type { Logger } from '../util/logger.js'
import { type PeriodicTask, startPeriodicTask } from '../util/periodic-task.js'
import type { SessionManager } from './session-manager.js'

/**
 * With leases, `initialize()` leaves `active` a session whose lease is still live: another process
 * may be running it. When that process has died, its lease runs out and nothing else would ever
 * mark the session `interrupted` (it would show `active` until someone retried it). So, once per
 * lease length, the store is asked again to mark `interrupted` the `active` sessions of the scope
 * whose lease has expired (one statement; sends of this process renew theirs). Without leases the
 * store cannot tell a live send from a dead one, and nothing is swept.
 */
export function startLeaseSweep(
  manager: SessionManager,
  persister: AgentPersister,
  scope: SessionScope,
  leaseTtlMs: number | undefined,
  logger: Logger | undefined,
): PeriodicTask | undefined {
  if (typeof persister.markInterrupted !== 'function') return undefined
  return startPeriodicTask(
    async () => {
      const repaired = await manager.repairInterrupted(scope)
      if (repaired > 0) {
        // The objects this agent holds show it too (and emit their `state` event).
        await manager.takeInStaleActive(scope)
        logger?.info('agentx: marked sessions whose process stopped renewing its lease as interrupted', {
          repaired,
        })
      }
    },
    {
      intervalMs: leaseTtlMs ?? DEFAULT_LEASE_TTL_MS,
      failure: 'agentx: looking for sessions of a stopped process failed; retrying at the next interval',
      ...(logger === undefined ? {} : { logger }),
    },
  )
}
