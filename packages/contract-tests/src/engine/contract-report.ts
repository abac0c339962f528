import type { RuleLevel } from './rule.js'

/** What happened to one rule in a contract run. */
export type RuleStatus = 'passed' | 'failed' | 'skipped' | 'expected-failure'

/** The outcome of one rule, as it appears in a {@link ContractReport}. */
export interface RuleResult {
  readonly id: string
  readonly level: RuleLevel
  readonly title: string
  readonly group: string
  readonly status: RuleStatus
  /**
   * Why: the failure message (`failed`, `expected-failure`), the missing capability (`skipped`),
   * or `expected failure now passes: remove it …` for a known gap that no longer fails.
   */
  readonly reason?: string
  /** Wall time of the check, context set-up and clean-up included. Absent for skipped rules. */
  readonly durationMs?: number
}

/** Counts over a report's {@link RuleResult}s. */
export interface ContractSummary {
  readonly total: number
  readonly passed: number
  readonly failed: number
  readonly skipped: number
  readonly expectedFailures: number
  /** MUST rules that failed or are listed as expected failures: the compliance gaps. */
  readonly mustGaps: number
  /** No rule failed and no MUST rule is a known gap. Skipped rules do not count against it. */
  readonly compliant: boolean
}

/** The JSON conformance report of one implementation against one rule set. */
export interface ContractReport {
  /** The `name` the implementation was described with. */
  readonly name: string
  /** `persister` or `adapter`. */
  readonly kind: string
  /** Capabilities the implementation declared. */
  readonly capabilities: readonly string[]
  /** One entry per rule, in rule order. */
  readonly results: readonly RuleResult[]
  readonly summary: ContractSummary
}

/** Builds a {@link ContractReport} from results, computing its {@link ContractSummary}. */
export function createContractReport(
  name: string,
  kind: string,
  capabilities: readonly string[],
  results: readonly RuleResult[],
): ContractReport {
  const count = (status: RuleStatus): number => results.filter((result) => result.status === status).length
  const failed = count('failed')
  const mustGaps = results.filter(
    (result) =>
      result.level === 'MUST' && (result.status === 'failed' || result.status === 'expected-failure'),
  ).length
  return {
    name,
    kind,
    capabilities: [...capabilities],
    results: [...results],
    summary: {
      total: results.length,
      passed: count('passed'),
      failed,
      skipped: count('skipped'),
      expectedFailures: count('expected-failure'),
      mustGaps,
      compliant: failed === 0 && mustGaps === 0,
    },
  }
}
