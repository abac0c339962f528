import type { AnyMessage, SessionData } from '@agentx/core'
import { uuidv7 } from '@agentx/core'
import { sql } from 'kysely'
import { afterAll, bench, describe } from 'vitest'
import { createPostgresPersister, type PostgresPersister } from '../src/index.js'
import { adminPool, dropSchema, freshSchema, TEST_DATABASE_URL } from '../test/test-database.js'

// `pnpm bench`: throughput against the PostgreSQL server of the tests (AGENTX_PG_URL). Results go
// into README.md ("Performance").

const WRITE_COUNT = 100_000
const READ_SESSION_SIZE = 10_000
const LISTED_SESSIONS = 100_000
const PAGE = 50

const TEXT = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(17).slice(0, 960)
const admin = adminPool()
const schemas: string[] = []
afterAll(async () => {
  for (const schema of schemas) await dropSchema(admin, schema)
  await admin.end()
})

function persisterInFreshSchema(): PostgresPersister {
  const schema = freshSchema()
  schemas.push(schema)
  return createPostgresPersister({ connectionString: TEST_DATABASE_URL, schema })
}

function session(id: string, index: number): SessionData {
  const at = new Date(Date.UTC(2025, 0, 1) + index * 1000).toISOString()
  return {
    id,
    summary: `Session ${index}`,
    createdAt: at,
    lastActivity: at,
    state: 'idle',
    model: 'claude-sonnet-5-5',
    tokenUsage: { inputTokens: 10, outputTokens: 20, totalTokens: 30 },
    userId: `user-${index % 100}`,
    appName: 'bench',
  }
}

/** A ~1 KB message (its JSON content is about 1 KB). */
function message(sessionId: string, seq: number): AnyMessage {
  return {
    id: uuidv7(),
    sessionId,
    seq,
    type: seq % 2 === 0 ? 'user' : 'agent',
    content: [{ type: 'text', text: TEXT }],
    timestamp: new Date(Date.UTC(2025, 0, 1) + seq).toISOString(),
  }
}

const writeRates: number[] = []

async function seededReads(): Promise<{ persister: PostgresPersister; sessionId: string }> {
  const persister = persisterInFreshSchema()
  const sessionId = uuidv7()
  await persister.saveSession(session(sessionId, LISTED_SESSIONS + 1))
  await Promise.all(
    Array.from({ length: READ_SESSION_SIZE }, (_, seq) =>
      persister.saveMessage(sessionId, message(sessionId, seq)),
    ),
  )
  const pending: Array<Promise<void>> = []
  for (let index = 0; index < LISTED_SESSIONS - 1; index++)
    pending.push(persister.saveSession(session(uuidv7(), index)))
  await Promise.all(pending)
  // Fresh statistics, as autovacuum would gather them on a live database.
  await sql`analyze`.execute(await persister.getKysely())
  return { persister, sessionId }
}

const reads = await seededReads()
afterAll(() => reads.persister.close())

describe('PostgresPersister', () => {
  bench(
    `saveMessage × ${WRITE_COUNT} (~1 KB each, not awaited one by one)`,
    async () => {
      const persister = persisterInFreshSchema()
      const sessionId = uuidv7()
      await persister.saveSession(session(sessionId, 0))
      const messages = Array.from({ length: WRITE_COUNT }, (_, seq) => message(sessionId, seq))
      const started = performance.now()
      await Promise.all(messages.map((m) => persister.saveMessage(sessionId, m)))
      const seconds = (performance.now() - started) / 1000
      writeRates.push(WRITE_COUNT / seconds)
      await persister.close()
    },
    { iterations: 3, warmupIterations: 0, time: 0, warmupTime: 0, throws: true },
  )

  bench(
    `getMessages of a ${READ_SESSION_SIZE}-message session`,
    async () => {
      const messages = await reads.persister.getMessages(reads.sessionId)
      if (messages.length !== READ_SESSION_SIZE) throw new Error(`read ${messages.length} messages`)
    },
    { iterations: 20, time: 0, throws: true },
  )

  bench(
    `listSessions: page of ${PAGE} out of ${LISTED_SESSIONS}`,
    async () => {
      const page = await reads.persister.listSessions({ limit: PAGE, offset: 0 })
      if (page.length !== PAGE) throw new Error(`listed ${page.length} sessions`)
    },
    { iterations: 200, time: 0, throws: true },
  )

  bench(
    `listSessions: one user's page of ${PAGE} (userId filter) out of ${LISTED_SESSIONS}`,
    async () => {
      const page = await reads.persister.listSessions({ userId: 'user-7', limit: PAGE, offset: 0 })
      if (page.length !== PAGE) throw new Error(`listed ${page.length} sessions`)
    },
    { iterations: 200, time: 0, throws: true },
  )
})

afterAll(() => {
  if (writeRates.length > 0) {
    const rates = writeRates.map((rate) => Math.round(rate).toLocaleString('en-US'))
    process.stdout.write(`saveMessage throughput (messages/s, per run): ${rates.join(', ')}\n`)
  }
})
