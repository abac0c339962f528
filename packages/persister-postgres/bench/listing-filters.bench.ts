import { loadavg } from 'node:os'
import type { SessionData } from '@agentx/core'
import { afterAll, bench, describe } from 'vitest'
import { createPostgresPersister } from '../src/index.js'
import { adminPool, dropSchema, freshSchema, TEST_DATABASE_URL } from '../test/test-database.js'

// `pnpm bench`: the listing filters of schema 3 over 100 000 sessions, four in five of them child
// sessions, each with metadata `{ ticket: <its number>, team: 'team-<number % 4>' }`, analysed as
// autovacuum would. The metadata filter's statement is timed side by side with the statement of
// schema 2 (`metadata -> key = value`, which no index answers), both selecting the ids of one page
// of top-level sessions, in interleaved rounds. Results go into README.md ("Performance").

const SESSIONS = 100_000
const PAGE = 50
const ROUNDS = 5
const QUERIES_PER_ROUND = 20

const admin = adminPool()
const schema = freshSchema()
const loadAtStart = loadavg()[0]!
afterAll(async () => {
  await dropSchema(admin, schema)
  await admin.end()
})

function session(index: number): SessionData {
  const at = new Date(Date.UTC(2025, 0, 1) + index * 1000).toISOString()
  return {
    id: `s${index}`,
    summary: `Session ${index}`,
    createdAt: at,
    lastActivity: at,
    state: 'idle',
    tokenUsage: { inputTokens: 10, outputTokens: 20, totalTokens: 30 },
    userId: `user-${index % 100}`,
    metadata: { ticket: index, team: `team-${index % 4}` },
    ...(index % 5 === 0 ? {} : { parentSessionId: `s${index - (index % 5)}` }),
  }
}

const persister = createPostgresPersister({ connectionString: TEST_DATABASE_URL, schema })
const pending: Array<Promise<void>> = []
for (let index = 0; index < SESSIONS; index++) pending.push(persister.saveSession(session(index)))
await Promise.all(pending)
await admin.query(`analyze "${schema}".sessions`)
afterAll(() => persister.close())

const table = `"${schema}".sessions`
const listing = (predicate: string) =>
  `select id from ${table} where parent_session_id is null and ${predicate}
order by last_activity desc, id_order desc limit ${PAGE}`
const schema2Listing = listing('metadata -> $1::text = $2::jsonb')
const schema3Listing = listing('metadata @> $1::jsonb')

async function timeQuery(text: string, values: unknown[]): Promise<number> {
  const started = performance.now()
  for (let query = 0; query < QUERIES_PER_ROUND; query++) await admin.query(text, values)
  return (performance.now() - started) / QUERIES_PER_ROUND
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const rows: string[] = []

async function sideBySide(label: string, key: string, value: string | number): Promise<void> {
  const schema2Values = [key, JSON.stringify(value)]
  const schema3Values = [JSON.stringify({ [key]: value })]
  const ids = async (text: string, values: unknown[]) =>
    JSON.stringify((await admin.query(text, values)).rows.map((row: { id: string }) => row.id))
  const expected = JSON.stringify(
    (await persister.listSessions({ metadata: { key, value }, limit: PAGE })).map((found) => found.id),
  )
  if (
    (await ids(schema2Listing, schema2Values)) !== expected ||
    (await ids(schema3Listing, schema3Values)) !== expected
  ) {
    throw new Error(`${label}: the statements answer differently`)
  }
  const ours: number[] = []
  const theirs: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    theirs.push(await timeQuery(schema2Listing, schema2Values))
    ours.push(await timeQuery(schema3Listing, schema3Values))
  }
  const format = (values: number[]) => values.map((ms) => ms.toFixed(2)).join(' / ')
  rows.push(
    `${label}: schema 3 ${format(ours)} ms; schema-2 query ${format(theirs)} ms; ` +
      `ratio of medians ${(median(theirs) / median(ours)).toFixed(1)}×`,
  )
}

describe(`PostgresPersister listing filters over ${SESSIONS} sessions (80 % children)`, () => {
  bench(
    'metadata filter vs the schema-2 query, interleaved rounds',
    async () => {
      await sideBySide('metadata filter, one session matches (ticket)', 'ticket', 50_000)
      await sideBySide(`metadata filter, a quarter match (team), page of ${PAGE}`, 'team', 'team-2')
    },
    { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0, throws: true },
  )

  bench(
    `listSessions: page of ${PAGE} top-level sessions`,
    async () => {
      const page = await persister.listSessions({ limit: PAGE, offset: 0 })
      if (page.length !== PAGE) throw new Error(`listed ${page.length} sessions`)
    },
    { iterations: 200, time: 0, throws: true },
  )

  bench(
    `listSessions: one user's page of ${PAGE} top-level sessions`,
    async () => {
      const page = await persister.listSessions({ userId: 'user-5', limit: PAGE, offset: 0 })
      if (page.length !== PAGE) throw new Error(`listed ${page.length} sessions`)
    },
    { iterations: 200, time: 0, throws: true },
  )

  bench(
    'listSessions: metadata filter, one session matches',
    async () => {
      const page = await persister.listSessions({ metadata: { key: 'ticket', value: 50_000 } })
      if (page.length !== 1) throw new Error(`listed ${page.length} sessions`)
    },
    { iterations: 200, time: 0, throws: true },
  )
})

afterAll(() => {
  for (const row of rows) process.stdout.write(`${row}\n`)
  const load = [loadAtStart, loadavg()[0]!].map((value) => value.toFixed(2))
  process.stdout.write(`1-minute load average at start and end: ${load.join(' and ')}\n`)
})
