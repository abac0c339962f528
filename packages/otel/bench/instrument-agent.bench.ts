import { createAgent, InMemoryPersister } from '@agentx/core'
import type { AdapterMessage } from '@agentx/core'
import { ScriptedAdapter, textTurn, toolCallTurn, usage } from '@agentx/core/testing'
import { MeterProvider } from '@opentelemetry/sdk-metrics'
import { BatchSpanProcessor, InMemorySpanExporter, TracerProvider } from '@opentelemetry/sdk-trace'
import { bench, describe } from 'vitest'
import { instrumentAgent } from '../src/index.js'

// One send: a tool call, then a reply streamed as 2,000 deltas — the events a long answer produces.
const turns = (): AdapterMessage[][] => [
  toolCallTurn([{ id: 'c1', name: 'noop', input: {} }], { usage: usage(50, 5) }),
  textTurn('x'.repeat(2000), { chunkSize: 1, usage: usage(80, 2000) }),
]

function agentWith(instrumented: boolean) {
  const adapter = new ScriptedAdapter([])
  const agent = createAgent(
    {
      model: 'model-a',
      checkpointIntervalMs: 60_000,
      tools: [
        { name: 'noop', description: 'Does nothing.', inputSchema: { type: 'object' }, execute: () => 'ok' },
      ],
    },
    { adapter, persister: new InMemoryPersister() },
  )
  if (instrumented) {
    const exporter = new InMemorySpanExporter()
    instrumentAgent(agent, {
      tracerProvider: new TracerProvider({ spanProcessors: [new BatchSpanProcessor({ exporter })] }),
      meterProvider: new MeterProvider(),
    })
    setInterval(() => exporter.reset(), 1000).unref()
  }
  return { agent, adapter }
}

describe('a send of 2,000 streamed deltas and one tool call', () => {
  const plain = agentWith(false)
  const instrumented = agentWith(true)
  bench(
    'without instrumentation',
    async () => {
      plain.adapter.push(...turns())
      await plain.agent.chat('go')
    },
    { time: 5000 },
  )
  bench(
    'with instrumentAgent (SDK tracer and meter)',
    async () => {
      instrumented.adapter.push(...turns())
      await instrumented.agent.chat('go')
    },
    { time: 5000 },
  )
})
