import { type AgentPersister, ConfigurationError, rejectUnknownOptions } from '@agentx/core'
import type { RuleContextHandle } from '../../engine/execute-rule.js'
import {
  PERSISTER_CAPABILITIES,
  type PersisterCapability,
  RETIRED_PERSISTER_CAPABILITY,
} from '../../engine/rule.js'
import { readInFreshProcess, type StoreSnapshot } from './read-in-fresh-process.js'

export { PERSISTER_CAPABILITIES }

/**
 * One store of a rule: `create(store)` makes a persister over a new, empty store for it, and
 * `reopen(store)` opens that same storage again. Map `key` to your storage (a file name, a
 * schema, a key prefix).
 */
export interface PersisterStore {
  /** Unique in this process run: ASCII letters, digits and `-`, at most 40 characters. */
  readonly key: string
}

/**
 * How a persister is put under the contract: `describePersisterContract(options)` in a binding,
 * or {@link createPersisterRuleContext} with `runContract`.
 */
export interface PersisterContractOptions {
  /** Shown in test names and the report, e.g. `SqlitePersister`. */
  readonly name: string
  /**
   * Makes a new persister over a new, empty, isolated store for `store` (a fresh file, schema or
   * database). Called at least once per rule.
   */
  create(store: PersisterStore): AgentPersister | Promise<AgentPersister>
  /**
   * Cleans up a persister made by `create` or `reopen` (close it; delete the storage of `store`).
   * It may receive an already closed persister. Default is `persister.close?.()`.
   */
  destroy?(persister: AgentPersister, store: PersisterStore): void | Promise<void>
  /**
   * Opens the storage of `store` again, as a restarted process would: the kit has already closed
   * the previous instance and gives no reference to it, so the data must come from storage.
   * Needed by the `durable` rules. Default is none (declaring `durable` without it is a
   * configuration error).
   */
  reopen?(store: PersisterStore): AgentPersister | Promise<AgentPersister>
  /**
   * Lets the `durable` rules also read a store from a fresh `node` process (P-LIF-008), which
   * proves that the data lives in storage rather than in this process: `module` is the path or
   * `file:` URL of an ES module exporting `reopen(store)` (the same function as the option), and
   * `execArgv` the node options the child needs (loaders, conditions). Default is none (P-LIF-008
   * is skipped).
   */
  readonly freshProcess?: { readonly module: string | URL; readonly execArgv?: readonly string[] }
  /**
   * The optional migration rules (P-MIG-*): `createPreviousStore(store)` fills the storage of
   * `store` the way the previous release of the persister did — typically by saving the kit's
   * {@link PREVIOUS_RELEASE_DATA} with that release (see `writePreviousReleaseData`) or by copying a
   * committed file — and resolves to what that release read back (default: the kit's data set).
   * The rules then open it with `reopen`. Default is none (the P-MIG rules are skipped).
   */
  readonly migration?: {
    createPreviousStore(store: PersisterStore): Promise<StoreSnapshot | undefined> | Promise<void>
  }
  /**
   * What the persister supports: `durable`, `userScoping`, `leases`, `retention`. `pagination`
   * (a capability of kit 1) is accepted and ignored: paging is required of every persister.
   * Default is none.
   */
  readonly capabilities?: readonly (PersisterCapability | 'pagination')[]
  /**
   * Rules known to fail, which must keep failing (see the README): their ids, or a record of id →
   * reason (as for the adapter kit). Default is none.
   */
  readonly expectedFailures?: Readonly<Record<string, string>> | readonly string[]
  /** Per-rule time limit in ms unless the rule sets its own. Default is 15000. */
  readonly timeoutMs?: number
}

const RUN_CONTRACT_KEYS = ['kind', 'knownCapabilities', 'expectedFailureReasons']

/** The options a binding takes, and those `runContract` takes beside them (the README passes one object to both). */
const PERSISTER_OPTION_KEYS = [
  ...RUN_CONTRACT_KEYS,
  ...Object.keys({
    name: true,
    create: true,
    destroy: true,
    reopen: true,
    freshProcess: true,
    migration: true,
    capabilities: true,
    expectedFailures: true,
    timeoutMs: true,
  } satisfies Record<keyof PersisterContractOptions, true>),
]

/** What a persister rule receives: a fresh persister and ways to make more. */
export interface PersisterRuleContext {
  /** A new persister over an empty store, made by `create()` for this rule. */
  readonly persister: AgentPersister
  /** Another persister over a new, isolated store (from `create()`), destroyed with the context. */
  create(): Promise<AgentPersister>
  /**
   * Closes `persister` and opens its storage again through `reopen(store)`; rejects when `reopen`
   * returns the same instance (see {@link PersisterContractOptions.reopen}).
   */
  reopen(persister: AgentPersister): Promise<AgentPersister>
  /**
   * Closes `persister` and reads its whole store (every session, and the messages of
   * `sessionIds`) in a fresh `node` process through `freshProcess.module`.
   */
  readInFreshProcess(persister: AgentPersister, sessionIds: readonly string[]): Promise<StoreSnapshot>
  /**
   * A new store filled by the previous release (`migration.createPreviousStore`), opened with the
   * current one through `reopen`, and what the previous release read back from it.
   */
  openPreviousStore(): Promise<{ persister: AgentPersister; expected: StoreSnapshot | undefined }>
  /** Opens one more instance over the storage of `persister` (which stays open). */
  openBeside(persister: AgentPersister): Promise<AgentPersister>
  /** The declared capabilities. */
  readonly capabilities: ReadonlySet<PersisterCapability>
}

