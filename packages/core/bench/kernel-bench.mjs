// Kernel benchmark (run: pnpm bench). Measures the kernel's own overhead with an in-memory store
// and a scripted model, so storage and network costs are out of the picture.
import { createAgent, InMemoryPersister } from '../dist/index.js'
import { ScriptedAdapter, textTurn, usage } from '../dist/testing/index.js'

const hr = () => Number(process.hrtime.bigint()) / 1e6

async function startupWithManySessions(sessionCount, messagesPerSession) {
  const persister = new InMemoryPersister()
  const now = new Date().toISOString()
  for (let i = 0; i < sessionCount; i++) {
    const id = `s-${i}`
    await persister.saveSession({ id, summary: '', createdAt: now, lastActivity: now, state: 'idle', tokenUsage: usage(0, 0) })
    for (let seq = 0; seq < messagesPerSession; seq++) {
      await persister.saveMessage(id, { id: `${id}-${seq}`, sessionId: id, seq, type: 'user', content: 'x'.repeat(100), timestamp: now })
    }
  }
  const agent = createAgent({}, { adapter: new ScriptedAdapter(), persister })
  const start = hr()
  await agent.initialize()
  const initMs = hr() - start
  const pageStart = hr()
  await agent.getSessions({ limit: 50 })
  return { initMs, firstPageMs: hr() - pageStart }
}

async function sendThroughput(sends) {
  // A minimal adapter: ScriptedAdapter records every call's history, which would measure the double.
  const reply = textTurn('a reply of a few words', { usage: usage(10, 5) })
  const adapter = { getName: () => 'bench', async *stream() { yield* reply } }
  const agent = createAgent({ checkpointIntervalMs: 250 }, { adapter, persister: new InMemoryPersister() })
  const session = await agent.createSession()
  const start = hr()
  for (let i = 0; i < sends; i++) await session.send(`message ${i}`)
  await session.flush()
  const ms = hr() - start
  return { sends, ms, sendsPerSecond: Math.round((sends / ms) * 1000) }
}

const small = await startupWithManySessions(1_000, 10)
const large = await startupWithManySessions(100_000, 10)
console.log(`initialize() with 1k sessions / 10k messages:    ${small.initMs.toFixed(2)} ms (first page of 50: ${small.firstPageMs.toFixed(2)} ms)`)
console.log(`initialize() with 100k sessions / 1M messages:   ${large.initMs.toFixed(2)} ms (first page of 50: ${large.firstPageMs.toFixed(2)} ms)`)
const throughput = await sendThroughput(2_000)
console.log(`send() round trips (scripted model, in-memory):  ${throughput.sendsPerSecond} sends/s (${throughput.sends} sends in ${throughput.ms.toFixed(0)} ms; each send: 2 messages, 3 session writes, 7 events)`)
