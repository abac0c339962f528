import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type AgentPersister, InMemoryPersister, PersistenceError } from '@agentx/core'
import type { PersisterContractOptions, PersisterStore } from '../rules/persister/persister-rule-context.js'
import { writePreviousReleaseData } from '../rules/persister/previous-release-data.js'
import type { BrokenPersisterVariant } from './broken-persisters.js'
import { DelegatingPersister } from './delegating-persister.js'
import { FileBackedReferencePersister, removeLeaseFiles } from './file-backed-reference-persister.js'

/** Where the reference persister keeps the file of `store`. */
export function referenceStoreFile(store: PersisterStore): string {
  return join(tmpdir(), 'agentx-contract-reference', `${store.key}.json`)
}

/** Opens the reference store of `store` (the `reopen` of the reference, also for a fresh process). */
export function reopenReferenceStore(store: PersisterStore): Promise<FileBackedReferencePersister> {
  return FileBackedReferencePersister.open(referenceStoreFile(store))
}

const ALL_CAPABILITIES = ['durable', 'userScoping', 'leases', 'retention'] as const

/** The correct reference: {@link InMemoryPersister} behaviour in a file per store, every capability declared. */
export function referencePersisterOptions(): PersisterContractOptions {
  return {
    name: 'reference persister (InMemoryPersister, file-backed)',
    create: (store) => FileBackedReferencePersister.create(referenceStoreFile(store)),
    reopen: (store) => reopenReferenceStore(store),
    async destroy(persister, store) {
      await persister.close?.()
      rmSync(referenceStoreFile(store), { force: true })
      removeLeaseFiles(referenceStoreFile(store))
    },
    migration: {
      async createPreviousStore(store) {
        const previous = await FileBackedReferencePersister.create(referenceStoreFile(store))
        const snapshot = await writePreviousReleaseData(previous)
        await previous.close()
        return snapshot
      },
    },
    capabilities: ALL_CAPABILITIES,
  }
}

/**
 * Contract options for one broken variant over the reference storage. `variant.storage` breaks
 * the storage itself: `shared` (every `create()` sees one store), `forgotten` (a reopen finds it
 * empty), `memory-only` (the data lives in this process only: a reopen here finds it, a fresh
 * process does not).
 */
export function brokenVariantOptions(variant: BrokenPersisterVariant): PersisterContractOptions {
  const reference = referencePersisterOptions()
  const memory = new Map<string, InMemoryPersister>()
  const shared = new InMemoryPersister()
  const open = async (store: PersisterStore, fresh: boolean): Promise<AgentPersister> => {
    if (variant.storage === 'memory-only') {
      if (fresh) memory.set(store.key, new InMemoryPersister())
      return variant.wrap(memoryView(memory.get(store.key) ?? new InMemoryPersister()))
    }
    const file = referenceStoreFile(store)
    if (variant.storage === 'forgotten' && !fresh)
      return variant.wrap(await FileBackedReferencePersister.create(file))
    if (variant.storage === 'shared') return variant.wrap(memoryView(shared))
    return variant.wrap(
      fresh ? await FileBackedReferencePersister.create(file) : await FileBackedReferencePersister.open(file),
    )
  }
  return {
    ...reference,
    name: `broken: ${variant.name}`,
    create: (store) => open(store, true),
    reopen: (store) => open(store, false),
    async destroy(persister, store) {
      await persister.close?.()
      memory.delete(store.key)
      rmSync(referenceStoreFile(store), { force: true })
      removeLeaseFiles(referenceStoreFile(store))
    },
  }
}

/**
 * A view of an {@link InMemoryPersister} that outlives the view (the `memory-only` storage):
 * `close()` closes the view only; its calls then reject with `CLOSED`.
 */
function memoryView(storage: InMemoryPersister): AgentPersister {
  let closed = false
  const target = new DelegatingPersister(storage)
  return new Proxy(target, {
    get(object, property, receiver) {
      if (property === 'close') {
        return async () => {
          closed = true
        }
      }
      const value = Reflect.get(object, property, receiver) as unknown
      if (typeof value !== 'function') return value
      return (...args: unknown[]) =>
        closed
          ? Promise.reject(new PersistenceError('This persister is closed.', { code: 'CLOSED' }))
          : (value as (...values: unknown[]) => unknown).apply(object, args)
    },
  })
}
