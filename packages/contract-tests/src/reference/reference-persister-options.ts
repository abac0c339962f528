import { type AgentPersister, InMemoryPersister } from '@agentx/core'
import type { PersisterContractOptions } from '../rules/persister/persister-rule-context.js'
import type { BrokenPersisterVariant } from './broken-persisters.js'
import { ReopenableInMemoryPersister, reopenInMemory } from './reopenable-in-memory-persister.js'

/** The correct reference: {@link InMemoryPersister} storage, reopenable, every capability declared. */
export function referencePersisterOptions(): PersisterContractOptions {
  return {
    name: 'InMemoryPersister (reopenable)',
    create: () => new ReopenableInMemoryPersister(),
    reopen: (persister) => reopenInMemory(persister),
    capabilities: ['durable', 'pagination', 'userScoping'],
  }
}

/** Contract options for one broken variant over the same reopenable reference storage. */
export function brokenVariantOptions(variant: BrokenPersisterVariant): PersisterContractOptions {
  const views = new WeakMap<AgentPersister, ReopenableInMemoryPersister>()
  const shared = new InMemoryPersister()
  const open = (storage: InMemoryPersister): AgentPersister => {
    const view = new ReopenableInMemoryPersister(storage)
    const broken = variant.wrap(view)
    views.set(broken, view)
    return broken
  }
  return {
    name: `broken: ${variant.name}`,
    create: () => open(variant.storage === 'shared' ? shared : new InMemoryPersister()),
    async reopen(persister) {
      const view = views.get(persister)
      if (!view) throw new TypeError('reopen() got a persister this variant did not create.')
      await persister.close?.()
      await view.close()
      return open(variant.storage === 'forgotten' ? new InMemoryPersister() : view.storage)
    },
    capabilities: ['durable', 'pagination', 'userScoping'],
  }
}
