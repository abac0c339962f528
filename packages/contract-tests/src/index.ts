// The public API of @agentx/contract-tests (runner-agnostic). Runner bindings live in
// @agentx/contract-tests/vitest and @agentx/contract-tests/node-test.

export { ContractViolation, preview } from './engine/rule.js'
export type { AdapterCapability, ContractRule, PersisterCapability, RuleLevel } from './engine/rule.js'
export type {
  DecodedOutput,
  DecodedRequest,
  EncodedHttpError,
  ReceivedRequest,
  UsagePart,
  WireDialect,
} from './dialects/wire-dialect.js'
export type {
  Scenario,
  ScenarioBlock,
  ScenarioDelivery,
  ScenarioError,
  ScenarioReplay,
  ScenarioResponse,
  ScenarioUsage,
} from './fake-provider/scenario.js'

// Engine: run rules without a test runner, reports, assertions for custom rules
export { runContract } from './engine/run-contract.js'
export type { RunContractOptions } from './engine/run-contract.js'
export { planContract, ruleName } from './engine/plan-contract.js'
export type { ContractPlanOptions, PlannedRule, RulePlan } from './engine/plan-contract.js'
export { DEFAULT_RULE_TIMEOUT_MS, executeRule } from './engine/execute-rule.js'
export type { ExecutedRule, RuleContextFactory, RuleContextHandle } from './engine/execute-rule.js'
export { defineRule } from './engine/define-rule.js'
export type { RuleDefinition } from './engine/define-rule.js'
export { describeError, RuleCheck } from './engine/rule-check.js'
export { createContractReport } from './engine/contract-report.js'
export type { ContractReport, ContractSummary, RuleResult, RuleStatus } from './engine/contract-report.js'
export {
  CONTRACT_REPORT_DIR_ENV,
  CONTRACT_REPORT_ENV,
  contractReportTarget,
  writeContractReport,
} from './engine/write-contract-report.js'
export { renderContractDocs } from './engine/render-contract-docs.js'
export type { RuleCatalogue } from './engine/render-contract-docs.js'
export { contractCatalogues, dialectNames } from './rules/contract-catalogues.js'

// Persister rules
export {
  CONTRACT_SEED_ENV,
  contractSeed,
  createPersisterRuleContext,
  DEFAULT_CONTRACT_SEED,
  PERSISTER_CAPABILITIES,
  PREVIOUS_RELEASE_DATA,
  persisterRules,
  readInFreshProcess,
  writePreviousReleaseData,
} from './rules/persister/index.js'
export type {
  PersisterContractOptions,
  PersisterRule,
  PersisterRuleContext,
  PersisterStore,
  StoreSnapshot,
} from './rules/persister/index.js'

// Fake provider, wire dialects, adapter rules
export { startFakeProvider } from './fake-provider/start-fake-provider.js'
export type { StartFakeProviderOptions } from './fake-provider/start-fake-provider.js'
export type { FakeProvider, FakeProviderRequest } from './fake-provider/fake-provider.js'
export { anthropicMessagesDialect } from './dialects/anthropic-messages-dialect.js'
export { openAIChatDialect } from './dialects/openai-chat-dialect.js'
export { openAIResponsesDialect } from './dialects/openai-responses-dialect.js'
export { geminiDialect } from './dialects/gemini-dialect.js'
export {
  ADAPTER_CAPABILITIES,
  adapterRules,
  createAdapterRuleContext,
  DEFAULT_CONTRACT_IDLE_TIMEOUT_MS,
} from './rules/adapter/index.js'
export type {
  AdapterContractOptions,
  AdapterFactoryContext,
  AdapterHarness,
  AdapterHarnessRequest,
  AdapterRule,
  AdapterRuleContext,
} from './rules/adapter/index.js'
