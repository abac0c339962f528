import { uuidv7 } from '@agentx/core'
import { bench } from 'vitest'
import { createPostgresPersister } from '../src/index.js'
import { freshSchema, TEST_DATABASE_URL } from '../test/test-database.js'
const TEXT = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(17).slice(0, 960)
bench('x', async () => {
  for (const B of [1000, 2000, 5000]) {
    const p = createPostgresPersister({ connectionString: TEST_DATABASE_URL, schema: freshSchema(), maxBatchSize: B })
    const sid = uuidv7()
    await p.saveSession({ id: sid, summary: '', createdAt: new Date().toISOString(), lastActivity: new Date().toISOString(), state: 'idle', tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } })
    const N = 100000
    const msgs = Array.from({ length: N }, (_, seq) => ({ id: uuidv7(), sessionId: sid, seq, type: 'user' as const, content: [{ type: 'text' as const, text: TEXT }], timestamp: new Date().toISOString() }))
    const t = performance.now()
    await Promise.all(msgs.map((m) => p.saveMessage(sid, m)))
    console.log('B', B, 'rate', Math.round(N / ((performance.now() - t) / 1000)))
    const k = await p.getKysely()
    await p.close()
    void k
  }
}, { iterations: 1, time: 0, warmupIterations: 0, warmupTime: 0, throws: true })
