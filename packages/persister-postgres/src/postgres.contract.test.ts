import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { StoreSnapshot } from '@agentx/contract-tests'
import { describePersisterContract } from '@agentx/contract-tests/vitest'
import pg from 'pg'
import { afterAll } from 'vitest'
import { adminPool, dropSchema } from '../test/test-database.js'
import { reopen, STORE_DATABASE_URL, storeSchema } from '../test/reopen-store.js'

const admin = adminPool()
afterAll(() => admin.end())

/** The committed schema-1 dump and what release 0.1.0 read from it (sessions sorted by id). */
const v1Dump = readFileSync(new URL('./__fixtures__/v1/schema-and-data.sql', import.meta.url), 'utf8')
const v1Read = JSON.parse(
  readFileSync(new URL('./__fixtures__/v1/expected.json', import.meta.url), 'utf8'),
) as StoreSnapshot
const v1Expected: StoreSnapshot = {
  sessions: [...v1Read.sessions].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
  messages: v1Read.messages,
}

describePersisterContract({
  name: 'PostgresPersister',
  async create(store) {
    await dropSchema(admin, storeSchema(store))
    return reopen(store)
  },
  reopen,
  async destroy(persister, store) {
    await persister.close?.()
    await dropSchema(admin, storeSchema(store))
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
      await dropSchema(admin, storeSchema(store))
      // A client of its own: the dump resets search_path for its session.
      const client = new pg.Client({ connectionString: STORE_DATABASE_URL })
      await client.connect()
      try {
        await client.query(v1Dump.replaceAll('agentx_v1_fixture', storeSchema(store)))
      } finally {
        await client.end()
      }
      return v1Expected
    },
  },
  capabilities: ['durable', 'userScoping', 'leases', 'retention'],
})
