import { ConfigurationError } from '@agentx/core'
import { describe, expect, it } from 'vitest'
import { anthropicMessagesDialect } from '../src/dialects/anthropic-messages-dialect.js'
import type { ContractReport } from '../src/engine/contract-report.js'
import type { AdapterCapability } from '../src/engine/rule.js'
import type { FakeProvider } from '../src/fake-provider/fake-provider.js'
import type { Scenario } from '../src/fake-provider/scenario.js'
import { startFakeProvider } from '../src/fake-provider/start-fake-provider.js'
import { planContract } from '../src/engine/plan-contract.js'
import { runContract } from '../src/engine/run-contract.js'
import { openAIResponsesDialect } from '../src/dialects/openai-responses-dialect.js'
import { brokenAdapterVariants, brokenStatefulAdapterVariants } from '../src/reference/broken-adapters.js'
import { ReferenceAnthropicAdapter } from '../src/reference/reference-anthropic-adapter.js'
import { ReferenceResponsesAdapter } from '../src/reference/reference-responses-adapter.js'
import {
  ADAPTER_CAPABILITIES,
  type AdapterContractOptions,
  type AdapterFactoryContext,
  type AdapterHarness,
  type AdapterRule,
  adapterRules,
  createAdapterRuleContext,
  expectedFailureIds,
  validateAdapterOptions,
} from '../src/rules/adapter/index.js'

/** Everything the Anthropic Messages API can do; it has no provider-side conversation id. */
const REFERENCE_CAPABILITIES: AdapterCapability[] = [
  'toolCalls',
  'parallelToolCalls',
  'thinking',
  'images',
  'usage',
  'structuredOutput',
]
const STATEFUL_ONLY = adapterRules
  .filter((rule) => rule.requires?.includes('providerSessionId'))
  .map((rule) => rule.id)

async function runAdapter(
  options: AdapterContractOptions,
  rules: readonly AdapterRule[] = adapterRules,
): Promise<ContractReport> {
  return runContract(
    rules,
    { ...options, kind: 'adapter', knownCapabilities: ADAPTER_CAPABILITIES, expectedFailures: [] },
    () => createAdapterRuleContext(options),
  )
}

describe('adapter rules against the reference adapter and its broken variants', () => {
  it('the reference adapter passes every rule it can run; only the stateful-provider rules are skipped', async () => {
    const report = await runAdapter({
      name: 'ReferenceAnthropicAdapter',
      dialect: anthropicMessagesDialect,
      createAdapter: (context) => new ReferenceAnthropicAdapter(context),
      capabilities: REFERENCE_CAPABILITIES,
    })
    expect(report.results.filter((result) => result.status === 'failed')).toEqual([])
    expect(report.results.filter((result) => result.status === 'skipped').map((result) => result.id)).toEqual(
      STATEFUL_ONLY,
    )
    expect(report.summary).toMatchObject({
      total: adapterRules.length,
      passed: adapterRules.length - STATEFUL_ONLY.length,
      compliant: true,
    })
  })

  it('the stateful reference adapter (OpenAI Responses) passes the rules for stateful providers', async () => {
    const report = await runAdapter(
      {
        name: 'ReferenceResponsesAdapter',
        dialect: openAIResponsesDialect,
        createAdapter: (context) => new ReferenceResponsesAdapter(context),
        capabilities: ['providerSessionId'],
      },
      adapterRules.filter((rule) => STATEFUL_ONLY.includes(rule.id)),
    )
    expect(report.results.map((result) => [result.id, result.status])).toEqual(
      STATEFUL_ONLY.map((id) => [id, 'passed']),
    )
  })

  it('each broken variant fails the rules that target its defect, and together they trip every MUST rule', {
    timeout: 120_000,
  }, async () => {
    const caughtBy = new Map<string, string[]>()
    const misses: string[] = []
    const runs = [
      ...brokenAdapterVariants.map((variant) => ({
        variant,
        dialect: anthropicMessagesDialect,
        capabilities: REFERENCE_CAPABILITIES,
      })),
      ...brokenStatefulAdapterVariants.map((variant) => ({
        variant,
        dialect: openAIResponsesDialect,
        capabilities: ['providerSessionId'] as AdapterCapability[],
      })),
    ]
    for (const { variant, dialect, capabilities } of runs) {
      const rules = adapterRules.filter((rule) => variant.catches.includes(rule.id))
      expect(rules.map((rule) => rule.id).sort()).toEqual([...variant.catches].sort())
      const report = await runAdapter(
        {
          name: `broken: ${variant.name}`,
          dialect,
          createAdapter: (context) => variant.create(context),
          capabilities,
          idleTimeoutMs: 500,
        },
        rules,
      )
      const failed = report.results.filter((result) => result.status === 'failed').map((result) => result.id)
      for (const id of failed) caughtBy.set(id, [...(caughtBy.get(id) ?? []), variant.name])
      for (const id of variant.catches)
        if (!failed.includes(id)) misses.push(`${variant.name} not caught by ${id}`)
    }
    expect(misses).toEqual([])
    const uncaught = adapterRules
      .filter((rule) => rule.level === 'MUST' && !caughtBy.has(rule.id))
      .map((rule) => rule.id)
    expect(uncaught).toEqual([])
  })
})

