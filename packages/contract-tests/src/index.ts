// The public API of @agentx/contract-tests (runner-agnostic). Runner bindings live in
// @agentx/contract-tests/vitest and @agentx/contract-tests/node-test.

export { ContractViolation, preview } from './engine/rule.js'
export type { AdapterCapability, ContractRule, PersisterCapability, RuleLevel } from './engine/rule.js'
export type {
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
  ScenarioResponse,
  ScenarioUsage,
} from './fake-provider/scenario.js'

// --- engine, persister rules, bindings support (owned by the engine/persister side) ---

// --- fake provider, dialects, adapter rules (owned by the adapter side) ---
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
