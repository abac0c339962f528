import { loadavg } from 'node:os'
import type { AnyMessage, SessionData } from '@agentx/core'
import { uuidv7 } from '@agentx/core'
import pg from 'pg'
import { afterAll, bench, describe } from 'vitest'
import { createPostgresPersister } from '../src/index.js'
import { adminPool, dropSchema, freshSchema, TEST_DATABASE_URL } from '../test/test-database.js'

// `pnpm bench`: the write path of PostgresPersister on ONE write connection (writeConcurrency 1,
// pipelined) side by side with raw pg sending the same rows with the same multi-row upsert (unnest
// of one array per column) in the same batches, awaiting each, in interleaved rounds so that both
// see the same load. Target: ≥ 0.8× raw.

const COUNT = 50_000
const ROUNDS = 5
const BATCH = 1000
const TEXT = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(17).slice(0, 960)

const admin = adminPool()
const schemas: string[] = []
afterAll(async () => {
  for (const schema of schemas) await dropSchema(admin, schema)
  await admin.end()
})

function session(id: string): SessionData {
  const at = '2025-01-01T00:00:00.000Z'
  return {
    id,
    summary: 'bench',
    createdAt: at,
    lastActivity: at,
    state: 'idle',
    tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
  }
}

function message(sessionId: string, seq: number): AnyMessage {
  return {
    id: uuidv7(),
    sessionId,
    seq,
    type: 'agent',
    content: [{ type: 'text', text: TEXT }],
    timestamp: new Date(Date.UTC(2025, 0, 1) + seq).toISOString(),
    usage: { inputTokens: 100, outputTokens: 200, totalTokens: 300 },
    stopReason: 'end_turn',
  }
}

/** A new schema with the AgentX tables (migrated by the persister) and one session. */
async function preparedSchema(sessionId: string): Promise<string> {
  const schema = freshSchema()
  schemas.push(schema)
  const persister = createPostgresPersister({ connectionString: TEST_DATABASE_URL, schema, poolSize: 1 })
  await persister.saveSession(session(sessionId))
  await persister.close()
  return schema
}

async function persisterRound(): Promise<number> {
  const sessionId = uuidv7()
  const schema = await preparedSchema(sessionId)
  const persister = createPostgresPersister({
    connectionString: TEST_DATABASE_URL,
    schema,
    poolSize: 1,
    writeConcurrency: 1,
    maxBatchSize: BATCH,
  })
  await persister.getSession(sessionId)
  const messages = Array.from({ length: COUNT }, (_, seq) => message(sessionId, seq))
  const started = performance.now()
  await Promise.all(messages.map((m) => persister.saveMessage(sessionId, m)))
  const seconds = (performance.now() - started) / 1000
  await persister.close()
  return COUNT / seconds
}

const COLUMNS = [
  ['session_id', 'text'],
  ['id', 'text'],
  ['seq', 'int8'],
  ['type', 'text'],
  ['content', 'jsonb'],
  ['timestamp', 'text'],
  ['usage', 'jsonb'],
  ['stop_reason', 'text'],
] as const

/** Raw pg: one client, the same upsert, rows built with JSON.stringify and nothing else. */
async function rawRound(): Promise<number> {
  const sessionId = uuidv7()
  const schema = await preparedSchema(sessionId)
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await client.connect()
  const names = COLUMNS.map(([name]) => `"${name}"`).join(', ')
  const arrays = COLUMNS.map(([, type], index) => `$${index + 1}::${type}[]`).join(', ')
  const updates = COLUMNS.slice(2)
    .map(([name]) => `"${name}" = excluded."${name}"`)
    .join(', ')
  const text = `insert into "${schema}".messages (${names}) select * from unnest(${arrays}) on conflict (session_id, id) do update set ${updates}`
  const messages = Array.from({ length: COUNT }, (_, seq) => message(sessionId, seq))
  const started = performance.now()
  for (let start = 0; start < COUNT; start += BATCH) {
    const batch = messages.slice(start, start + BATCH)
    await client.query(text, [
      batch.map(() => sessionId),
      batch.map((m) => m.id),
      batch.map((m) => m.seq),
      batch.map((m) => m.type),
      batch.map((m) => JSON.stringify(m.content)),
      batch.map((m) => m.timestamp),
      batch.map((m) => JSON.stringify(m.usage)),
      batch.map((m) => m.stopReason),
    ])
  }
  const seconds = (performance.now() - started) / 1000
  await client.end()
  return COUNT / seconds
}

const rows: string[] = []

describe('PostgresPersister write path against raw pg, one connection', () => {
  bench(
    `saveMessage × ${COUNT} (~1 KB) vs raw, ${ROUNDS} interleaved rounds`,
    async () => {
      const persister: number[] = []
      const raw: number[] = []
      for (let round = 0; round < ROUNDS; round++) {
        raw.push(await rawRound())
        persister.push(await persisterRound())
      }
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
      const format = (values: number[]) =>
        values.map((value) => Math.round(value).toLocaleString('en-US')).join(' / ')
      const pairs = persister.map((rate, round) => (rate / raw[round]!).toFixed(2)).join(' / ')
      rows.push(
        `raw ${format(raw)} msg/s; PostgresPersister ${format(persister)} msg/s; ` +
          `ratio per round ${pairs}; ratio of medians ${(median(persister) / median(raw)).toFixed(2)}× (target ≥ 0.80×); ` +
          `1-minute load average ${loadavg()[0]!.toFixed(1)}`,
      )
    },
    { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0, throws: true },
  )
})

afterAll(() => {
  for (const row of rows) process.stdout.write(`${row}\n`)
})
