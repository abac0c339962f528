import { defineRule, type RuleDefinition } from '../../engine/define-rule.js'
import type { ContractRule, PersisterCapability } from '../../engine/rule.js'
import type { PersisterRuleContext } from './persister-rule-context.js'

/** A persister contract rule. */
export type PersisterRule = ContractRule<PersisterRuleContext, PersisterCapability>

/** {@link defineRule} for persister rules. */
export function definePersisterRule(
  definition: RuleDefinition<PersisterRuleContext, PersisterCapability>,
): PersisterRule {
  return defineRule(definition)
}
