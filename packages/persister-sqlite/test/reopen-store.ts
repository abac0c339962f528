// The store of a contract-kit rule as a file, shared by the contract test and by the fresh
// process of P-LIF-008 (which imports this module).
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqlitePersister } from '../src/index.js'

/** The database file of a contract store. */
export function storeFile(store: { key: string }): string {
  return join(tmpdir(), 'agentx-sqlite-contract', `${store.key}.db`)
}

/** Opens the file of `store` (the kit's `reopen`). */
export function reopen(store: { key: string }): SqlitePersister {
  return new SqlitePersister({ filename: storeFile(store) })
}
