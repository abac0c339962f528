import { createAgent, type Session } from '@agentx/core'
import { ScriptedAdapter, textTurn } from '@agentx/core/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { adminPool, dropSchema, freshSchema, TEST_DATABASE_URL } from '../test/test-database.js'
import { POSTGRES_MIGRATIONS, PostgresPersister } from './index.js'

const admin = adminPool()
afterAll(() => admin.end())

const SESSIONS_PER_AGENT = 4
const SENDS_PER_SESSION = 5

/** One application process: its own pool and agent over the shared schema. */
function startProcess(name: string, schema: string) {
  const persister = new PostgresPersister({ connectionString: TEST_DATABASE_URL, schema, poolSize: 3 })
  const turns = Array.from({ length: SESSIONS_PER_AGENT * SENDS_PER_SESSION }, (_, index) =>
    textTurn(`${name} reply ${index}`),
  )
  const agent = createAgent({ appName: 'shared-app' }, { adapter: new ScriptedAdapter(turns), persister })
  return { name, persister, agent }
}

describe('PostgresPersister shared by several processes', () => {
  it('two agents with separate pools write to one database at once without losing or duplicating anything', async () => {
    const schema = freshSchema()
    const processes = [startProcess('alpha', schema), startProcess('beta', schema)]
    try {
      // Both start (and migrate) at the same time, then chat in parallel sessions.
      await Promise.all(processes.map(({ agent }) => agent.initialize()))
      const created = await Promise.all(
        processes.map(async ({ name, agent }) => {
          const sessions: Session[] = []
          await Promise.all(
            Array.from({ length: SESSIONS_PER_AGENT }, async (_, index) => {
              const session = await agent.createSession({ metadata: { owner: name, index } })
              sessions.push(session)
              for (let send = 0; send < SENDS_PER_SESSION; send++) {
                await session.send(`${name} session ${index} question ${send}`)
              }
            }),
          )
          await agent.close()
          return { name, sessions }
        }),
      )

      const reader = new PostgresPersister({ connectionString: TEST_DATABASE_URL, schema })
      try {
        const stored = await reader.getAllSessions()
        expect(stored).toHaveLength(2 * SESSIONS_PER_AGENT)
        const replies: string[] = []
        for (const { name, sessions } of created) {
          for (const session of sessions) {
            const metadata = (await reader.getSession(session.id))?.metadata as {
              owner: string
              index: number
            }
            expect(metadata.owner).toBe(name)
            const messages = await reader.getMessages(session.id)
            expect(messages.map((m) => m.seq)).toEqual(
              Array.from({ length: 2 * SENDS_PER_SESSION }, (_, seq) => seq),
            )
            expect(messages.filter((m) => m.type === 'user').map((m) => m.content)).toEqual(
              Array.from(
                { length: SENDS_PER_SESSION },
                (_, send) => `${name} session ${metadata.index} question ${send}`,
              ),
            )
            const agentMessages = messages.filter((m) => m.type === 'agent')
            expect(agentMessages.every((m) => m.incomplete !== true)).toBe(true)
            replies.push(...agentMessages.map((m) => (m.content as Array<{ text: string }>)[0]!.text))
          }
        }
        // Every scripted reply of both agents was persisted exactly once.
        const expected = ['alpha', 'beta'].flatMap((name) =>
          Array.from(
            { length: SESSIONS_PER_AGENT * SENDS_PER_SESSION },
            (_, index) => `${name} reply ${index}`,
          ),
        )
        expect(replies.sort()).toEqual(expected.sort())
        const { rows } = await admin.query(
          `select count(*)::int as messages, count(distinct (session_id, seq))::int as positions from "${schema}".messages`,
        )
        expect(rows).toEqual([{ messages: expected.length * 2, positions: expected.length * 2 }])
        const { rows: migrations } = await admin.query(
          `select version from "${schema}".agentx_schema_migrations order by version`,
        )
        expect(migrations).toEqual(POSTGRES_MIGRATIONS.map((migration) => ({ version: migration.version })))

        // A third process sees the others' sessions, history included.
        const third = createAgent(
          { appName: 'shared-app' },
          { adapter: new ScriptedAdapter([]), persister: reader },
        )
        const someone = created[1]!.sessions[0]!
        const loaded = await third.getSession(someone.id)
        expect(loaded?.id).toBe(someone.id)
        expect(await loaded!.getMessages()).toEqual(await reader.getMessages(someone.id))
        expect((await loaded!.getMessages()).length).toBe(2 * SENDS_PER_SESSION)
        await third.close()
      } finally {
        await reader.close()
      }
    } finally {
      await Promise.all(processes.map(({ persister }) => persister.close()))
      await dropSchema(admin, schema)
    }
  })
})
