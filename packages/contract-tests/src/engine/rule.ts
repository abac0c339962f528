/** How binding a rule is: a MUST failure fails compliance; a SHOULD failure is a warning-level gap. */
export type RuleLevel = 'MUST' | 'SHOULD'

/**
 * Capabilities a persister declares; rules that need an undeclared one are skipped with a reason.
 * Paging is no longer a capability: every persister MUST page (DESIGN §10.9).
 */
export type PersisterCapability = 'durable' | 'userScoping' | 'leases' | 'retention'

/** Every persister capability name, in documentation order. */
export const PERSISTER_CAPABILITIES: readonly PersisterCapability[] = [
  'durable',
  'userScoping',
  'leases',
  'retention',
]

/** A persister capability of kit 1 that every persister now must meet: accepted and ignored. */
export const RETIRED_PERSISTER_CAPABILITY = 'pagination'

/** Capabilities an adapter declares. */
export type AdapterCapability =
  | 'toolCalls'
  | 'parallelToolCalls'
  | 'thinking'
  | 'images'
  | 'usage'
  | 'providerSessionId'
  | 'structuredOutput'

/** Every adapter capability name, in documentation order. */
export const ADAPTER_CAPABILITIES: readonly AdapterCapability[] = [
  'toolCalls',
  'parallelToolCalls',
  'thinking',
  'images',
  'usage',
  'providerSessionId',
  'structuredOutput',
]

/**
 * One numbered contract rule. Its test name is `${id} [${level}] ${title}`, e.g.
 * `P-MSG-003 [MUST] upsert keeps position`.
 */
export interface ContractRule<Context, Capability extends string = string> {
  /** Stable id: `P-<GROUP>-<NNN>` for persisters, `A-<GROUP>-<NNN>` for adapters. Never reused. */
  readonly id: string
  readonly level: RuleLevel
  readonly title: string
  /** The group heading in docs/contract-tests.md, e.g. `Sessions`. */
  readonly group: string
  /** Capabilities the implementation must declare for this rule to run. Default is none. */
  readonly requires?: readonly Capability[]
  /** What to look at when it fails. */
  readonly hint?: string
  /** Default is the binding's timeout. */
  readonly timeoutMs?: number
  /**
   * A contract option the rule needs (e.g. `freshProcess`): without it the rule is skipped, with
   * the reason. Default is none.
   */
  readonly requiresOption?: string
  /** Runs the check; throws a {@link ContractViolation} (or any error) when the rule is broken. */
  run(context: Context): Promise<void>
}

/** A broken rule: carries the rule id, what was expected, what was seen, and a hint. */
export class ContractViolation extends Error {
  override name = 'ContractViolation'
  readonly ruleId: string
  readonly expected: unknown
  readonly actual: unknown
  readonly hint: string | undefined

  constructor(
    ruleId: string,
    message: string,
    details: { expected?: unknown; actual?: unknown; hint?: string; cause?: unknown } = {},
  ) {
    super(
      `${ruleId}: ${message}` +
        ('expected' in details ? `\n  expected: ${preview(details.expected)}` : '') +
        ('actual' in details ? `\n  actual:   ${preview(details.actual)}` : '') +
        (details.hint ? `\n  hint: ${details.hint}` : ''),
      details.cause === undefined ? undefined : { cause: details.cause },
    )
    this.ruleId = ruleId
    this.expected = details.expected
    this.actual = details.actual
    this.hint = details.hint
  }
}

/** A short, safe rendering of a value for failure messages. */
export function preview(value: unknown, max = 400): string {
  let text: string
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value))
  } catch {
    text = String(value)
  }
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text
}
