import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { StoreSnapshot } from '@agentx/contract-tests'
import { describePersisterContract } from '@agentx/contract-tests/vitest'
import { reopen, storeFile } from '../test/reopen-store.js'

/** The committed schema-1 file and what release 0.1.0 read from it (sessions sorted by id). */
const v1File = fileURLToPath(new URL('./__fixtures__/v1/agent.db', import.meta.url))
const v1Read = JSON.parse(
  readFileSync(new URL('./__fixtures__/v1/expected.json', import.meta.url), 'utf8'),
) as StoreSnapshot
const v1Expected: StoreSnapshot = {
  sessions: [...v1Read.sessions].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
  messages: v1Read.messages,
}

describePersisterContract({
  name: 'SqlitePersister',
  create(store) {
    rmSync(storeFile(store), { force: true })
    mkdirSync(dirname(storeFile(store)), { recursive: true })
    return reopen(store)
  },
  reopen,
  async destroy(persister, store) {
    await persister.close?.()
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${storeFile(store)}${suffix}`, { force: true })
  },
  freshProcess: {
    module: new URL('../test/reopen-store.ts', import.meta.url),
    execArgv: [
      '--conditions=@agentx/source',
      '--disable-warning=ExperimentalWarning',
      '--import',
      fileURLToPath(new URL('../test/register-typescript-source.mjs', import.meta.url)),
    ],
  },
  migration: {
    async createPreviousStore(store) {
      mkdirSync(dirname(storeFile(store)), { recursive: true })
      copyFileSync(v1File, storeFile(store))
      return v1Expected
    },
  },
  capabilities: ['durable', 'userScoping', 'leases', 'retention'],
})
