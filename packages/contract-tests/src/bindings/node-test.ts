import { after, describe, it } from 'node:test'
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
 * Registers the persister contract as a `node:test` suite (run with `node --test`): one test per
 * rule, named `P-MSG-003 [MUST] upsert keeps position`. Rules needing an undeclared capability are
 * reported as skipped with the reason; `expectedFailures` must keep failing. Writes a JSON report
 * when `AGENTX_CONTRACT_REPORT` is set.
 *
 * @example
 * describePersisterContract({ name: 'MyPersister', create: () => new MyPersister(), capabilities: ['pagination'] })
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
        it(entry.testName, { skip: entry.plan.reason }, () => {})
        continue
      }
      it(entry.testName, { timeout: run.runnerTimeoutMs(entry) }, async () => {
        const result = await run.execute(entry)
        if (result.error) throw result.error
      })
    }
    after(() => {
      run.writeReportIfRequested()
    })
  })
}
