import { createPostgresPersister, PostgresPersister } from '@agentx/persister-postgres'
import { afterAll, describe, expect, it } from 'vitest'
import { openPersister } from '../src/open-persister.js'
import { type Playground, startPlayground } from '../src/start-playground.js'
import { api, sendMessage } from './sse.js'

/** The local test server, as for every PostgreSQL test of the repository. */
const DATABASE_URL = process.env.AGENTX_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
/** A schema of this run only, dropped at the end. */
const SCHEMA = `playground_${process.pid}_${Date.now()}`

describe('playground on PostgreSQL', () => {
  const running: Playground[] = []

  afterAll(async () => {
    await Promise.all(running.map((playground) => playground.close()))
    const cleanup = createPostgresPersister({ connectionString: DATABASE_URL, schema: SCHEMA })
    try {
      const kysely = await cleanup.getKysely()
      await kysely.schema.dropSchema(SCHEMA).ifExists().cascade().execute()
    } finally {
      await cleanup.close()
    }
  })

  it('imports the real @agentx/persister-postgres when AGENTX_PG_URL is set (no I/O until first use)', async () => {
    const opened = await openPersister(
      { AGENTX_PG_URL: 'postgres://agent:not-a-real-password@127.0.0.1:1/app' },
      { workspace: '/unused' },
    )
    expect(opened.persister).toBeInstanceOf(PostgresPersister)
    expect(opened.storage).toEqual({ kind: 'postgres', location: '127.0.0.1:1/app' })
    await opened.persister.close?.()
  })

  it('keeps sessions and messages across a restart', async () => {
    const start = async (): Promise<Playground> => {
      const playground = await startPlayground({
        env: {},
        port: 0,
        demoDelayMs: 0,
        persister: createPostgresPersister({ connectionString: DATABASE_URL, schema: SCHEMA }),
      })
      running.push(playground)
      return playground
    }
    const first = await start()
    const created = await api(first.url, 'POST', '/api/sessions', { provider: 'demo' })
    const id = created.body.session.id as string
    const reply = await sendMessage(first.url, id, 'What is 12 * (3 + 4)?')
    expect(reply.events.some((event) => event.event === 'done')).toBe(true)
    const before = await api(first.url, 'GET', `/api/sessions/${id}`)
    running.splice(running.indexOf(first), 1)
    await first.close()

    const second = await start()
    const list = await api(second.url, 'GET', '/api/sessions')
    expect(list.body.sessions).toMatchObject([{ id, summary: 'What is 12 * (3 + 4)?', state: 'idle' }])
    const after = await api(second.url, 'GET', `/api/sessions/${id}`)
    expect(after.body.messages.map((message: { type: string }) => message.type)).toEqual([
      'user',
      'agent',
      'tool',
      'agent',
    ])
    expect(after.body.messages).toEqual(before.body.messages)
  })
})
