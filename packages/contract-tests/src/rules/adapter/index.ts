import type { AdapterRule } from './define-adapter-rule.js'
import { streamRules } from './stream-rules.js'

export type { AdapterFactoryContext, AdapterHarness, AdapterHarnessRequest } from './adapter-harness.js'
export {
  ADAPTER_CAPABILITIES,
  createAdapterRuleContext,
  DEFAULT_CONTRACT_IDLE_TIMEOUT_MS,
  expectedFailureIds,
  validateAdapterOptions,
} from './adapter-rule-context.js'
export type { AdapterContractOptions, AdapterRuleContext } from './adapter-rule-context.js'
export type { AdapterRule } from './define-adapter-rule.js'

/** Every adapter rule, in documentation order. */
export const adapterRules: readonly AdapterRule[] = [...streamRules]
