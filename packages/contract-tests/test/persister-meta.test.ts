import { describe, expect, it } from 'vitest'
import { runContract } from '../src/engine/run-contract.js'
import { brokenPersisterVariants } from '../src/reference/broken-persisters.js'
import { brokenVariantOptions, referencePersisterOptions } from '../src/reference/reference-persister-options.js'
import { createPersisterRuleContext, PERSISTER_CAPABILITIES, persisterRules } from '../src/rules/persister/index.js'
import type { ContractReport } from '../src/engine/contract-report.js'

async function runPersister(options: ReturnType<typeof referencePersisterOptions>): Promise<ContractReport> {
  return runContract(persisterRules, { ...options, kind: 'persister', knownCapabilities: PERSISTER_CAPABILITIES }, () =>
    createPersisterRuleContext(options),
  )
}

describe('persister rules against the reference and its broken variants', () => {
  it('the reference persister passes every rule with every capability declared', async () => {
    const report = await runPersister(referencePersisterOptions())
    const notPassed = report.results.filter((r) => r.status !== 'passed')
    expect(notPassed).toEqual([])
    expect(report.summary).toMatchObject({ total: persisterRules.length, passed: persisterRules.length, compliant: true })
  })

  it('each broken variant fails the rules that target its defect', { timeout: 120_000 }, async () => {
    const caughtBy = new Map<string, string[]>()
    const misses: string[] = []
    for (const variant of brokenPersisterVariants) {
      const report = await runPersister(brokenVariantOptions(variant))
      const failed = report.results.filter((r) => r.status === 'failed').map((r) => r.id)
      for (const id of failed) caughtBy.set(id, [...(caughtBy.get(id) ?? []), variant.name])
      for (const id of variant.catches) if (!failed.includes(id)) misses.push(`${variant.name} not caught by ${id}`)
    }
    expect(misses).toEqual([])
    const uncaught = persisterRules.filter((r) => r.level === 'MUST' && !caughtBy.has(r.id)).map((r) => r.id)
    expect(uncaught).toEqual([])
  })
})
