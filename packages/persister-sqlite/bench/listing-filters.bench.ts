import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ListSessionsQuery, SessionData } from '@agentx/core'
import BetterSqlite3 from 'better-sqlite3'
import { afterAll, bench, describe } from 'vitest'
import { createSqlitePersister } from '../src/index.js'

// `pnpm bench`: the listing filters of schema 3 over 100 000 sessions, four in five of them child
// sessions, each with metadata `{ ticket: <its number>, team: 'team-<number % 4>' }`. The metadata
// filter's statement is timed side by side with the statement of schema 2 (json_each over the
// metadata of every top-level session, newest first, until the page is full), both selecting the
// ids of one page on one read-only connection, in interleaved rounds. Results go into README.md
// ("Performance").

const SESSIONS = 100_000
const PAGE = 50
const ROUNDS = 5
const QUERIES_PER_ROUND = 20

const folder = mkdtempSync(join(tmpdir(), 'agentx-sqlite-listing-bench-'))
afterAll(() => rmSync(folder, { recursive: true, force: true }))
const filename = join(folder, 'listing.db')
const loadAtStart = loadavg()[0]!

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

const persister = createSqlitePersister({ filename })
const pending: Array<Promise<void>> = []
for (let index = 0; index < SESSIONS; index++) pending.push(persister.saveSession(session(index)))
await Promise.all(pending)
afterAll(() => persister.close())

/** The listing statements for `metadata: { key, value }` of schema 2 and schema 3, on one connection. */
const reader = new BetterSqlite3(filename, { readonly: true })
afterAll(() => reader.close())
const schema2Listing = (type: string) =>
  reader.prepare(`select id from sessions where parent_session_id is null and exists (
  select 1 from json_each(sessions.metadata) as entry where entry.key = ? and ${type} and entry.value = ?)
order by last_activity desc, id_order desc limit ?`)
const schema2Text = schema2Listing("entry.type = 'text'")
const schema2Number = schema2Listing("entry.type in ('integer', 'real')")
/** What `listSessions({ metadata, limit })` runs (ids only). */
const schema3Listing = reader.prepare(`select sessions.id from session_metadata as m
join sessions on sessions.id = m.session_id
where m.key = ? and m.value_type = ? and m.value = ? and sessions.parent_session_id is null
order by m.last_activity desc, m.id_order desc limit ?`)

async function timeQuery(run: () => unknown): Promise<number> {
  const started = performance.now()
  for (let query = 0; query < QUERIES_PER_ROUND; query++) await run()
  return (performance.now() - started) / QUERIES_PER_ROUND
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const rows: string[] = []

async function sideBySide(label: string, key: string, value: string | number) {
  const indexed: ListSessionsQuery = { metadata: { key, value }, limit: PAGE }
  const schema2Statement = typeof value === 'string' ? schema2Text : schema2Number
  const type = typeof value === 'string' ? 'string' : 'number'
  const ids = (rows: unknown[]) => JSON.stringify((rows as Array<{ id: string }>).map((row) => row.id))
  const expected = JSON.stringify((await persister.listSessions(indexed)).map((found) => found.id))
  if (
    ids(schema2Statement.all(key, value, PAGE)) !== expected ||
    ids(schema3Listing.all(key, type, value, PAGE)) !== expected
  ) {
    throw new Error(`${label}: the statements answer differently`)
  }
  const ours: number[] = []
  const theirs: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    theirs.push(await timeQuery(() => schema2Statement.all(key, value, PAGE)))
    ours.push(await timeQuery(() => schema3Listing.all(key, type, value, PAGE)))
  }
  const format = (values: number[]) => values.map((ms) => ms.toFixed(2)).join(' / ')
  rows.push(
    `${label}: schema 3 ${format(ours)} ms; schema-2 query ${format(theirs)} ms; ` +
      `ratio of medians ${(median(theirs) / median(ours)).toFixed(1)}×`,
  )
}

describe(`SqlitePersister listing filters over ${SESSIONS} sessions (80 % children)`, () => {
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
