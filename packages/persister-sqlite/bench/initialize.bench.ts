import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AnyMessage, SessionData } from '@agentx/core'
import { uuidv7 } from '@agentx/core'
import BetterSqlite3 from 'better-sqlite3'
import { afterAll, bench, describe } from 'vitest'
import { createSqlitePersister } from '../src/index.js'

// `pnpm bench`: what an agent's start-up costs on an existing store — open the file and mark the
// sessions a crash left `active` (`markInterrupted`, one UPDATE on a partial index) — against the
// floor: better-sqlite3 opening the same file and running the same statement. Interleaved rounds.
// Target: within 2 ms of the floor. Results go into README.md.

const SESSIONS = 2_000
const MESSAGES_PER_SESSION = 100
const ROUNDS = 40
const TEXT = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(17).slice(0, 960)

const folder = mkdtempSync(join(tmpdir(), 'agentx-sqlite-init-'))
const filename = join(folder, 'store.db')
afterAll(() => rmSync(folder, { recursive: true, force: true }))

function session(id: string, index: number): SessionData {
  const at = new Date(Date.UTC(2025, 0, 1) + index * 1000).toISOString()
  return {
    id,
    summary: `Session ${index}`,
    createdAt: at,
    lastActivity: at,
    state: index % 100 === 0 ? 'active' : 'idle',
    tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
  }
}

function message(sessionId: string, seq: number): AnyMessage {
  return { id: uuidv7(), sessionId, seq, type: 'user', content: TEXT, timestamp: '2025-01-01T00:00:00.000Z' }
}

const seeding = createSqlitePersister({ filename })
for (let index = 0; index < SESSIONS; index++) {
  const id = uuidv7()
  void seeding.saveSession(session(id, index))
  for (let seq = 0; seq < MESSAGES_PER_SESSION; seq++) void seeding.saveMessage(id, message(id, seq))
}
await seeding.close()

/** The floor: open the file as the persister does and run the same UPDATE. */
function floor(): number {
  const started = performance.now()
  const database = new BetterSqlite3(filename, { timeout: 5000 })
  database.pragma('journal_mode = WAL')
  database.pragma('foreign_keys = ON')
  database
    .prepare(
      "update sessions set state = 'interrupted' where state = 'active' and (lease_owner is null or lease_expires_at <= ?)",
    )
    .run(Date.now())
  const elapsed = performance.now() - started
  database.close()
  return elapsed
}

async function persister(): Promise<number> {
  const started = performance.now()
  const store = createSqlitePersister({ filename })
  await store.markInterrupted()
  const elapsed = performance.now() - started
  await store.close()
  return elapsed
}

const rows: string[] = []
const loadAtStart = loadavg()[0]!

describe('SqlitePersister start-up against the floor', () => {
  bench(
    `open + markInterrupted on ${SESSIONS * MESSAGES_PER_SESSION} messages, ${ROUNDS} interleaved rounds`,
    async () => {
      const floors: number[] = []
      const persisters: number[] = []
      for (let round = 0; round < ROUNDS; round++) {
        floors.push(floor())
        persisters.push(await persister())
      }
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
      rows.push(
        `floor median ${median(floors).toFixed(2)} ms; SqlitePersister median ${median(persisters).toFixed(2)} ms; ` +
          `difference ${(median(persisters) - median(floors)).toFixed(2)} ms (target ≤ 2 ms)`,
      )
    },
    { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0, throws: true },
  )
})

afterAll(() => {
  for (const row of rows) process.stdout.write(`${row}\n`)
  const load = [loadAtStart, loadavg()[0]!].map((value) => value.toFixed(2))
  process.stdout.write(`1-minute load average at start and end: ${load.join(' and ')}\n`)
})
