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
      createPersisterContractRun({ ...referencePersisterOptions(), expectedFailures: { 'P-XYZ-001': 'typo' } }),
    ).toThrow(/'P-XYZ-001', which is not a rule id/)
  })
})
