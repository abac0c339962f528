import { afterAll, describe, it } from 'vitest'
import { type ContractRun, createContractRun } from '../engine/contract-run.js'
import type { PersisterCapability } from '../engine/rule.js'
import {
  createPersisterRuleContext,
  PERSISTER_CAPABILITIES,
  type PersisterContractOptions,
  type PersisterRuleContext,
  persisterRules,
  validatePersisterOptions,
} from '../rules/persister/index.js'

/**
 * Registers the persister contract as a vitest suite: one test per rule, named
 * `P-MSG-003 [MUST] upsert keeps position`. Rules needing an undeclared capability are skipped with
 * the reason in their name; `expectedFailures` must keep failing. Call it at the top level of a
 * `*.contract.test.ts` file. Writes a JSON report when `AGENTX_CONTRACT_REPORT` is set.
 *
 * @example
 * describePersisterContract({
 *   name: 'SqlitePersister',
 *   create: () => new SqlitePersister({ filename: tempFile() }),
 *   reopen: async (p) => { await p.close?.(); return new SqlitePersister({ filename: fileOf(p) }) },
 *   capabilities: ['durable', 'pagination', 'userScoping'],
 * })
 */
export function describePersisterContract(options: PersisterContractOptions): void {
  validatePersisterOptions(options)
  registerContract(
    createContractRun<PersisterRuleContext, PersisterCapability>({
      kind: 'persister',
      rules: persisterRules,
      options,
      knownCapabilities: PERSISTER_CAPABILITIES,
      createContext: () => createPersisterRuleContext(options),
    }),
  )
}

function registerContract<Context, Capability extends string>(run: ContractRun<Context, Capability>): void {
  describe(run.suiteName, () => {
    for (const entry of run.planned) {
      if (entry.plan.kind === 'skip') {
        it.skip(entry.testName, () => {})
        continue
      }
      it(
        entry.testName,
        async () => {
          const result = await run.execute(entry)
          if (result.error) throw result.error
        },
        run.runnerTimeoutMs(entry),
      )
    }
    afterAll(() => {
      run.writeReportIfRequested()
    })
  })
}
