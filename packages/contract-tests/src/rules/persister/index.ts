import type { PersisterRule } from './define-persister-rule.js'
import { errorRules } from './error-rules.js'
import { lifecycleRules } from './lifecycle-rules.js'
import { messageRules } from './message-rules.js'
import { sessionRules } from './session-rules.js'

export type { PersisterRule } from './define-persister-rule.js'
export {
  createPersisterRuleContext,
  PERSISTER_CAPABILITIES,
  validatePersisterOptions,
} from './persister-rule-context.js'
export type { PersisterContractOptions, PersisterRuleContext } from './persister-rule-context.js'

/** Every persister rule, in documentation order: Sessions, Messages, Lifecycle, Errors. */
export const persisterRules: readonly PersisterRule[] = [
  ...sessionRules,
  ...messageRules,
  ...lifecycleRules,
  ...errorRules,
]
