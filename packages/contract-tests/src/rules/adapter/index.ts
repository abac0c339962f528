import type { AdapterRule } from './define-adapter-rule.js'
import { abortRules } from './abort-rules.js'
import { concurrencyRules } from './concurrency-rules.js'
import { errorRules } from './error-rules.js'
import { requestRules } from './request-rules.js'
import { streamRules } from './stream-rules.js'
import { toolRules } from './tool-rules.js'
import { usageRules } from './usage-rules.js'

export type { AdapterFactoryContext, AdapterHarness, AdapterHarnessRequest } from './adapter-harness.js'
export {
  ADAPTER_CAPABILITIES,
  createAdapterRuleContext,
  DEFAULT_CONTRACT_IDLE_TIMEOUT_MS,
  expectedFailureIds,
  expectedFailureReasons,
  validateAdapterOptions,
} from './adapter-rule-context.js'
export type { AdapterContractOptions, AdapterRuleContext } from './adapter-rule-context.js'
export type { AdapterRule } from './define-adapter-rule.js'

/**
 * Every adapter rule, in documentation order: Streaming, Abort and resources, Usage, Stop
 * reasons, Tool calls, Errors, Requests, Concurrency.
 */
export const adapterRules: readonly AdapterRule[] = [
  ...streamRules,
  ...abortRules,
  ...usageRules,
  ...toolRules,
  ...errorRules,
  ...requestRules,
  ...concurrencyRules,
]
