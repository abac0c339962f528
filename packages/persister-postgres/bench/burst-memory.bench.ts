import { loadavg } from 'node:os'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { AnyMessage, SessionData } from '@agentx/core'
import { uuidv7 } from '@agentx/core'
import { afterAll, bench, describe } from 'vitest'
import { createPostgresPersister } from '../src/index.js'
import { adminPool, dropSchema, freshSchema, TEST_DATABASE_URL } from '../test/test-database.js'

// `pnpm bench`: what a burst of saveMessage calls issued in one synchronous loop, behind a
// saveSession, costs in memory: the live heap right after the loop (a full collection first), per
// message, and the highest RSS while the burst is written, against the JSON size of a message.
// Results go into README.md ("Performance").

const COUNT = 100_000
const TEXT = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(17).slice(0, 960)

setFlagsFromString('--expose-gc')
const collect = runInNewContext('gc') as () => void

const admin = adminPool()
const schemas: string[] = []
const rows: string[] = []
const loadAtStart = loadavg()[0]!
afterAll(async () => {
  for (const schema of schemas) await dropSchema(admin, schema)
  await admin.end()
  for (const row of rows) process.stdout.write(`${row}\n`)
  const load = [loadAtStart, loadavg()[0]!].map((value) => value.toFixed(2))
  process.stdout.write(`1-minute load average at start and end: ${load.join(' and ')}\n`)
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

const kib = (bytes: number) => `${(bytes / 1024).toFixed(2)} KiB`

describe('PostgresPersister memory under a synchronous burst', () => {
  bench(
    `saveSession + saveMessage × ${COUNT} (~1 KB) in one synchronous loop`,
    async () => {
      const schema = freshSchema()
      schemas.push(schema)
      const persister = createPostgresPersister({ connectionString: TEST_DATABASE_URL, schema })
      await persister.getSession('warm-up')
      const sessionId = uuidv7()
      const messages = Array.from({ length: COUNT }, (_, seq) => message(sessionId, seq))
      const calls: Array<Promise<void>> = new Array(COUNT + 1)
      collect()
      const before = process.memoryUsage()
      calls[0] = persister.saveSession(session(sessionId))
      for (let seq = 0; seq < COUNT; seq++) calls[seq + 1] = persister.saveMessage(sessionId, messages[seq]!)
      collect()
      const afterLoop = process.memoryUsage()
      let peakRss = afterLoop.rss
      const sampler = setInterval(() => {
        peakRss = Math.max(peakRss, process.memoryUsage().rss)
      }, 5)
      const started = performance.now()
      await Promise.all(calls)
      const seconds = (performance.now() - started) / 1000
      clearInterval(sampler)
      await persister.close()
      const json = JSON.stringify(messages[0]).length
      rows.push(
        `burst of ${COUNT} (${json} bytes of JSON each): live heap after the loop ` +
          `${kib((afterLoop.heapUsed - before.heapUsed) / COUNT)} per message ` +
          `(+ ${kib((afterLoop.external + afterLoop.arrayBuffers - before.external - before.arrayBuffers) / COUNT)} outside the heap); ` +
          `RSS +${Math.round((afterLoop.rss - before.rss) / 2 ** 20)} MiB after the loop, ` +
          `+${Math.round((peakRss - before.rss) / 2 ** 20)} MiB at most while writing; ` +
          `written in ${seconds.toFixed(1)} s after the loop`,
      )
    },
    { iterations: 3, warmupIterations: 0, time: 0, warmupTime: 0, throws: true },
  )
})
