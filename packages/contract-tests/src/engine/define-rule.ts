import { RuleCheck } from './rule-check.js'
import type { ContractRule, RuleLevel } from './rule.js'

/** What {@link defineRule} takes: a rule's metadata and its check, which receives a bound {@link RuleCheck}. */
export interface RuleDefinition<Context, Capability extends string> {
  readonly id: string
  readonly level: RuleLevel
  readonly title: string
  readonly group: string
  readonly requires?: readonly Capability[]
  readonly hint?: string
  readonly timeoutMs?: number
  readonly requiresOption?: string
  check(context: Context, check: RuleCheck): Promise<void>
}

/** Builds a {@link ContractRule} whose `run` passes a {@link RuleCheck} bound to the rule's id and hint. */
export function defineRule<Context, Capability extends string>(
  definition: RuleDefinition<Context, Capability>,
): ContractRule<Context, Capability> {
  const { check, ...meta } = definition
  return {
    ...meta,
    run: (context: Context) => check(context, new RuleCheck(definition.id, definition.hint)),
  }
}
