import { randomBytes } from 'node:crypto'
import { type AgentAdapter, ConfigurationError, rejectUnknownOptions } from '@agentx/core'
import type { WireDialect } from '../../dialects/wire-dialect.js'
import type { RuleContextHandle } from '../../engine/execute-rule.js'
import { ADAPTER_CAPABILITIES, type AdapterCapability } from '../../engine/rule.js'
import type { FakeProvider } from '../../fake-provider/fake-provider.js'
import { startFakeProvider } from '../../fake-provider/start-fake-provider.js'
import type { AdapterFactoryContext, AdapterHarness } from './adapter-harness.js'

export { ADAPTER_CAPABILITIES }

/** The fixed start of the fake API key a rule's adapter gets; the rest is random per rule. */
export const CONTRACT_KEY_PREFIX = 'sk-agentx-contract-'

/** Default idle timeout handed to `createAdapter` (short, so stall rules stay fast). */
export const DEFAULT_CONTRACT_IDLE_TIMEOUT_MS = 1_000

/**
 * How an adapter is put under the contract: `describeAdapterContract(options)` in a binding, or
 * {@link createAdapterRuleContext} with `runContract`. Give either `dialect` (the adapter speaks
 * HTTP to the loopback fake provider) or `createHarness` (it does not).
 */
export interface AdapterContractOptions {
  /** Shown in test names and the report, e.g. `ClaudeAdapter`. */
  readonly name: string
  /** The provider's wire protocol, e.g. `anthropicMessagesDialect`. Needed unless `createHarness` is given. */
  readonly dialect?: WireDialect
  /**
   * Makes a fresh adapter pointed at the fake provider: pass `baseURL` and `apiKey` to the SDK, set
   * the adapter's idle timeout to `idleTimeoutMs`, and disable the SDK's own retries (A-REQ-007).
   * Called at least once per rule. Optional only when the harness makes the adapter itself.
   */
  createAdapter?(context: AdapterFactoryContext): AgentAdapter | Promise<AgentAdapter>
  /**
   * For adapters that do not speak HTTP: makes a fresh {@link AdapterHarness} for one rule instead
   * of a fake provider. Default is `startFakeProvider({ dialect })`.
   */
  createHarness?(context: Omit<AdapterFactoryContext, 'baseURL'>): AdapterHarness | Promise<AdapterHarness>
  /** The model id sent in every request. Default is `agentx-contract-model`. */
  readonly model?: string
  /** What the adapter supports. Rules needing an undeclared capability are skipped with the reason. Default is none. */
  readonly capabilities?: readonly AdapterCapability[]
  /**
   * Rules known to fail, with the reason (`{ 'A-USG-004': 'provider reports no reasoning tokens' }`).
   * They still run and must fail; one that passes fails the run. Default is none.
   */
  readonly expectedFailures?: Readonly<Record<string, string>> | readonly string[]
  /** Per-rule time limit in ms unless the rule sets its own. Default is 15000. */
  readonly timeoutMs?: number
  /** Idle timeout handed to `createAdapter`. Default is 1000 ms. */
  readonly idleTimeoutMs?: number
}

const RUN_CONTRACT_KEYS = ['kind', 'knownCapabilities', 'expectedFailureReasons']

/** The options a binding takes, and those `runContract` takes beside them (the README passes one object to both). */
const ADAPTER_OPTION_KEYS = [
  ...RUN_CONTRACT_KEYS,
  ...Object.keys({
    name: true,
    dialect: true,
    createAdapter: true,
    createHarness: true,
    model: true,
    capabilities: true,
    expectedFailures: true,
    timeoutMs: true,
    idleTimeoutMs: true,
  } satisfies Record<keyof AdapterContractOptions, true>),
]

/** What an adapter rule receives: a fresh harness (the fake provider) and a fresh adapter. */
export interface AdapterRuleContext {
  /** Where scenarios are queued and requests recorded. */
  readonly harness: AdapterHarness
  /** The fake provider, when the adapter speaks HTTP through one. */
  readonly provider: FakeProvider | undefined
  /** A fresh adapter for this rule. */
  readonly adapter: AgentAdapter
  /** Another adapter over the same harness (same key and idle timeout). */
  createAdapter(): Promise<AgentAdapter>
  /** The fake API key the adapter was given. */
  readonly apiKey: string
  /** The model id to pass as `options.model`. */
  readonly model: string
  readonly idleTimeoutMs: number
  /** The declared capabilities. */
  readonly capabilities: ReadonlySet<AdapterCapability>
}

