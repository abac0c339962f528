import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AgentPersister } from '@agentx/core'
import { describePersisterContract } from '@agentx/contract-tests/vitest'
import { afterAll } from 'vitest'
import { SqlitePersister } from './index.js'

const folder = mkdtempSync(join(tmpdir(), 'agentx-sqlite-contract-'))
afterAll(() => rmSync(folder, { recursive: true, force: true }))
let count = 0

describePersisterContract({
  name: 'SqlitePersister',
  create: () => new SqlitePersister({ filename: join(folder, `contract-${count++}.db`) }),
  reopen: async (persister: AgentPersister) => {
    const { filename } = persister as SqlitePersister
    await persister.close?.()
    return new SqlitePersister({ filename })
  },
  capabilities: ['durable', 'pagination', 'userScoping'],
})
