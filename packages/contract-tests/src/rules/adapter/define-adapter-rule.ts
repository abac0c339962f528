import { defineRule, type RuleDefinition } from '../../engine/define-rule.js'
import type { AdapterCapability, ContractRule } from '../../engine/rule.js'
import type { AdapterRuleContext } from './adapter-rule-context.js'

/** An adapter contract rule. */
export type AdapterRule = ContractRule<AdapterRuleContext, AdapterCapability>

/** {@link defineRule} for adapter rules. */
export function defineAdapterRule(
  definition: RuleDefinition<AdapterRuleContext, AdapterCapability>,
): AdapterRule {
  return defineRule(definition)
}
