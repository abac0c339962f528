// Streaming benchmark (run: pnpm bench at the repository root, or in this package).
//
// For each provider, a loopback server streams one response of CHUNKS one-token deltas in the
// provider's own wire format (encoded by the contract kit's dialects). Three clients read it:
//   raw      the official SDK's own stream (what an application without AgentX would use)
//   adapter  the AgentX adapter's stream() on its own
//   session  session.stream() of an agent with that adapter and a SqlitePersister (the whole path)
// The variants run interleaved, round after round, in this one process; the medians are compared.
// Run with --expose-gc (as `pnpm bench` does) so that every run starts from a collected heap.
// A ratio is raw time / AgentX time: above 1.0 AgentX is faster than the SDK alone.
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClaudeAdapter } from '@agentx/adapter-claude'
import { GeminiAdapter } from '@agentx/adapter-gemini'
import { OpenAIAdapter } from '@agentx/adapter-openai'
import {
  anthropicMessagesDialect,
  geminiDialect,
  openAIChatDialect,
  openAIResponsesDialect,
} from '@agentx/contract-tests'
import { createAgent } from '@agentx/core'
import { SqlitePersister } from '@agentx/persister-sqlite'
import { Anthropic } from '@anthropic-ai/sdk'
import { GoogleGenAI } from '@google/genai'
import OpenAI from 'openai'

const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 20_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3)
const KEY = 'bench-key-not-secret'
const MODEL = 'bench-model'
/** How many bytes the server writes at once (what a busy TCP connection delivers per read). */
const WRITE_BYTES = 16 * 1024

/** The whole body of a response with CHUNKS deltas of one token, in `dialect`'s wire format. */
function encodeBody(dialect) {
  const response = {
    blocks: [{ type: 'text', text: 'tok '.repeat(CHUNKS) }],
    deltaSize: 4,
    stopReason: 'end_turn',
    usage: { inputTokens: 12, outputTokens: CHUNKS },
    responseId: 'resp_bench',
  }
  const request = { model: MODEL, stream: true, apiKey: KEY, systemPrompt: undefined, messages: [], tools: [], resume: undefined }
  return Buffer.from(dialect.encodeResponse(response, request).join(''))
}

/** A loopback server that answers every request with `body`, written in WRITE_BYTES pieces. */
async function startServer(dialect) {
  const body = encodeBody(dialect)
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', async () => {
      response.writeHead(200, dialect.streamHeaders())
      for (let offset = 0; offset < body.length; offset += WRITE_BYTES) {
        if (!response.write(body.subarray(offset, offset + WRITE_BYTES)))
          await new Promise((resolve) => response.once('drain', resolve))
      }
      response.end()
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, origin: `http://127.0.0.1:${server.address().port}` }
}

async function count(iterable) {
  let events = 0
  for await (const _ of iterable) events++
  return events
}

const folder = mkdtempSync(join(tmpdir(), 'agentx-streaming-bench-'))

/** One agent per provider on its own SQLite file; a new session for every run. */
function sessionRunner(adapter, name) {
  const agent = createAgent({ model: MODEL }, { adapter, persister: new SqlitePersister({ filename: join(folder, `${name}.db`) }) })
  return {
    run: async () => count((await agent.createSession({})).stream('Stream something long.')),
    close: () => agent.close(),
  }
}

