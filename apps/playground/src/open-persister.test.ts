import { join } from 'node:path'
import { isAgentError } from '@agentx/core'
import { SqlitePersister } from '@agentx/persister-sqlite'
import { describe, expect, it } from 'vitest'
import { describeDatabase, openPersister } from './open-persister.js'

describe('openPersister', () => {
  it('uses the SQLite file <workspace>/.agentx/data/agent.db by default', async () => {
    const opened = await openPersister({}, { workspace: '/srv/app' })
    expect(opened.persister).toBeInstanceOf(SqlitePersister)
    expect(opened.storage).toEqual({
      kind: 'sqlite',
      location: join('/srv/app', '.agentx', 'data', 'agent.db'),
    })
  })

  it('imports @agentx/persister-postgres only when AGENTX_PG_URL is set, and never shows the password', async () => {
    const url = 'postgres://agent:hunter2-secret@127.0.0.1:5432/agentx'
    const received: unknown[] = []
    const fake = { close: async () => undefined }
    const opened = await openPersister(
      { AGENTX_PG_URL: url },
      {
        workspace: '/unused',
        importModule: async (specifier) => {
          received.push(specifier)
          return {
            createPostgresPersister: (options: unknown) => {
              received.push(options)
              return fake
            },
          }
        },
      },
    )
    expect(received).toEqual(['@agentx/persister-postgres', { connectionString: url }])
    expect(opened.persister).toBe(fake)
    expect(opened.storage).toEqual({ kind: 'postgres', location: '127.0.0.1:5432/agentx' })
  })

  it('fails with a ConfigurationError that names the package, without the password, when it cannot load', async () => {
    const error = await openPersister(
      { AGENTX_PG_URL: 'postgres://agent:hunter2-secret@db/agentx' },
      {
        workspace: '/unused',
        importModule: async () => {
          throw new Error(
            'Cannot find package @agentx/persister-postgres (postgres://agent:hunter2-secret@db/agentx)',
          )
        },
      },
    ).catch((caught: unknown) => caught)
    expect(isAgentError(error) && error.code).toBe('CONFIGURATION')
    expect(String((error as Error).message)).toContain('@agentx/persister-postgres')
    expect(String((error as Error).message)).not.toContain('hunter2')
  })

  it('describes a database URL without its credentials', () => {
    expect(describeDatabase('postgresql://u:p@host:6543/db?sslmode=require')).toBe('host:6543/db')
  })
})
