import { ConfigurationError } from '@agentx/core'
import type { ContractRule } from './rule.js'

/** What a runner does with one rule, decided before anything runs. */
export type RulePlan =
  | { readonly kind: 'run' }
  | { readonly kind: 'skip'; readonly reason: string }
  /** A known gap listed in `expectedFailures`: it runs and must fail; passing fails the run. */
  | { readonly kind: 'expect-failure' }

/** A rule with its {@link RulePlan} and test name. */
export interface PlannedRule<Context, Capability extends string = string> {
  readonly rule: ContractRule<Context, Capability>
  readonly plan: RulePlan
  /** `${id} [${level}] ${title}`, plus the skip reason or `(expected failure)`. */
  readonly testName: string
}

/** What every contract description (persister or adapter) declares about the implementation. */
export interface ContractPlanOptions<Capability extends string = string> {
  /** Shown in test names and the report, e.g. `SqlitePersister`. */
  readonly name: string
  /** What the implementation supports. Rules that need an undeclared capability are skipped. Default is none. */
  readonly capabilities?: readonly Capability[]
  /**
   * Rules the implementation is known to break: their ids, or a record of id → reason. They still
   * run and must fail; one that passes fails the run ("expected failure now passes: remove it").
   * Default is none.
   */
  readonly expectedFailures?: readonly string[] | Readonly<Record<string, string>>
  /** Why each expected failure is known, by rule id; shown in its test name. Default is none. */
  readonly expectedFailureReasons?: Readonly<Record<string, string>>
}

/** The base test name of a rule: `P-MSG-003 [MUST] upsert keeps position`. */
export function ruleName(rule: ContractRule<never, string>): string {
  return `${rule.id} [${rule.level}] ${rule.title}`
}

/**
 * Decides, for every rule, whether it runs, is skipped (an undeclared capability, with the reason)
 * or runs as an expected failure. Called by the bindings and {@link runContract}.
 *
 * Throws {@link ConfigurationError} for an `expectedFailures` id that names no rule (a typo would
 * otherwise hide a gap forever) or an unknown capability name.
 */
export function planContract<Context, Capability extends string>(
  rules: readonly ContractRule<Context, Capability>[],
  options: ContractPlanOptions<Capability>,
  knownCapabilities: readonly Capability[],
): PlannedRule<Context, Capability>[] {
  if (typeof options.name !== 'string' || options.name.length === 0) {
    throw new ConfigurationError('A contract description needs a non-empty `name`.')
  }
  const declared = new Set<string>(options.capabilities ?? [])
  for (const capability of declared) {
    if (!(knownCapabilities as readonly string[]).includes(capability)) {
      throw new ConfigurationError(
        `Unknown capability '${capability}' in ${options.name}: use one of ${knownCapabilities.join(', ')}.`,
      )
    }
  }
  const ids = new Set(rules.map((rule) => rule.id))
  const { expected, reasons } = expectedFailuresOf(options)
  for (const id of expected) {
    if (!ids.has(id)) {
      throw new ConfigurationError(
        `expectedFailures of ${options.name} names '${id}', which is not a rule id.`,
      )
    }
  }
  return rules.map((rule) => {
    const missing = (rule.requires ?? []).filter((capability) => !declared.has(capability))
    const base = ruleName(rule)
    const reason =
      missing.length > 0
        ? `requires capability ${missing.map((c) => `'${c}'`).join(', ')}, not declared`
        : rule.requiresOption !== undefined &&
            (options as unknown as Record<string, unknown>)[rule.requiresOption] === undefined
          ? `requires the option '${rule.requiresOption}', not given`
          : undefined
    if (reason !== undefined) {
      if (expected.has(rule.id)) {
        // A known gap that would not run would vanish from the report without a word.
        throw new ConfigurationError(
          `expectedFailures of ${options.name} lists '${rule.id}', which would be skipped: it ${reason}. Declare what it needs, or remove it from expectedFailures.`,
        )
      }
      return { rule, plan: { kind: 'skip', reason }, testName: `${base} (skipped: ${reason})` }
    }
    if (expected.has(rule.id)) {
      const why = reasons[rule.id]
      return {
        rule,
        plan: { kind: 'expect-failure' },
        testName: `${base} (expected failure${why ? `: ${why}` : ''})`,
      }
    }
    return { rule, plan: { kind: 'run' }, testName: base }
  })
}

/** The ids and reasons of `expectedFailures`, in either form. */
function expectedFailuresOf(options: ContractPlanOptions<string>): {
  expected: Set<string>
  reasons: Readonly<Record<string, string>>
} {
  const given: unknown = options.expectedFailures ?? []
  if (Array.isArray(given)) {
    return { expected: new Set(given.map(String)), reasons: options.expectedFailureReasons ?? {} }
  }
  const isRecord =
    typeof given === 'object' &&
    given !== null &&
    (Object.getPrototypeOf(given) === Object.prototype || Object.getPrototypeOf(given) === null) &&
    Object.values(given).every((reason) => typeof reason === 'string')
  if (isRecord) {
    const record = given as Record<string, string>
    return {
      expected: new Set(Object.keys(record)),
      reasons: { ...record, ...options.expectedFailureReasons },
    }
  }
  throw new ConfigurationError(
    `expectedFailures of ${options.name} must be an array of rule ids or a plain object of id → reason (a string); a Map or other values are not read.`,
  )
}
