// The full persister contract of @agentx/contract-tests, run with node:test: `node --test`.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'
import { describePersisterContract } from '@agentx/contract-tests/node-test'
import { JsonFilePersister } from '../src/index.js'

const folder = mkdtempSync(join(tmpdir(), 'agentx-json-file-contract-'))
after(() => rmSync(folder, { recursive: true, force: true }))
let count = 0

describePersisterContract({
  name: 'JsonFilePersister',
  create: () => new JsonFilePersister({ filename: join(folder, `store-${count++}.json`) }),
  reopen: async (persister) => {
    await persister.close?.()
    return new JsonFilePersister({ filename: /** @type {JsonFilePersister} */ (persister).filename })
  },
  capabilities: ['durable', 'pagination', 'userScoping'],
})
