import { type AgentPersister, ConfigurationError } from '@agentx/core'
import type { RuleContextHandle } from '../../engine/execute-rule.js'
import type { PersisterCapability } from '../../engine/rule.js'

/** Every persister capability name, in documentation order. */
export const PERSISTER_CAPABILITIES: readonly PersisterCapability[] = ['durable', 'pagination', 'userScoping']

/**
 * How a persister is put under the contract: `describePersisterContract(options)` in a binding,
 * or {@link createPersisterRuleContext} with `runContract`.
 */
export interface PersisterContractOptions {
  /** Shown in test names and the report, e.g. `SqlitePersister`. */
  readonly name: string
  /**
   * Makes a new persister over a new, empty, isolated store (a fresh file, schema or database).
   * Called at least once per rule.
   */
  create(): AgentPersister | Promise<AgentPersister>
  /**
   * Cleans up a persister made by `create` or `reopen` (close it, delete its file or schema). It
   * may receive an already closed persister. Default is `persister.close?.()`.
   */
  destroy?(persister: AgentPersister): void | Promise<void>
  /**
   * Closes `persister` and returns a new instance over the same storage, as a restarted process
   * would see it. Needed by the `durable` rules. Default is none (declaring `durable` without it
   * is a configuration error).
   */
  reopen?(persister: AgentPersister): AgentPersister | Promise<AgentPersister>
  /** What the persister supports: `durable`, `pagination`, `userScoping`. Default is none. */
  readonly capabilities?: readonly PersisterCapability[]
  /** Ids of rules known to fail; they must keep failing (see the README). Default is none. */
  readonly expectedFailures?: readonly string[]
  /** Per-rule time limit in ms unless the rule sets its own. Default is 15000. */
  readonly timeoutMs?: number
}

/** What a persister rule receives: a fresh persister and ways to make more. */
export interface PersisterRuleContext {
  /** A new persister over an empty store, made by `create()` for this rule. */
  readonly persister: AgentPersister
  /** Another isolated persister (from `create()`), destroyed with the context. */
  create(): Promise<AgentPersister>
  /** Closes `persister` and opens the same storage again (see {@link PersisterContractOptions.reopen}). */
  reopen(persister: AgentPersister): Promise<AgentPersister>
  /** The declared capabilities. */
  readonly capabilities: ReadonlySet<PersisterCapability>
}

/**
 * Makes a fresh {@link PersisterRuleContext} for one rule; `dispose()` destroys every persister
 * the context created or reopened. Passed to `runContract` and used by the bindings.
 */
export async function createPersisterRuleContext(
  options: PersisterContractOptions,
): Promise<RuleContextHandle<PersisterRuleContext>> {
  const live = new Set<AgentPersister>()
  const make = async (): Promise<AgentPersister> => {
    const persister = await options.create()
    if (typeof persister !== 'object' || persister === null) {
      throw new ConfigurationError(`create() of ${options.name} did not return a persister.`)
    }
    live.add(persister)
    return persister
  }
  const destroy = async (persister: AgentPersister): Promise<void> => {
    if (options.destroy) await options.destroy(persister)
    else await persister.close?.()
  }
  const persister = await make()
  const context: PersisterRuleContext = {
    persister,
    create: make,
    async reopen(current) {
      if (!options.reopen) {
        throw new ConfigurationError(
          `${options.name} declares 'durable' but gives no reopen(persister) option.`,
        )
      }
      const next = await options.reopen(current)
      live.delete(current)
      live.add(next)
      return next
    },
    capabilities: new Set(options.capabilities ?? []),
  }
  return {
    context,
    async dispose() {
      const errors: unknown[] = []
      for (const entry of live) {
        try {
          await destroy(entry)
        } catch (error) {
          errors.push(error)
        }
      }
      live.clear()
      if (errors.length > 0) throw new AggregateError(errors, `destroy() of ${options.name} failed`)
    },
  }
}

/** Rejects options that cannot work, before any rule runs. */
export function validatePersisterOptions(options: PersisterContractOptions): void {
  if (typeof options?.create !== 'function') {
    throw new ConfigurationError(
      `describePersisterContract(${options?.name ?? ''}) needs a create() function.`,
    )
  }
  if (options.capabilities?.includes('durable') && typeof options.reopen !== 'function') {
    throw new ConfigurationError(`${options.name} declares 'durable' but gives no reopen(persister) option.`)
  }
}
