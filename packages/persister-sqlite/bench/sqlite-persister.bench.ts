import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AnyMessage, SessionData } from '@agentx/core'
import { uuidv7 } from '@agentx/core'
import { afterAll, bench, describe } from 'vitest'
import { createSqlitePersister, type SqlitePersister } from '../src/index.js'

// `pnpm bench`: throughput of the default persister. Results go into README.md ("Performance").

const WRITE_COUNT = 100_000
const READ_SESSION_SIZE = 10_000
const LISTED_SESSIONS = 100_000
const PAGE = 50

const folder = mkdtempSync(join(tmpdir(), 'agentx-sqlite-bench-'))
afterAll(() => rmSync(folder, { recursive: true, force: true }))

const TEXT = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(17).slice(0, 960)

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

/** A ~1 KB message (its JSON row is about 1 KB). */
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

let runs = 0
const writeRuns: string[] = []
const loadAtStart = loadavg()[0]!

async function seededReads(): Promise<{ persister: SqlitePersister; sessionId: string }> {
  const persister = createSqlitePersister({ filename: join(folder, 'reads.db') })
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
  return { persister, sessionId }
}

const reads = await seededReads()
afterAll(() => reads.persister.close())

describe('SqlitePersister', () => {
  bench(
    `saveMessage × ${WRITE_COUNT} (~1 KB each, not awaited one by one)`,
    async () => {
      const persister = createSqlitePersister({ filename: join(folder, `writes-${runs++}.db`) })
      const sessionId = uuidv7()
      await persister.saveSession(session(sessionId, 0))
      const messages = Array.from({ length: WRITE_COUNT }, (_, seq) => message(sessionId, seq))
      const cpuBefore = process.cpuUsage()
      const started = performance.now()
      await Promise.all(messages.map((m) => persister.saveMessage(sessionId, m)))
      const seconds = (performance.now() - started) / 1000
      const cpu = process.cpuUsage(cpuBefore)
      writeRuns.push(
        `${Math.round(WRITE_COUNT / seconds).toLocaleString('en-US')} messages/s ` +
          `(${Math.round(seconds * 1000)} ms, CPU ${Math.round((cpu.user + cpu.system) / 1000)} ms)`,
      )
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
  if (writeRuns.length > 0) {
    process.stdout.write(`saveMessage × ${WRITE_COUNT}, per run: ${writeRuns.join('; ')}\n`)
  }
  // Other processes competing for the cores show in the load average; it skews every number.
  const load = [loadAtStart, loadavg()[0]!].map((value) => value.toFixed(2))
  process.stdout.write(`1-minute load average at start and end: ${load.join(' and ')}\n`)
})
