import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { ContractReport } from '../src/engine/contract-report.js'
import { runContract } from '../src/engine/run-contract.js'
import { referencePersisterOptions } from '../src/reference/reference-persister-options.js'
import { createPersisterRuleContext, persisterRules } from '../src/rules/persister/index.js'
import { adapterRules } from '../src/rules/adapter/index.js'

describe('runContract', () => {
  it('fails the rule during which the implementation leaves a rejection unhandled, instead of crashing', () => {
    const child = spawnSync(
      process.execPath,
      [
        '--conditions=@agentx/source',
        '--disable-warning=ExperimentalWarning',
        '--import',
        fileURLToPath(new URL('./register-typescript-source.mjs', import.meta.url)),
        fileURLToPath(new URL('./fixtures/stray-rejection.ts', import.meta.url)),
      ],
      { encoding: 'utf8', timeout: 60_000 },
    )
    expect(child.stderr).not.toMatch(/socket hang up/)
    expect(child.status).toBe(0)
    const report = JSON.parse(child.stdout) as ContractReport
    expect(report.results.map((result) => [result.id, result.status])).toEqual([
      ['X-STR-001', 'failed'],
      ['X-STR-002', 'passed'],
      ['X-STR-003', 'failed'],
    ])
    expect(report.results[0]?.reason).toBe(
      'X-STR-001: the implementation left a promise rejection unhandled: Error: socket hang up',
    )
    expect(report.results[2]?.reason).toMatch(/unhandled: Error: late/)
    expect(report.summary.compliant).toBe(false)
  })

  it('takes the kit-1 persister capability `pagination` as the bindings do (README)', async () => {
    const options = { ...referencePersisterOptions(), capabilities: ['pagination', 'durable'] as const }
    const rules = persisterRules.filter((rule) => rule.id === 'P-SES-001')
    const report = await runContract(rules, options as never, () =>
      createPersisterRuleContext(options as never),
    )
    expect(report.results.map((result) => result.status)).toEqual(['passed'])
    expect(report.capabilities).toEqual(['durable'])
  })

  it('knows every capability of the kit rule set it runs, even when the rules run need none of them', async () => {
    // One persister rule that requires nothing: declaring `retention` is still no typo.
    const options = { ...referencePersisterOptions(), capabilities: ['retention'] as const }
    const rules = persisterRules.filter((rule) => rule.id === 'P-SES-001')
    const report = await runContract(rules, options as never, () =>
      createPersisterRuleContext(options as never),
    )
    expect(report.results.map((result) => result.status)).toEqual(['passed'])
    // Still refused: a name that is no capability of the rule set.
    await expect(
      runContract(rules, { ...options, capabilities: ['retension'] } as never, () =>
        createPersisterRuleContext(options as never),
      ),
    ).rejects.toThrow(/Unknown capability 'retension'.*durable, userScoping, leases, retention/)
    await expect(
      runContract(
        adapterRules.slice(0, 1),
        { name: 'a', capabilities: ['pagination'] } as never,
        async () => ({
          context: undefined as never,
          dispose: async () => {},
        }),
      ),
    ).rejects.toThrow(/Unknown capability 'pagination'.*toolCalls/)
  })
})
