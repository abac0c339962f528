import { type ContractReport, createContractReport, type RuleResult } from './contract-report.js'
import { DEFAULT_RULE_TIMEOUT_MS, executeRule, type RuleContextFactory } from './execute-rule.js'
import { type ContractPlanOptions, planContract } from './plan-contract.js'
import {
  ADAPTER_CAPABILITIES,
  type ContractRule,
  PERSISTER_CAPABILITIES,
  RETIRED_PERSISTER_CAPABILITY,
} from './rule.js'

/** Options of {@link runContract}. */
export interface RunContractOptions<Capability extends string = string>
  extends ContractPlanOptions<Capability> {
  /** `persister` or `adapter`, recorded in the report. Default is `contract`. */
  readonly kind?: string
  /**
   * Every capability name of this rule set, to reject typos. Default: the persister or adapter
   * capabilities when the rules are the kit's (ids `P-…` or `A-…`), else the union of the rules' `requires`.
   */
  readonly knownCapabilities?: readonly Capability[]
  /** Per-rule time limit unless the rule sets its own. Default is {@link DEFAULT_RULE_TIMEOUT_MS}. */
  readonly timeoutMs?: number
}

/**
 * Runs `rules` one after another, each in a fresh context from `createContext`, without any test
 * runner, and resolves to a JSON conformance report. Never rejects for a broken rule: failures are
 * results. Rejects only for bad options (see {@link planContract}).
 *
 * A promise rejection the implementation leaves unhandled while a rule runs (a test runner would
 * report it; a plain script would crash on it) fails that rule, with the rejection as the reason.
 *
 * Used by the kit's own meta-tests and by anyone who wants a report instead of a test suite.
 */
export async function runContract<Context, Capability extends string>(
  rules: readonly ContractRule<Context, Capability>[],
  options: RunContractOptions<Capability>,
  createContext: RuleContextFactory<Context, Capability>,
): Promise<ContractReport> {
  const kind = kindOf(rules)
  const known =
    options.knownCapabilities ??
    ((kind === 'persister'
      ? PERSISTER_CAPABILITIES
      : kind === 'adapter'
        ? ADAPTER_CAPABILITIES
        : [...new Set(rules.flatMap((rule) => rule.requires ?? []))]) as readonly Capability[])
  // Persister rules take `pagination` (kit 1), as the bindings do: every persister must page now.
  const capabilities =
    kind === 'persister'
      ? options.capabilities?.filter((capability) => capability !== RETIRED_PERSISTER_CAPABILITY)
      : options.capabilities
  const planned = planContract(rules, { ...options, ...(capabilities ? { capabilities } : {}) }, known)
  const stray: unknown[] = []
  const onUnhandled = (reason: unknown): void => {
    stray.push(reason)
  }
  process.on('unhandledRejection', onUnhandled)
  const results: RuleResult[] = []
  try {
    for (const entry of planned) {
      stray.length = 0
      const { error: _error, ...result } = await executeRule(
        entry,
        createContext,
        options.timeoutMs ?? DEFAULT_RULE_TIMEOUT_MS,
      )
      // Node reports a rejection as unhandled once the microtask queue is empty: let it.
      if (result.status !== 'skipped') await new Promise((resolve) => setImmediate(resolve))
      results.push(stray.length === 0 ? result : withStrayRejection(result, stray[0]))
    }
  } finally {
    process.off('unhandledRejection', onUnhandled)
  }
  return createContractReport(options.name, options.kind ?? 'contract', capabilities ?? [], results)
}

/** `persister` or `adapter` when every rule id says so (`P-…`, `A-…`). */
function kindOf(rules: readonly ContractRule<unknown, string>[]): 'persister' | 'adapter' | undefined {
  if (rules.length === 0) return undefined
  if (rules.every((rule) => rule.id.startsWith('P-'))) return 'persister'
  if (rules.every((rule) => rule.id.startsWith('A-'))) return 'adapter'
  return undefined
}

/** A rule during which the implementation left a rejection unhandled: failed, whatever its check said. */
function withStrayRejection(result: RuleResult, reason: unknown): RuleResult {
  const what = `the implementation left a promise rejection unhandled: ${
    reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason)
  }`
  // A known gap fails either way; the rejection is one more reason.
  if (result.status === 'expected-failure') return { ...result, reason: `${result.reason}; ${what}` }
  return {
    ...result,
    status: 'failed',
    reason: result.status === 'failed' ? `${result.reason}; ${what}` : `${result.id}: ${what}`,
  }
}
