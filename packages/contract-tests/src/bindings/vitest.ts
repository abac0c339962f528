import { ConfigurationError } from '@agentx/core'
import { afterAll, describe, it } from 'vitest'
import type { ContractRun } from '../engine/contract-run.js'
import type { AdapterContractOptions } from '../rules/adapter/index.js'
import type { PersisterContractOptions } from '../rules/persister/index.js'
import { createAdapterContractRun, createPersisterContractRun } from './contract-runs.js'

/**
 * Registers the persister contract as a vitest suite: one test per rule, named
 * `P-MSG-003 [MUST] upsert keeps position`. Rules needing an undeclared capability are skipped with
 * the reason in their name; `expectedFailures` must keep failing. Call it at the top level of a
 * `*.contract.test.ts` file. Writes a JSON report when
 * `AGENTX_CONTRACT_REPORT` or `AGENTX_CONTRACT_REPORT_DIR` is set.
 *
 * @example
 * describePersisterContract({
 *   name: 'SqlitePersister',
 *   create: (store) => new SqlitePersister({ filename: fileOf(store) }),
 *   reopen: (store) => new SqlitePersister({ filename: fileOf(store) }),
 *   capabilities: ['durable', 'userScoping', 'leases', 'retention'],
 * })
 */
export function describePersisterContract(options: PersisterContractOptions): void {
  assertVitest()
  registerContract(createPersisterContractRun(options))
}

/**
 * Registers the adapter contract as a vitest suite: one test per rule, named
 * `A-STR-001 [MUST] text deltas arrive in wire order …`. Each rule gets a fresh loopback fake
 * provider speaking `dialect` and a fresh adapter from `createAdapter({ baseURL, apiKey,
 * idleTimeoutMs })`. Rules needing an undeclared capability are skipped with the reason;
 * `expectedFailures` must keep failing. Call it at the top level of a
 * `*.contract.test.ts` file. Writes a JSON report when
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
  assertVitest()
  registerContract(createAdapterContractRun(options))
}

/** Fails clearly when `node --test` picked up a vitest suite (its default patterns match `*.test.ts`). */
function assertVitest(): void {
  if (process.env.VITEST === undefined && process.env.NODE_TEST_CONTEXT !== undefined) {
    throw new ConfigurationError(
      'This file uses @agentx/contract-tests/vitest but runs under `node --test`. Run node:test suites with an explicit pattern, e.g. `node --test "**/*.contract.node.mjs"`, so that vitest files are left to vitest.',
    )
  }
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
