import type { AgentPersister } from '@agentx/core'
import { describePersisterContract } from '@agentx/contract-tests/vitest'
import { TEST_DATABASE_URL, testPersister } from '../test/test-database.js'
import { PostgresPersister } from './index.js'

describePersisterContract({
  name: 'PostgresPersister',
  create: () => testPersister({ poolSize: 4 }),
  reopen: async (persister: AgentPersister) => {
    const { schema } = persister as PostgresPersister
    await persister.close?.()
    return new PostgresPersister({ connectionString: TEST_DATABASE_URL, schema, poolSize: 4 })
  },
  capabilities: ['durable', 'pagination', 'userScoping'],
})
