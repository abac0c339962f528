import type { PersisterRule } from './define-persister-rule.js'
import { errorRules } from './error-rules.js'
import { leaseRules } from './lease-rules.js'
import { lifecycleRules } from './lifecycle-rules.js'
import { messageRules } from './message-rules.js'
import { messageStringRules } from './message-string-rules.js'
import { messageV2Rules } from './message-v2-rules.js'
import { migrationRules } from './migration-rules.js'
import { retentionRules } from './retention-rules.js'
import { sessionRules } from './session-rules.js'
import { sessionV2Rules } from './session-v2-rules.js'

export type { PersisterRule } from './define-persister-rule.js'
export {
  createPersisterRuleContext,
  PERSISTER_CAPABILITIES,
  validatePersisterOptions,
  withoutPaginationCapability,
} from './persister-rule-context.js'
export type {
  PersisterContractOptions,
  PersisterRuleContext,
  PersisterStore,
} from './persister-rule-context.js'
export { readInFreshProcess } from './read-in-fresh-process.js'
export { CONTRACT_SEED_ENV, contractSeed, DEFAULT_CONTRACT_SEED } from './randomized-check.js'
export type { StoreSnapshot } from './read-in-fresh-process.js'
export { PREVIOUS_RELEASE_DATA, writePreviousReleaseData } from './previous-release-data.js'

/**
 * Every persister rule, in documentation order: Sessions, Messages, Lifecycle, Errors, Leases,
 * Retention, Migration (optional).
 */
export const persisterRules: readonly PersisterRule[] = [
  ...sessionRules,
  ...sessionV2Rules,
  ...messageRules,
  ...messageV2Rules,
  ...messageStringRules,
  ...lifecycleRules,
  ...errorRules,
  ...leaseRules,
  ...retentionRules,
  ...migrationRules,
]