/** Reasons given in an `expectedFailures` record (none for the array form). */
export function expectedFailureReasons(options: {
  readonly expectedFailures?: Readonly<Record<string, string>> | readonly string[]
}): Record<string, string> {
  const expected = options.expectedFailures
  return expected === undefined || Array.isArray(expected) ? {} : { ...(expected as Record<string, string>) }
}

/** The ids listed in `expectedFailures`, whichever form it was given in. */
export function expectedFailureIds(options: {
  readonly expectedFailures?: Readonly<Record<string, string>> | readonly string[]
}): string[] {
  const expected = options.expectedFailures
  if (expected === undefined) return []
  return Array.isArray(expected) ? [...(expected as readonly string[])] : Object.keys(expected)
}

/**
 * Makes a fresh {@link AdapterRuleContext} for one rule: a new fake provider (or harness), a new
 * fake key, a new adapter. `dispose()` closes the harness. Passed to `runContract` and used by the
 * bindings.
 */
export async function createAdapterRuleContext(
  options: AdapterContractOptions,
): Promise<RuleContextHandle<AdapterRuleContext>> {
  validateAdapterOptions(options)
  const apiKey = `${CONTRACT_KEY_PREFIX}${randomBytes(18).toString('hex')}`
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_CONTRACT_IDLE_TIMEOUT_MS
  let provider: FakeProvider | undefined
  let harness: AdapterHarness
  if (options.createHarness) {
    harness = await options.createHarness({ apiKey, idleTimeoutMs })
  } else if (options.dialect) {
    provider = await startFakeProvider({ dialect: options.dialect })
    harness = provider
  } else {
    throw new ConfigurationError(
      `describeAdapterContract(${options.name}) needs a dialect or createHarness().`,
    )
  }
  const factoryContext: AdapterFactoryContext = { baseURL: harness.baseURL ?? '', apiKey, idleTimeoutMs }
  const make = async (): Promise<AgentAdapter> => {
    const adapter = options.createAdapter
      ? await options.createAdapter(factoryContext)
      : await harness.createAdapter?.(factoryContext)
    if (typeof adapter !== 'object' || adapter === null || typeof adapter.stream !== 'function') {
      throw new ConfigurationError(`createAdapter() of ${options.name} did not return an AgentAdapter.`)
    }
    return adapter
  }
  try {
    const adapter = await make()
    return {
      context: {
        harness,
        provider,
        adapter,
        createAdapter: make,
        apiKey,
        model: options.model ?? 'agentx-contract-model',
        idleTimeoutMs,
        capabilities: new Set(options.capabilities ?? []),
      },
      dispose: () => harness.close(),
    }
  } catch (error) {
    await harness.close()
    throw error
  }
}

/** Rejects options that cannot work, before any rule runs. */
export function validateAdapterOptions(options: AdapterContractOptions): void {
  const name = options?.name ?? ''
  // A misspelt `capabilites` would skip every rule of a capability and show green.
  rejectUnknownOptions(options, ADAPTER_OPTION_KEYS, `describeAdapterContract(${name})`)
  if (!options?.dialect && typeof options?.createHarness !== 'function') {
    throw new ConfigurationError(
      `describeAdapterContract(${name}) needs a \`dialect\` (or a \`createHarness()\`).`,
    )
  }
  if (typeof options.createAdapter !== 'function' && typeof options.createHarness !== 'function') {
    throw new ConfigurationError(`describeAdapterContract(${name}) needs a createAdapter(context) function.`)
  }
  if (options.capabilities?.includes('parallelToolCalls') && !options.capabilities.includes('toolCalls')) {
    throw new ConfigurationError(`${name} declares 'parallelToolCalls' without 'toolCalls'.`)
  }
  if (options.idleTimeoutMs !== undefined && !(options.idleTimeoutMs > 0)) {
    throw new ConfigurationError(`idleTimeoutMs of ${name} must be a positive number of milliseconds.`)
  }
}