describe('adapter contract planning and failure reports', () => {
  const base = {
    name: 'ReferenceAnthropicAdapter',
    dialect: anthropicMessagesDialect,
    createAdapter: (context: AdapterFactoryContext) => new ReferenceAnthropicAdapter(context),
    capabilities: REFERENCE_CAPABILITIES,
  }

  it('a rule listed in expectedFailures that passes fails the run, telling to remove it', async () => {
    const rules = adapterRules.filter((rule) => rule.id === 'A-STR-001')
    const report = await runContract(
      rules,
      { ...base, kind: 'adapter', knownCapabilities: ADAPTER_CAPABILITIES, expectedFailures: ['A-STR-001'] },
      () => createAdapterRuleContext(base),
    )
    expect(report.results).toMatchObject([
      {
        id: 'A-STR-001',
        status: 'failed',
        reason: 'expected failure now passes: remove A-STR-001 from expectedFailures',
      },
    ])
    expect(report.summary.compliant).toBe(false)
  })

  it('a failure names the rule, what was expected, what was seen and the hint', async () => {
    const leaky = brokenAdapterVariants.find((variant) => variant.name === 'no-retry-after')
    const options = { ...base, createAdapter: (context: AdapterFactoryContext) => leaky!.create(context) }
    const report = await runAdapter(
      options,
      adapterRules.filter((rule) => rule.id === 'A-ERR-003'),
    )
    const reason = report.results[0]?.reason ?? ''
    expect(reason).toMatch(
      /^A-ERR-003: retryAfterMs for retry-after: 7\n {2}expected: 7000\n {2}actual: {3}undefined\n {2}hint: /,
    )
  })

  it('rejects options that cannot work before running anything', () => {
    expect(() => validateAdapterOptions({ name: 'NoDialect', createAdapter: base.createAdapter })).toThrow(
      ConfigurationError,
    )
    expect(() => validateAdapterOptions({ ...base, capabilities: ['parallelToolCalls'] })).toThrow(
      /parallelToolCalls' without 'toolCalls'/,
    )
    // A misspelt key would skip every rule of what it meant to declare.
    expect(() => validateAdapterOptions({ ...base, capabilites: ['toolCalls'] } as never)).toThrow(
      /'capabilites' — did you mean 'capabilities'/,
    )
    expect(() =>
      planContract(
        adapterRules,
        { ...base, capabilities: ['telepathy' as AdapterCapability] },
        ADAPTER_CAPABILITIES,
      ),
    ).toThrow(/Unknown capability 'telepathy'/)
    expect(() =>
      planContract(
        adapterRules,
        {
          ...base,
          expectedFailures: expectedFailureIds({ ...base, expectedFailures: { 'A-XYZ-001': 'typo' } }),
        },
        ADAPTER_CAPABILITIES,
      ),
    ).toThrow(/'A-XYZ-001', which is not a rule id/)
  })

  it('skips rules whose capability is undeclared, with the reason in the test name', () => {
    const planned = planContract(adapterRules, { ...base, capabilities: [] }, ADAPTER_CAPABILITIES)
    const images = planned.find((entry) => entry.rule.id === 'A-REQ-005')
    expect(images?.plan).toEqual({ kind: 'skip', reason: "requires capability 'images', not declared" })
    expect(images?.testName).toBe(
      "A-REQ-005 [MUST] images in the history and the prompt are sent with their media type and bytes (skipped: requires capability 'images', not declared)",
    )
    expect(
      planned.filter((entry) => entry.plan.kind === 'run').every((entry) => !entry.rule.requires?.length),
    ).toBe(true)
  })

  it('every adapter rule has a unique A-<GROUP>-<NNN> id, a level, a title and a hint', () => {
    const ids = adapterRules.map((rule) => rule.id)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids.length).toBeGreaterThanOrEqual(30)
    for (const rule of adapterRules) {
      expect(rule.id).toMatch(/^A-(STR|ABT|USG|FIN|TOOL|ERR|REQ|CNC)-\d{3}$/)
      expect(['MUST', 'SHOULD']).toContain(rule.level)
      expect(rule.title.length).toBeGreaterThan(10)
      expect(rule.hint?.length ?? 0).toBeGreaterThan(10)
    }
    expect(new Set(ids.map((id) => id.split('-')[1]))).toEqual(
      new Set(['STR', 'ABT', 'USG', 'FIN', 'TOOL', 'ERR', 'REQ', 'CNC']),
    )
  })
})

/** A harness for an adapter that builds itself (the createHarness route), here over the fake provider. */
class SelfWiredHarness implements AdapterHarness {
  readonly #fake: FakeProvider
  constructor(fake: FakeProvider) {
    this.#fake = fake
  }
  enqueue(...scenarios: Scenario[]): void {
    this.#fake.enqueue(...scenarios)
  }
  get requests(): FakeProvider['requests'] {
    return this.#fake.requests
  }
  get disconnects(): number {
    return this.#fake.disconnects
  }
  get dialect(): FakeProvider['dialect'] {
    return this.#fake.dialect
  }
  waitForDisconnect(timeoutMs?: number): Promise<void> {
    return this.#fake.waitForDisconnect(timeoutMs)
  }
  createAdapter(context: AdapterFactoryContext): ReferenceAnthropicAdapter {
    return new ReferenceAnthropicAdapter({ ...context, baseURL: this.#fake.baseURL })
  }
  close(): Promise<void> {
    return this.#fake.close()
  }
}

describe('adapters that bring their own harness', () => {
  it('run the rules through createHarness without a dialect or createAdapter option', async () => {
    const options: AdapterContractOptions = {
      name: 'self-wired reference',
      createHarness: async () =>
        new SelfWiredHarness(await startFakeProvider({ dialect: anthropicMessagesDialect })),
      capabilities: REFERENCE_CAPABILITIES,
    }
    validateAdapterOptions(options)
    const ids = ['A-STR-001', 'A-ABT-004', 'A-ERR-006', 'A-REQ-003', 'A-TOOL-002']
    const rules = adapterRules.filter((rule) => ids.includes(rule.id))
    const report = await runAdapter(options, rules)
    expect(report.results.map((result) => [result.id, result.status])).toEqual(
      rules.map((rule) => [rule.id, 'passed']),
    )
  })
})
