// The `freshProcess.module` of the reference persister in the kit's own tests: a fresh node
// process imports it (with the TypeScript source hooks) to open a reference store.
import type { AgentPersister } from '@agentx/core'
import type { PersisterStore } from '../src/index.js'
import { reopenReferenceStore } from '../src/reference/reference-persister-options.js'

export function reopen(store: PersisterStore): Promise<AgentPersister> {
  return reopenReferenceStore(store)
}