const providers = [
  {
    name: 'Claude',
    dialect: anthropicMessagesDialect,
    setup(origin) {
      const client = new Anthropic({ apiKey: KEY, baseURL: origin, maxRetries: 0, logLevel: 'off' })
      const adapter = new ClaudeAdapter({ apiKey: KEY, baseURL: origin })
      const raw = async () =>
        count(
          await client.messages.create({
            model: MODEL,
            max_tokens: 1024,
            messages: [{ role: 'user', content: 'Stream something long.' }],
            stream: true,
          }),
        )
      return { raw, adapter }
    },
  },
  {
    name: 'OpenAI Responses',
    dialect: openAIResponsesDialect,
    setup(origin) {
      const client = new OpenAI({ apiKey: KEY, baseURL: `${origin}/v1`, maxRetries: 0, logLevel: 'off' })
      const adapter = new OpenAIAdapter({ apiKey: KEY, baseURL: `${origin}/v1` })
      const raw = async () =>
        count(await client.responses.create({ model: MODEL, input: 'Stream something long.', stream: true }))
      return { raw, adapter }
    },
  },
  {
    name: 'OpenAI Chat',
    dialect: openAIChatDialect,
    setup(origin) {
      const client = new OpenAI({ apiKey: KEY, baseURL: `${origin}/v1`, maxRetries: 0, logLevel: 'off' })
      const adapter = new OpenAIAdapter({ apiKey: KEY, baseURL: `${origin}/v1`, api: 'chat' })
      const raw = async () =>
        count(
          await client.chat.completions.create({
            model: MODEL,
            messages: [{ role: 'user', content: 'Stream something long.' }],
            stream: true,
            stream_options: { include_usage: true },
          }),
        )
      return { raw, adapter }
    },
  },
  {
    name: 'Gemini',
    dialect: geminiDialect,
    setup(origin) {
      const client = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: origin } })
      const adapter = new GeminiAdapter({ apiKey: KEY, baseURL: origin })
      const raw = async () =>
        count(await client.models.generateContentStream({ model: MODEL, contents: 'Stream something long.' }))
      return { raw, adapter }
    },
  },
]

const only = process.env.BENCH_ONLY?.toLowerCase()
const entries = []
for (const provider of providers.filter((candidate) => only === undefined || candidate.name.toLowerCase().includes(only))) {
  const { server, origin } = await startServer(provider.dialect)
  const { raw, adapter } = provider.setup(origin)
  const session = sessionRunner(adapter, provider.name.replace(/\W+/g, '-'))
  const variants = {
    raw,
    adapter: () => count(adapter.stream('Stream something long.', { model: MODEL, history: [] })),
    session: session.run,
  }
  entries.push({ provider, server, session, variants, times: { raw: [], adapter: [], session: [] }, events: {} })
}

// Each run starts from a collected heap (with --expose-gc), so no run pays for another's garbage,
// and the order of the variants rotates from round to round.
const collect = typeof globalThis.gc === 'function' ? globalThis.gc : () => {}
for (let round = 0; round < WARMUP + ROUNDS; round++) {
  for (const entry of entries) {
    const variants = Object.entries(entry.variants)
    for (let turn = 0; turn < variants.length; turn++) {
      const [variant, run] = variants[(round + turn) % variants.length]
      collect()
      const start = performance.now()
      entry.events[variant] = await run()
      const ms = performance.now() - start
      if (round >= WARMUP) entry.times[variant].push(ms)
    }
  }
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/** Median over rounds of raw / variant time within the same round: robust to load that drifts between rounds. */
const pairedRatio = (entry, variant) => median(entry.times.raw.map((raw, round) => raw / entry.times[variant][round]))

console.log(
  `Streaming ${CHUNKS} one-token chunks from a loopback server; ${ROUNDS} interleaved rounds after ${WARMUP} warm-up rounds`,
)
console.log(`machine: ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.versions.node}`)
console.log('')
console.log('provider          raw SDK   adapter.stream()  session.stream()+SQLite   adapter vs raw   session vs raw')
for (const entry of entries) {
  console.log(
    [
      entry.provider.name.padEnd(16),
      `${median(entry.times.raw).toFixed(1)} ms`.padStart(9),
      `${median(entry.times.adapter).toFixed(1)} ms`.padStart(17),
      `${median(entry.times.session).toFixed(1)} ms`.padStart(24),
      `${pairedRatio(entry, 'adapter').toFixed(2)}×`.padStart(16),
      `${pairedRatio(entry, 'session').toFixed(2)}×`.padStart(16),
    ].join(' '),
  )
}
console.log('')
console.log('times: medians per run; ratio: median over rounds of (raw SDK time / AgentX time) in the same round.')
console.log('Above 1.00× AgentX is faster than the SDK on its own.')
const counts = entries.map((entry) => `${entry.provider.name}: ${entry.events.raw} SDK events, ${entry.events.adapter} adapter events, ${entry.events.session} session events`)
console.log(`events per run: ${counts.join('; ')}`)

for (const entry of entries) {
  await entry.session.close()
  entry.server.close()
}
rmSync(folder, { recursive: true, force: true })
