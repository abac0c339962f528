import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AnyMessage, SessionData } from '@agentx/core'
import { uuidv7 } from '@agentx/core'
import BetterSqlite3 from 'better-sqlite3'
import { afterAll, bench, describe } from 'vitest'
import { createSqlitePersister } from '../src/index.js'

// `pnpm bench`: the write path of SqlitePersister side by side with raw better-sqlite3 writing the
// same rows into the same schema with the same upsert, in interleaved rounds so that both see the
// same machine load. Target: the persister at ≥ 0.8× raw. Results go into README.md.

const COUNT = 100_000
const ROUNDS = 3
const BATCH = 250
const TEXT = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(17).slice(0, 960)

const folder = mkdtempSync(join(tmpdir(), 'agentx-sqlite-raw-'))
afterAll(() => rmSync(folder, { recursive: true, force: true }))

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

/** A ~1 KB agent message, as the kernel writes them: a text block and usage. */
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

let files = 0

/** A new file with the AgentX schema (migrated by the persister) and one session; returns its path. */
async function preparedFile(sessionId: string): Promise<string> {
  const filename = join(folder, `round-${files++}.db`)
  const persister = createSqlitePersister({ filename })
  await persister.saveSession(session(sessionId))
  await persister.close()
  return filename
}

async function persisterRound(): Promise<number> {
  const sessionId = uuidv7()
  const filename = await preparedFile(sessionId)
  const persister = createSqlitePersister({ filename })
  await persister.getSession(sessionId)
  const messages = Array.from({ length: COUNT }, (_, seq) => message(sessionId, seq))
  const started = performance.now()
  await Promise.all(messages.map((m) => persister.saveMessage(sessionId, m)))
  const seconds = (performance.now() - started) / 1000
  await persister.close()
  return COUNT / seconds
}

/**
 * Raw better-sqlite3: the same pragmas, the same upsert on the same schema, one transaction per
 * 250 rows; the only JavaScript per message is building the row (JSON.stringify of the content
 * and usage), the least any store of this schema must do.
 */
async function rawRound(): Promise<number> {
  const sessionId = uuidv7()
  const filename = await preparedFile(sessionId)
  const database = new BetterSqlite3(filename)
  database.pragma('journal_mode = WAL')
  database.pragma('foreign_keys = ON')
  database.pragma('synchronous = NORMAL')
  database.pragma('cache_size = -32768')
  database.pragma('mmap_size = 268435456')
  database.pragma('wal_autocheckpoint = 8192')
  const upsert = database.prepare(`insert into messages (session_id, id, seq, type, content, timestamp, usage,
stop_reason, incomplete, is_tool_use, tool_name, tool_input, tool_id, tool_result, metadata, extra, agent_name, compaction)
values (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, null, null, null, null, ?, null, null, null)
on conflict (session_id, id) do update set seq = excluded.seq, type = excluded.type, content = excluded.content,
timestamp = excluded.timestamp, usage = excluded.usage, stop_reason = excluded.stop_reason,
incomplete = excluded.incomplete, is_tool_use = excluded.is_tool_use, tool_name = excluded.tool_name,
tool_input = excluded.tool_input, tool_id = excluded.tool_id, tool_result = excluded.tool_result,
metadata = excluded.metadata, extra = excluded.extra, agent_name = excluded.agent_name, compaction = excluded.compaction`)
  const write = database.transaction((batch: AnyMessage[]) => {
    for (const m of batch) {
      upsert.run(
        sessionId,
        m.id,
        m.seq,
        m.type,
        JSON.stringify(m.content),
        m.timestamp,
        m.usage === undefined ? null : JSON.stringify(m.usage),
        m.stopReason ?? null,
        m.incomplete === undefined ? null : m.incomplete ? 1 : 0,
        m.metadata === undefined ? null : JSON.stringify(m.metadata),
      )
    }
  })
  const messages = Array.from({ length: COUNT }, (_, seq) => message(sessionId, seq))
  const started = performance.now()
  for (let start = 0; start < COUNT; start += BATCH) write.immediate(messages.slice(start, start + BATCH))
  const seconds = (performance.now() - started) / 1000
  database.close()
  return COUNT / seconds
}

const rows: string[] = []
const loadAtStart = loadavg()[0]!

describe('SqlitePersister write path against raw better-sqlite3', () => {
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
      const ratio = median(persister) / median(raw)
      const format = (values: number[]) =>
        values.map((value) => Math.round(value).toLocaleString('en-US')).join(' / ')
      rows.push(
        `raw ${format(raw)} msg/s; SqlitePersister ${format(persister)} msg/s; ratio of medians ${ratio.toFixed(2)}× (target ≥ 0.80×)`,
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
