import type { AgentPersister } from '../contracts/agent-persister.js'
import { isAgentError } from '../errors/agent-error.js'
import { PersistenceError } from '../errors/persistence-error.js'
import { thrownText } from '../util/thrown-text.js'

/** Every method of the persister contract (§5), optional capability groups included. */
const METHODS = [
  'saveSession',
  'getSession',
  'getAllSessions',
  'listSessions',
  'deleteSession',
  'saveMessage',
  'getMessages',
  'deleteMessages',
  'claimSession',
  'releaseSession',
  'markInterrupted',
  'deleteSessions',
  'close',
] as const satisfies ReadonlyArray<keyof AgentPersister>

/**
 * The persister as the kernel calls it: every error it throws reaches the application as an
 * `AgentError` (DESIGN §6). A first-party persister already throws `PersistenceError`s, passed on
 * unchanged; anything else a third-party store throws (a driver's own error, a plain `Error`, a
 * synchronous throw) becomes a retryable `PersistenceError` (code `PERSISTENCE`) with the original
 * as its `cause`, so it is never mistaken for a provider failure. Methods the persister lacks stay
 * absent, so its capabilities read the same.
 */
export function guardPersister(persister: AgentPersister): AgentPersister {
  const guarded: Record<string, unknown> = {}
  if (persister.specificationVersion !== undefined) {
    guarded.specificationVersion = persister.specificationVersion
  }
  for (const name of METHODS) {
    const method = persister[name] as ((...args: unknown[]) => Promise<unknown>) | undefined
    if (typeof method !== 'function') continue
    const fail = (cause: unknown): never => {
      if (isAgentError(cause)) throw cause
      const reason = thrownText(cause)
      throw new PersistenceError(`The persister's ${name}() failed: ${reason}`, { cause })
    }
    // A rejection handler rather than an async wrapper: no extra frame on the write path.
    guarded[name] = (...args: unknown[]): Promise<unknown> => {
      try {
        return Promise.resolve(method.apply(persister, args)).then(undefined, fail)
      } catch (cause) {
        return Promise.reject(cause).then(undefined, fail)
      }
    }
  }
  return guarded as unknown as AgentPersister
}