let storeCount = 0

/** A new store key: unique within this process run. */
function nextStore(): PersisterStore {
  return { key: `contract-${process.pid}-${storeCount++}` }
}

/**
 * Makes a fresh {@link PersisterRuleContext} for one rule; `dispose()` destroys every persister
 * the context created or reopened. Passed to `runContract` and used by the bindings.
 */
export async function createPersisterRuleContext(
  options: PersisterContractOptions,
): Promise<RuleContextHandle<PersisterRuleContext>> {
  validatePersisterOptions(options)
  const live = new Map<AgentPersister, PersisterStore>()
  const adopt = (persister: unknown, store: PersisterStore, what: string): AgentPersister => {
    if (typeof persister !== 'object' || persister === null) {
      throw new ConfigurationError(`${what} of ${options.name} did not return a persister.`)
    }
    live.set(persister as AgentPersister, store)
    return persister as AgentPersister
  }
  const make = async (store: PersisterStore = nextStore()): Promise<AgentPersister> =>
    adopt(await options.create(store), store, 'create()')
  const requireReopen = (): NonNullable<PersisterContractOptions['reopen']> => {
    if (!options.reopen) {
      throw new ConfigurationError(`${options.name} declares 'durable' but gives no reopen(store) option.`)
    }
    return options.reopen.bind(options)
  }
  const storeOf = (persister: AgentPersister): PersisterStore => {
    const store = live.get(persister)
    if (!store) throw new ConfigurationError('The contract kit was given a persister it did not create.')
    return store
  }
  const openAgain = async (store: PersisterStore, previous?: AgentPersister): Promise<AgentPersister> => {
    const next = await requireReopen()(store)
    if (next === previous) {
      throw new ConfigurationError(
        `reopen(store) of ${options.name} returned the closed instance: it must open the storage again.`,
      )
    }
    return adopt(next, store, 'reopen(store)')
  }
  const persister = await make()
  const context: PersisterRuleContext = {
    persister,
    create: () => make(),
    async reopen(current) {
      const store = storeOf(current)
      await current.close?.()
      live.delete(current)
      return openAgain(store, current)
    },
    async readInFreshProcess(current, sessionIds) {
      if (!options.freshProcess) {
        throw new ConfigurationError(`${options.name} gives no freshProcess option.`)
      }
      const store = storeOf(current)
      await current.close?.()
      return readInFreshProcess(options.freshProcess, store, sessionIds)
    },
    async openPreviousStore() {
      if (!options.migration) throw new ConfigurationError(`${options.name} gives no migration option.`)
      const store = nextStore()
      const expected = (await options.migration.createPreviousStore(store)) ?? undefined
      // Registered before opening, so that a failed open still cleans the storage up.
      const opened = await openAgain(store)
      return { persister: opened, expected }
    },
    async openBeside(current) {
      return openAgain(storeOf(current))
    },
    capabilities: new Set(
      (options.capabilities ?? []).filter(
        (capability): capability is PersisterCapability => capability !== RETIRED_PERSISTER_CAPABILITY,
      ),
    ),
  }
  return {
    context,
    async dispose() {
      const errors: unknown[] = []
      // Several instances may share one store (reopen, openBeside): close all but the newest, then
      // destroy the storage once, through the newest.
      const newest = new Map<string, AgentPersister>()
      for (const [entry, store] of live) newest.set(store.key, entry)
      for (const [entry, store] of live) {
        try {
          if (newest.get(store.key) !== entry) await entry.close?.()
        } catch (error) {
          errors.push(error)
        }
      }
      for (const [entry, store] of live) {
        if (newest.get(store.key) !== entry) continue
        try {
          if (options.destroy) await options.destroy(entry, store)
          else await entry.close?.()
        } catch (error) {
          errors.push(error)
        }
      }
      live.clear()
      if (errors.length > 0) throw new AggregateError(errors, `destroy() of ${options.name} failed`)
    },
  }
}

/** `options` with `pagination` (a capability of kit 1, now required of everyone) left out. */
export function withoutPaginationCapability(options: PersisterContractOptions): PersisterContractOptions {
  if (!options.capabilities?.includes(RETIRED_PERSISTER_CAPABILITY)) return options
  return {
    ...options,
    capabilities: options.capabilities.filter((capability) => capability !== RETIRED_PERSISTER_CAPABILITY),
  }
}

/** Rejects options that cannot work, before any rule runs. */
export function validatePersisterOptions(options: PersisterContractOptions): void {
  // A misspelt `capabilites` would skip every rule of a capability and show green.
  rejectUnknownOptions(options, PERSISTER_OPTION_KEYS, `describePersisterContract(${options?.name ?? ''})`)
  if (typeof options?.create !== 'function') {
    throw new ConfigurationError(
      `describePersisterContract(${options?.name ?? ''}) needs a create(store) function.`,
    )
  }
  if (options.capabilities?.includes('durable') && typeof options.reopen !== 'function') {
    throw new ConfigurationError(`${options.name} declares 'durable' but gives no reopen(store) option.`)
  }
  if (options.migration && typeof options.reopen !== 'function') {
    throw new ConfigurationError(`${options.name} gives a migration option but no reopen(store) option.`)
  }
}
