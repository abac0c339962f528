// The full persister contract of @agentx/contract-tests, run with node:test:
// `node --test "test/**/*.contract.node.js"` (a pattern of its own, so vitest files stay out).
import { mkdirSync, rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { writePreviousReleaseData } from '@agentx/contract-tests'
import { describePersisterContract } from '@agentx/contract-tests/node-test'
import { reopen, storeFile } from './reopen-store.js'

describePersisterContract({
  name: 'JsonFilePersister',
  create(store) {
    mkdirSync(dirname(storeFile(store)), { recursive: true })
    rmSync(storeFile(store), { force: true })
    return reopen(store)
  },
  reopen,
  async destroy(persister, store) {
    await persister.close?.()
    rmSync(storeFile(store), { force: true })
  },
  // P-LIF-008: a fresh node process opens the store through this module's `reopen`.
  freshProcess: { module: new URL('./reopen-store.js', import.meta.url) },
  // The file format has not changed since its first version: the previous release wrote stores
  // exactly like this one, so the kit's data set saved by this code is such a store.
  migration: {
    async createPreviousStore(store) {
      mkdirSync(dirname(storeFile(store)), { recursive: true })
      const previous = reopen(store)
      const snapshot = await writePreviousReleaseData(previous)
      await previous.close()
      return snapshot
    },
  },
  // One process per file: no `leases` (a lease must hold across processes).
  capabilities: ['durable', 'userScoping', 'retention'],
})
