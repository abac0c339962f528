import { type ContractRun, createContractRun } from '../engine/contract-run.js'
import type { AdapterCapability, PersisterCapability } from '../engine/rule.js'
import {
  ADAPTER_CAPABILITIES,
  type AdapterContractOptions,
  type AdapterRuleContext,
  adapterRules,
  createAdapterRuleContext,
  validateAdapterOptions,
} from '../rules/adapter/index.js'
import {
  createPersisterRuleContext,
  PERSISTER_CAPABILITIES,
  type PersisterContractOptions,
  type PersisterRuleContext,
  persisterRules,
  validatePersisterOptions,
  withoutPaginationCapability,
} from '../rules/persister/index.js'

/**
 * The persister contract as a runner-agnostic {@link ContractRun}. Each runner binding registers
 * its planned rules as tests. Throws a `ConfigurationError` for invalid options.
 */
export function createPersisterContractRun(
  options: PersisterContractOptions,
): ContractRun<PersisterRuleContext, PersisterCapability> {
  validatePersisterOptions(options)
  const normalised = withoutPaginationCapability(options)
  return createContractRun<PersisterRuleContext, PersisterCapability>({
    kind: 'persister',
    rules: persisterRules,
    options: {
      ...(normalised as typeof normalised & { capabilities?: readonly PersisterCapability[] }),
      // Either form, read (and refused when unreadable) by planContract.
      ...(options.expectedFailures === undefined ? {} : { expectedFailures: options.expectedFailures }),
    },
    knownCapabilities: PERSISTER_CAPABILITIES,
    createContext: () => createPersisterRuleContext(normalised),
  })
}

/**
 * The adapter contract as a runner-agnostic {@link ContractRun}. Each runner binding registers
 * its planned rules as tests. Throws a `ConfigurationError` for invalid options.
 */
export function createAdapterContractRun(
  options: AdapterContractOptions,
): ContractRun<AdapterRuleContext, AdapterCapability> {
  validateAdapterOptions(options)
  return createContractRun<AdapterRuleContext, AdapterCapability>({
    kind: 'adapter',
    rules: adapterRules,
    options: {
      ...options,
      // Either form, read (and refused when unreadable) by planContract.
      ...(options.expectedFailures === undefined ? {} : { expectedFailures: options.expectedFailures }),
    },
    knownCapabilities: ADAPTER_CAPABILITIES,
    createContext: () => createAdapterRuleContext(options),
  })
}
