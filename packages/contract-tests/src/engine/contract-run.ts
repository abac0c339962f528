import { type ContractReport, createContractReport, type RuleResult } from './contract-report.js'
import {
  DEFAULT_RULE_TIMEOUT_MS,
  type ExecutedRule,
  executeRule,
  type RuleContextFactory,
} from './execute-rule.js'
import { type ContractPlanOptions, type PlannedRule, planContract } from './plan-contract.js'
import type { ContractRule } from './rule.js'
import { contractReportTarget, writeContractReport } from './write-contract-report.js'

/** What a binding passes to {@link createContractRun}. */
export interface ContractRunOptions<Context, Capability extends string> {
  /** `persister` or `adapter`. */
  readonly kind: string
  readonly rules: readonly ContractRule<Context, Capability>[]
  readonly options: ContractPlanOptions<Capability> & { readonly timeoutMs?: number }
  /** Every capability name of this rule set. */
  readonly knownCapabilities: readonly Capability[]
  readonly createContext: RuleContextFactory<Context, Capability>
}

/** One contract description being run by a test runner: the plan, per-rule execution and the report. */
export interface ContractRun<Context, Capability extends string> {
  /** `persister contract: <name>`: the suite name the bindings use. */
  readonly suiteName: string
  readonly planned: readonly PlannedRule<Context, Capability>[]
  /** The time limit a runner should give one rule's test (the engine's own limit plus slack). */
  runnerTimeoutMs(entry: PlannedRule<Context, Capability>): number
  /** Runs one rule (see {@link executeRule}) and records its result for the report. */
  execute(entry: PlannedRule<Context, Capability>): Promise<ExecutedRule>
  /** The report so far: skipped rules plus every rule executed (rules a runner filter left out are absent). */
  report(): ContractReport
  /** Writes the report when `AGENTX_CONTRACT_REPORT` or `AGENTX_CONTRACT_REPORT_DIR` is set; returns the file written. */
  writeReportIfRequested(env?: Record<string, string | undefined>): string | undefined
}

/**
 * Plans a contract description and tracks its results, so that every binding skips, expects
 * failures and reports identically. Throws like {@link planContract} for bad options.
 */
export function createContractRun<Context, Capability extends string>(
  run: ContractRunOptions<Context, Capability>,
): ContractRun<Context, Capability> {
  const planned = planContract(run.rules, run.options, run.knownCapabilities)
  const timeoutMs = run.options.timeoutMs ?? DEFAULT_RULE_TIMEOUT_MS
  const results = new Map<string, RuleResult>()
  const report = (): ContractReport =>
    createContractReport(
      run.options.name,
      run.kind,
      run.options.capabilities ?? [],
      planned.flatMap((entry): RuleResult[] => {
        if (entry.plan.kind === 'skip') {
          const { rule } = entry
          return [
            {
              id: rule.id,
              level: rule.level,
              title: rule.title,
              group: rule.group,
              status: 'skipped',
              reason: entry.plan.reason,
            },
          ]
        }
        const result = results.get(entry.rule.id)
        return result ? [result] : []
      }),
    )
  return {
    suiteName: `${run.kind} contract: ${run.options.name}`,
    planned,
    runnerTimeoutMs: (entry) => (entry.rule.timeoutMs ?? timeoutMs) + 5_000,
    async execute(entry) {
      const executed = await executeRule(entry, run.createContext, timeoutMs)
      const { error: _error, ...result } = executed
      results.set(entry.rule.id, result)
      return executed
    },
    report,
    writeReportIfRequested(env = process.env) {
      const target = contractReportTarget(env)
      return target ? writeContractReport(report(), target) : undefined
    },
  }
}
