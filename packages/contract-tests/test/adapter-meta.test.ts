import { describe, expect, it } from 'vitest'
import { anthropicMessagesDialect } from '../src/dialects/anthropic-messages-dialect.js'
import type { ContractReport } from '../src/engine/contract-report.js'
import type { AdapterCapability } from '../src/engine/rule.js'
import { runContract } from '../src/engine/run-contract.js'
import { brokenAdapterVariants } from '../src/reference/broken-adapters.js'
import { ReferenceAnthropicAdapter } from '../src/reference/reference-anthropic-adapter.js'
import {
  ADAPTER_CAPABILITIES,
  type AdapterContractOptions,
  type AdapterRule,
  adapterRules,
  createAdapterRuleContext,
} from '../src/rules/adapter/index.js'

/** Everything the Anthropic Messages API can do; it has no provider-side conversation id. */
const REFERENCE_CAPABILITIES: AdapterCapability[] = [
  'toolCalls',
  'parallelToolCalls',
  'thinking',
  'images',
  'usage',
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

  it('each broken variant fails the rules that target its defect, and together they trip every MUST rule', {
    timeout: 120_000,
  }, async () => {
    const caughtBy = new Map<string, string[]>()
    const misses: string[] = []
    for (const variant of brokenAdapterVariants) {
      const rules = adapterRules.filter((rule) => variant.catches.includes(rule.id))
      expect(rules.map((rule) => rule.id).sort()).toEqual([...variant.catches].sort())
      const report = await runAdapter(
        {
          name: `broken: ${variant.name}`,
          dialect: anthropicMessagesDialect,
          createAdapter: (context) => variant.create(context),
          capabilities: REFERENCE_CAPABILITIES,
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
    expect(uncaught).toEqual(STATEFUL_ONLY)
  })
})
