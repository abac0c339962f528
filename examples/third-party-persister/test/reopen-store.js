// The store of a contract-kit rule as a JSON file. The contract suite uses it, and the kit imports
// it in a fresh node process (P-LIF-008) to prove the data is on disk.
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { JsonFilePersister } from '../src/index.js'

/** The file of a contract store. @param {{ key: string }} store */
export function storeFile(store) {
  return join(tmpdir(), 'agentx-json-file-contract', `${store.key}.json`)
}

/** Opens the file of `store` (the kit's `reopen`). @param {{ key: string }} store */
export function reopen(store) {
  return new JsonFilePersister({ filename: storeFile(store) })
}
