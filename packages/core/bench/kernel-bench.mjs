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


// --- Per-event cost: text-delta events through session.stream() vs consuming the adapter directly.
function deltaAdapter(chunks) {
  const events = Array.from({ length: chunks }, () => ({ type: 'text-delta', text: 'x' }))
  events.push({ type: 'message', content: [{ type: 'text', text: 'x'.repeat(chunks) }], stopReason: 'end_turn' })
  return {
    getName: () => 'bench',
    async *stream() {
      for (const event of events) yield event
    },
  }
}

/** A consumer that yields to the event loop every `every` events, as a socket writer does. */
async function consume(iterable, every) {
  let n = 0
  for await (const _ of iterable) {
    if (every > 0 && ++n % every === 0) await new Promise((resolve) => setImmediate(resolve))
  }
}

async function eventsRound(chunks, every) {
  const adapter = deltaAdapter(chunks)
  let start = hr()
  await consume(adapter.stream(), every)
  const rawMs = hr() - start
  const agent = createAgent({}, { adapter, persister: new InMemoryPersister() })
  const session = await agent.createSession()
  start = hr()
  await consume(session.stream('go'), every)
  const kernelMs = hr() - start
  await agent.close()
  return { rawMs, kernelMs }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

// Interleaved rounds (adapter alone, then the kernel), medians: the machine's own drift cancels out.
async function eventsCompared(chunks, every, rounds) {
  await eventsRound(chunks, every) // warm-up
  const raw = []
  const kernel = []
  for (let i = 0; i < rounds; i++) {
    const r = await eventsRound(chunks, every)
    raw.push(r.rawMs)
    kernel.push(r.kernelMs)
  }
  return { raw: median(raw), kernel: median(kernel), ratio: median(kernel.map((ms, i) => ms / raw[i])) }
}

// The per-event rows run first, before the large stores below fill the heap.
const rate = await eventsCompared(200_000, 0, 9)
console.log(
  `text-delta events through session.stream():     ${(200 / rate.kernel).toFixed(2)} M events/s (${((rate.kernel * 1e6) / 200_000).toFixed(0)} ns/event; adapter consumed directly: ${(200 / rate.raw).toFixed(2)} M/s)`,
)
for (const chunks of [20_000, 50_000, 100_000]) {
  const r = await eventsCompared(chunks, 64, Math.max(15, Math.round(2_000_000 / chunks)))
  console.log(
    `stream() with a consumer yielding every 64 events, ${String(chunks).padStart(6)} chunks: ${r.ratio.toFixed(2)}× the adapter's own time (median ${r.kernel.toFixed(1)} vs ${r.raw.toFixed(1)} ms)`,
  )
}

const small = await startupWithManySessions(1_000, 10)
const large = await startupWithManySessions(100_000, 10)
console.log(`initialize() with 1k sessions / 10k messages:    ${small.initMs.toFixed(2)} ms (first page of 50: ${small.firstPageMs.toFixed(2)} ms)`)
console.log(`initialize() with 100k sessions / 1M messages:   ${large.initMs.toFixed(2)} ms (first page of 50: ${large.firstPageMs.toFixed(2)} ms)`)
const throughput = await sendThroughput(2_000)
console.log(`send() round trips (scripted model, in-memory):  ${throughput.sendsPerSecond} sends/s (${throughput.sends} sends in ${throughput.ms.toFixed(0)} ms; each send: 2 messages, 3 session writes, 7 events)`)

// --- Reading history: a 10 000-message session through the agent vs the persister alone.
async function historyReads(count) {
  const persister = new InMemoryPersister()
  const now = new Date().toISOString()
  await persister.saveSession({ id: 'h', summary: '', createdAt: now, lastActivity: now, state: 'idle', tokenUsage: usage(0, 0) })
  for (let seq = 0; seq < count; seq++) {
    await persister.saveMessage('h', { id: `h-${seq}`, sessionId: 'h', seq, type: seq % 2 ? 'agent' : 'user', content: [{ type: 'text', text: 'y'.repeat(200) }], timestamp: now })
  }
  const rows = { full: [], store: [], latest: [] }
  for (let round = 0; round < 5; round++) {
    let start = hr()
    for (let afterSeq = -1; ; ) {
      const page = await persister.getMessages('h', afterSeq < 0 ? { limit: 1000 } : { afterSeq, limit: 1000 })
      if (page.length < 1000) break
      afterSeq = page[page.length - 1].seq
    }
    rows.store.push(hr() - start)
    const agent = createAgent({}, { adapter: new ScriptedAdapter(), persister })
    await agent.initialize()
    start = hr()
    await (await agent.getSession('h')).getMessages()
    rows.full.push(hr() - start)
    await agent.close()
    const other = createAgent({}, { adapter: new ScriptedAdapter(), persister })
    await other.initialize()
    start = hr()
    await (await other.getSession('h')).getMessages({ limit: 100 })
    rows.latest.push(hr() - start)
    await other.close()
  }
  return { full: median(rows.full), store: median(rows.store), latest: median(rows.latest) }
}

const reads = await historyReads(10_000)
console.log(
  `10 000-message session: full getMessages() ${reads.full.toFixed(1)} ms (the persister alone: ${reads.store.toFixed(1)} ms); latest 100: ${reads.latest.toFixed(2)} ms`,
)

// --- Long conversations: hydrate + first request of a stored session with a compaction summary.
// A session loads the latest summary and what follows it (what the model needs), so the cost must
// not depend on how long the conversation was before the compaction point.
async function compactedSession(count, summaryAt) {
  const persister = new InMemoryPersister()
  const now = new Date().toISOString()
  await persister.saveSession({ id: 'c', summary: '', createdAt: now, lastActivity: now, state: 'idle', tokenUsage: usage(0, 0) })
  for (let seq = 0; seq < count; seq++) {
    const message =
      seq === summaryAt
        ? { id: `c-${seq}`, sessionId: 'c', seq, type: 'system', content: [{ type: 'text', text: 'summary '.repeat(100) }], timestamp: now, compaction: { throughSeq: summaryAt - 9 } }
        : { id: `c-${seq}`, sessionId: 'c', seq, type: seq % 2 ? 'agent' : 'user', content: [{ type: 'text', text: 'y'.repeat(200) }], timestamp: now }
    await persister.saveMessage('c', message)
  }
  return persister
}

/** getSession + the first send (its model request included), on a fresh agent each round; the median. */
async function hydrateAndFirstRequest(persister, rounds) {
  const reply = textTurn('ok', { usage: usage(10, 5) })
  const times = []
  let sent = 0
  for (let round = 0; round < rounds + 1; round++) {
    const adapter = {
      getName: () => 'bench',
      async *stream(_prompt, options) {
        sent = options.history.length
        yield* reply
      },
    }
    const agent = createAgent({}, { adapter, persister })
    await agent.initialize()
    const start = hr()
    await (await agent.getSession('c')).send('next')
    if (round > 0) times.push(hr() - start) // round 0 warms up
    await agent.close()
  }
  return { ms: times.sort((a, b) => a - b)[Math.floor(times.length / 2)], sent }
}

for (const [label, count, summaryAt] of [
  ['100 000 messages, summary 30 from the end', 100_000, 100_000 - 30],
  ['  1 000 messages, summary 30 from the end', 1_000, 1_000 - 30],
  ['100 000 messages, summary at seq 20       ', 100_000, 20],
  ['100 000 messages, never compacted         ', 100_000, -1],
]) {
  const persister = await compactedSession(count, summaryAt)
  const { ms, sent } = await hydrateAndFirstRequest(persister, 5)
  console.log(`hydrate + first request, ${label}: ${ms.toFixed(2)} ms (${sent} messages sent to the model)`)
}
