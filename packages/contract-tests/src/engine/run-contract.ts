import { type ContractReport, createContractReport } from './contract-report.js'
import { DEFAULT_RULE_TIMEOUT_MS, executeRule, type RuleContextFactory } from './execute-rule.js'
import { type ContractPlanOptions, planContract } from './plan-contract.js'
import type { ContractRule } from './rule.js'

/** Options of {@link runContract}. */
export interface RunContractOptions<Capability extends string = string>
  extends ContractPlanOptions<Capability> {
  /** `persister` or `adapter`, recorded in the report. Default is `contract`. */
  readonly kind?: string
  /** Every capability name of this rule set, to reject typos. Default is the union of the rules' `requires`. */
  readonly knownCapabilities?: readonly Capability[]
  /** Per-rule time limit unless the rule sets its own. Default is {@link DEFAULT_RULE_TIMEOUT_MS}. */
  readonly timeoutMs?: number
}

/**
 * Runs `rules` one after another, each in a fresh context from `createContext`, without any test
 * runner, and resolves to a JSON conformance report. Never rejects for a broken rule: failures are
 * results. Rejects only for bad options (see {@link planContract}).
 *
 * Used by the kit's own meta-tests and by anyone who wants a report instead of a test suite.
 */
export async function runContract<Context, Capability extends string>(
  rules: readonly ContractRule<Context, Capability>[],
  options: RunContractOptions<Capability>,
  createContext: RuleContextFactory<Context, Capability>,
): Promise<ContractReport> {
  const known = options.knownCapabilities ?? [...new Set(rules.flatMap((rule) => rule.requires ?? []))]
  const planned = planContract(rules, options, known)
  const results = []
  for (const entry of planned) {
    const { error: _error, ...result } = await executeRule(
      entry,
      createContext,
      options.timeoutMs ?? DEFAULT_RULE_TIMEOUT_MS,
    )
    results.push(result)
  }
  return createContractReport(options.name, options.kind ?? 'contract', options.capabilities ?? [], results)
}
