import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { ContractReport } from '../src/engine/contract-report.js'
import { runContract } from '../src/engine/run-contract.js'
import { brokenPersisterVariants } from '../src/reference/broken-persisters.js'
import {
  brokenVariantOptions,
  referencePersisterOptions,
} from '../src/reference/reference-persister-options.js'
import {
  createPersisterRuleContext,
  PERSISTER_CAPABILITIES,
  type PersisterContractOptions,
  persisterRules,
} from '../src/rules/persister/index.js'

/** A fresh process opens reference stores through test/reference-store.ts, from source. */
const freshProcess = {
  module: new URL('./reference-store.ts', import.meta.url),
  execArgv: [
    '--conditions=@agentx/source',
    '--disable-warning=ExperimentalWarning',
    '--import',
    fileURLToPath(new URL('./register-typescript-source.mjs', import.meta.url)),
  ],
}

async function runPersister(
  options: PersisterContractOptions,
  only?: readonly string[],
): Promise<ContractReport> {
  const withProcess = { ...options, freshProcess }
  const rules = only ? persisterRules.filter((rule) => only.includes(rule.id)) : persisterRules
  return runContract(
    rules,
    {
      ...withProcess,
      expectedFailures: [],
      capabilities: PERSISTER_CAPABILITIES,
      kind: 'persister',
      knownCapabilities: PERSISTER_CAPABILITIES,
      timeoutMs: 60_000,
    },
    () => createPersisterRuleContext(withProcess),
  )
}

describe('persister rules against the reference and its broken variants', () => {
  it('the reference persister passes every rule with every capability and option given', {
    timeout: 240_000,
  }, async () => {
    const report = await runPersister(referencePersisterOptions())
    const notPassed = report.results.filter((r) => r.status !== 'passed')
    expect(notPassed).toEqual([])
    expect(report.summary).toMatchObject({
      total: persisterRules.length,
      passed: persisterRules.length,
      compliant: true,
    })
  })

  it('each broken variant fails the rules that target its defect, and every MUST rule kills one', {
    timeout: 900_000,
  }, async () => {
    const caughtBy = new Map<string, string[]>()
    const misses: string[] = []
    for (const variant of brokenPersisterVariants) {
      // Each variant runs the rules it claims to break; every MUST rule must be claimed (and
      // broken) by at least one variant.
      const report = await runPersister(brokenVariantOptions(variant), variant.catches)
      const failed = report.results.filter((r) => r.status === 'failed').map((r) => r.id)
      for (const id of failed) caughtBy.set(id, [...(caughtBy.get(id) ?? []), variant.name])
      for (const id of variant.catches)
        if (!failed.includes(id)) misses.push(`${variant.name} not caught by ${id}`)
    }
    expect(misses).toEqual([])
    const uncaught = persisterRules.filter((r) => r.level === 'MUST' && !caughtBy.has(r.id)).map((r) => r.id)
    expect(uncaught).toEqual([])
  })
})

describe('persister kit options', () => {
  it('takes expectedFailures as ids or as a record of id → reason, like the adapter kit', async () => {
    const { createPersisterContractRun } = await import('../src/bindings/contract-runs.js')
    for (const expectedFailures of [['P-SES-001'], { 'P-SES-001': 'a known gap' }]) {
      const run = createPersisterContractRun({ ...referencePersisterOptions(), expectedFailures })
      const entry = run.planned.find((planned) => planned.rule.id === 'P-SES-001')
      expect(entry?.plan).toEqual({ kind: 'expect-failure' })
    }
    expect(() =>
      createPersisterContractRun({
        ...referencePersisterOptions(),
        expectedFailures: { 'P-XYZ-001': 'typo' },
      }),
    ).toThrow(/'P-XYZ-001', which is not a rule id/)
  })

  it('runContract takes the record form of expectedFailures too, with its reasons', async () => {
    const options = {
      ...referencePersisterOptions(),
      expectedFailures: { 'P-SES-001': 'a known gap' },
      knownCapabilities: PERSISTER_CAPABILITIES,
    }
    // Before, the record form threw "object is not iterable" here.
    const report = await runContract(
      persisterRules.filter((rule) => rule.id === 'P-SES-001'),
      options,
      () => createPersisterRuleContext(options),
    )
    // The reference passes the rule: listed as a known gap, it fails the run as "now passes".
    expect(report.results.map((result) => [result.id, result.status])).toEqual([['P-SES-001', 'failed']])
    expect(report.results[0]?.reason).toMatch(/expected failure now passes/)
  })

  it('refuses a misspelt option key, naming the closest one, instead of skipping what it meant', async () => {
    const { createPersisterContractRun } = await import('../src/bindings/contract-runs.js')
    const { capabilities, ...rest } = referencePersisterOptions()
    const typo = { ...rest, capabilites: capabilities } as unknown as PersisterContractOptions
    expect(() => createPersisterContractRun(typo)).toThrow(/'capabilites' — did you mean 'capabilities'/)
    // Through runContract, every rule that runs fails with the same message: never a green run.
    const report = await runContract(persisterRules.slice(0, 2), typo, () => createPersisterRuleContext(typo))
    expect(report.results.map((result) => result.status)).toEqual(['failed', 'failed'])
    expect(report.results[0]?.reason).toMatch(/capabilites/)
  })

  it('refuses expectedFailures it cannot read (a Map, a reason that is not text) instead of dropping them', async () => {
    const { createPersisterContractRun } = await import('../src/bindings/contract-runs.js')
    for (const expectedFailures of [new Map([['P-SES-001', 'gap']]), { 'P-SES-001': false }]) {
      expect(() =>
        createPersisterContractRun({
          ...referencePersisterOptions(),
          expectedFailures: expectedFailures as never,
        }),
      ).toThrow(/must be an array of rule ids or a plain object/)
    }
  })

  it('refuses an expected failure that would be skipped (its capability is not declared)', async () => {
    const { createPersisterContractRun } = await import('../src/bindings/contract-runs.js')
    const options = { ...referencePersisterOptions(), capabilities: [], expectedFailures: ['P-LSE-001'] }
    // Before, the rule was skipped and the run reported no gap at all.
    expect(() => createPersisterContractRun(options)).toThrow(
      /lists 'P-LSE-001', which would be skipped: it requires capability 'leases'/,
    )
  })
})
