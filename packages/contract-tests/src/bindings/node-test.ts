import { after, describe, it } from 'node:test'
import { ConfigurationError } from '@agentx/core'
import type { ContractRun } from '../engine/contract-run.js'
import type { AdapterContractOptions } from '../rules/adapter/index.js'
import type { PersisterContractOptions } from '../rules/persister/index.js'
import { createAdapterContractRun, createPersisterContractRun } from './contract-runs.js'

/**
 * Registers the persister contract as a `node:test` suite (run with `node --test`): one test per
 * rule, named `P-MSG-003 [MUST] upsert keeps position`. Rules needing an undeclared capability are
 * reported as skipped with the reason; `expectedFailures` must keep failing. Writes a JSON report
 * when `AGENTX_CONTRACT_REPORT` or `AGENTX_CONTRACT_REPORT_DIR` is set.
 *
 * @example
 * // my-persister.contract.node.mjs, run by `node --test` with the pattern of `*.contract.node.mjs` files
 * describePersisterContract({ name: 'MyPersister', create: (store) => new MyPersister(store.key), capabilities: ['userScoping'] })
 */
export function describePersisterContract(options: PersisterContractOptions): void {
  assertNodeTest()
  registerContract(createPersisterContractRun(options))
}

/**
 * Registers the adapter contract as a `node:test` suite: one test per rule, named
 * `A-STR-001 [MUST] text deltas arrive in wire order …`. Each rule gets a fresh loopback fake
 * provider speaking `dialect` and a fresh adapter from `createAdapter({ baseURL, apiKey,
 * idleTimeoutMs })`. Rules needing an undeclared capability are skipped with the reason;
 * `expectedFailures` must keep failing. Run with `node --test`. Writes a JSON report when
 * `AGENTX_CONTRACT_REPORT` (a file or directory) or `AGENTX_CONTRACT_REPORT_DIR` is set.
 *
 * @example
 * describeAdapterContract({
 *   name: 'ClaudeAdapter',
 *   dialect: anthropicMessagesDialect,
 *   createAdapter: ({ baseURL, apiKey, idleTimeoutMs }) => new ClaudeAdapter({ baseURL, apiKey, idleTimeoutMs, maxRetries: 0 }),
 *   capabilities: ['toolCalls', 'parallelToolCalls', 'thinking', 'images', 'usage'],
 * })
 */
export function describeAdapterContract(options: AdapterContractOptions): void {
  assertNodeTest()
  registerContract(createAdapterContractRun(options))
}

/** Fails clearly when vitest picked up a node:test suite (name those `*.contract.node.mjs`). */
function assertNodeTest(): void {
  if (process.env.VITEST !== undefined) {
    throw new ConfigurationError(
      'This file uses @agentx/contract-tests/node-test but runs under vitest. Name node:test suites `*.contract.node.mjs` (outside vitest\'s `*.test.*` pattern) and run them with `node --test "**/*.contract.node.mjs"`.',
    )
  }
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
