import { SpanStatusCode } from '@opentelemetry/api'
import { describe, expect, it } from 'vitest'
import { createHarness, parentOf } from '../test/otel-harness.js'
import {
  type InstrumentableAgent,
  instrumentAgent,
  type ObservedEvent,
  type ObservedEventListener,
} from './index.js'

/**
 * Events core does not emit yet (DESIGN §10.3 handoffs and sub-agents, §10.4 compaction), played by
 * a stand-in agent through the same `subscribe` signature.
 */
class FakeAgent implements InstrumentableAgent {
  readonly listeners = new Set<ObservedEventListener>()
  subscribe(listener: ObservedEventListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }
  emit(sessionId: string, ...events: ObservedEvent[]): void {
    for (const event of events) for (const listener of this.listeners) listener(event, { id: sessionId })
  }
}

const usage = (input: number, output: number) => ({
  inputTokens: input,
  outputTokens: output,
  totalTokens: input + output,
})
const agentMessage = (content: unknown[], stopReason: string) => ({
  type: 'message',
  message: { type: 'agent', content, stopReason },
})

/** One complete send of a child session, as its events. */
function childSend(model: string): ObservedEvent[] {
  return [
    { type: 'message', message: { type: 'user', content: 'find sources' } },
    { type: 'state', state: 'active', previous: 'created' },
    { type: 'step-start', step: 1, agent: 'researcher', model },
    { type: 'text-delta', text: 'three sources' },
    { type: 'step-finish', step: 1, usage: usage(7, 3), stopReason: 'end_turn' },
    agentMessage([{ type: 'text', text: 'three sources' }], 'end_turn'),
    { type: 'state', state: 'idle', previous: 'active' },
    { type: 'done', result: { usage: usage(7, 3), stopReason: 'end_turn', messages: [] } },
  ]
}

function setup() {
  const harness = createHarness()
  const agent = new FakeAgent()
  const stop = instrumentAgent(agent, {
    tracerProvider: harness.tracerProvider,
    meterProvider: harness.meterProvider,
  })
  return { harness, agent, stop }
}

describe('events of later releases', () => {
  it('records handoffs and compactions as span events and sub-agents as child spans under their tool call', async () => {
    const { harness, agent } = setup()
    agent.emit(
      'parent',
      { type: 'state', state: 'active', previous: 'idle' },
      { type: 'step-start', step: 1, agent: 'default', model: 'model-a', provider: 'openai' },
      { type: 'step-finish', step: 1, usage: usage(10, 2), stopReason: 'tool_use' },
      agentMessage(
        [{ type: 'tool_use', id: 't1', name: 'researcher', input: { task: 'find sources' } }],
        'tool_use',
      ),
    )
    for (const event of childSend('model-b')) {
      agent.emit('parent', { type: 'subagent', sessionId: 'child', agent: 'researcher', event })
      // The child's own events also reach agent.subscribe; they must not be traced twice.
      agent.emit('child', event)
    }
    agent.emit(
      'parent',
      { type: 'tool-result', toolUseId: 't1', content: [{ type: 'text', text: 'three sources' }] },
      { type: 'handoff', from: 'default', to: 'billing' },
      {
        type: 'compaction',
        message: {
          type: 'system',
          content: [{ type: 'text', text: 'summary' }],
          compaction: { throughSeq: 41 },
          usage: usage(900, 80),
        },
      },
      { type: 'step-start', step: 2, agent: 'billing', model: 'model-a' },
      { type: 'step-finish', step: 2, usage: usage(20, 5), stopReason: 'end_turn' },
      agentMessage([{ type: 'text', text: 'done' }], 'end_turn'),
      { type: 'input-required' },
      { type: 'a-future-event', whatever: true },
      { type: 'state', state: 'idle', previous: 'active' },
      { type: 'done', result: { usage: usage(37, 10), stopReason: 'end_turn', messages: [] } },
    )

    const spans = await harness.spans()
    expect(spans.map((span) => span.name)).toEqual([
      'chat model-a',
      'chat model-b',
      'invoke_agent researcher',
      'execute_tool researcher',
      'chat model-a',
      'invoke_agent default',
    ])
    const parent = await harness.span('invoke_agent default')
    const tool = await harness.span('execute_tool researcher')
    const child = await harness.span('invoke_agent researcher')
    const childChat = await harness.span('chat model-b')
    expect(parentOf(tool)).toBe(parent.spanContext().spanId)
    expect(parentOf(child)).toBe(tool.spanContext().spanId)
    expect(parentOf(childChat)).toBe(child.spanContext().spanId)
    expect(child.spanContext().traceId).toBe(parent.spanContext().traceId)
    expect(child.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'researcher',
      'gen_ai.conversation.id': 'child',
      'gen_ai.usage.input_tokens': 7,
    })
    // A provider named by step-start wins for that request.
    expect(spans[0]!.attributes['gen_ai.provider.name']).toBe('openai')
    expect(parent.attributes['gen_ai.usage.input_tokens']).toBe(37)

    expect(parent.events.map((event) => [event.name, event.attributes])).toEqual([
      ['agentx.subagent', { 'agentx.subagent.session_id': 'child', 'gen_ai.agent.name': 'researcher' }],
      ['agentx.handoff', { 'agentx.handoff.from': 'default', 'agentx.handoff.to': 'billing' }],
      [
        'agentx.compaction',
        {
          'gen_ai.conversation.id': 'parent',
          'agentx.compaction.through_seq': 41,
          'gen_ai.usage.input_tokens': 900,
          'gen_ai.usage.output_tokens': 80,
        },
      ],
      ['agentx.input_required', undefined],
    ])
  })

  it('traces a sub-agent of a sub-agent under the right tool calls', async () => {
    const { harness, agent } = setup()
    const wrap = (event: ObservedEvent): ObservedEvent => ({
      type: 'subagent',
      sessionId: 'child',
      agent: 'researcher',
      event,
    })
    agent.emit(
      'parent',
      { type: 'state', state: 'active', previous: 'idle' },
      { type: 'step-start', step: 1, agent: 'default', model: 'model-a' },
      { type: 'step-finish', step: 1, stopReason: 'tool_use' },
      agentMessage([{ type: 'tool_use', id: 't1', name: 'researcher', input: {} }], 'tool_use'),
      wrap({ type: 'state', state: 'active', previous: 'created' }),
      wrap({ type: 'step-start', step: 1, agent: 'researcher', model: 'model-b' }),
      wrap({ type: 'step-finish', step: 1, stopReason: 'tool_use' }),
      wrap(agentMessage([{ type: 'tool_use', id: 't2', name: 'reader', input: {} }], 'tool_use')),
      ...childSend('model-c').map((event) =>
        wrap({ type: 'subagent', sessionId: 'grandchild', agent: 'reader', event }),
      ),
      wrap({ type: 'tool-result', toolUseId: 't2', content: 'read' }),
      wrap({ type: 'state', state: 'idle', previous: 'active' }),
      wrap({ type: 'done', result: {} }),
      { type: 'tool-result', toolUseId: 't1', content: 'researched' },
      { type: 'state', state: 'idle', previous: 'active' },
      { type: 'done', result: {} },
    )
    const reader = await harness.span('execute_tool reader')
    const grandchild = (await harness.spans()).find(
      (span) =>
        span.attributes['gen_ai.conversation.id'] === 'grandchild' && span.name.startsWith('invoke_agent'),
    )
    expect(grandchild?.name).toBe('invoke_agent reader')
    expect(parentOf(grandchild!)).toBe(reader.spanContext().spanId)
    expect(parentOf(reader)).toBe((await harness.span('invoke_agent researcher')).spanContext().spanId)
  })

  it('records a compaction outside a send as a span of its own', async () => {
    const { harness, agent } = setup()
    agent.emit('s1', {
      type: 'compaction',
      message: { type: 'system', content: [], compaction: { throughSeq: 3 } },
    })
    const span = await harness.span('agentx.compaction')
    expect(span.attributes).toEqual({ 'gen_ai.conversation.id': 's1', 'agentx.compaction.through_seq': 3 })
  })

  it('ends a send left waiting for input, and ignores events of sessions with no send in progress', async () => {
    const { harness, agent } = setup()
    agent.emit(
      's1',
      { type: 'text-delta', text: 'stray' },
      { type: 'step-finish', step: 1, stopReason: 'end_turn' },
      { type: 'tool-result', toolUseId: 'nope', content: 'x' },
      { type: 'state', state: 'active', previous: 'idle' },
      { type: 'step-start', step: 1, agent: 'default', model: 'm' },
      { type: 'step-finish', step: 1, stopReason: 'tool_use' },
      agentMessage([{ type: 'tool_use', id: 'a1', name: 'delete_files', input: {} }], 'tool_use'),
      { type: 'input-required' },
      { type: 'state', state: 'waiting_input', previous: 'active' },
    )
    const spans = await harness.spans()
    // The call only waits for an answer: it did not run, so it has no execute_tool span.
    expect(spans.map((span) => span.name)).toEqual(['chat m', 'invoke_agent default'])
    expect(spans.every((span) => span.status.code === SpanStatusCode.UNSET)).toBe(true)
    expect(spans[1]!.events.map((event) => event.name)).toEqual(['agentx.input_required'])
  })

  it('survives malformed events', async () => {
    const { harness, agent } = setup()
    const malformed: unknown[] = [
      { type: 'state' },
      { type: 'state', state: 'active', previous: 'idle' },
      { type: 'message' },
      { type: 'message', message: { type: 'agent', content: [null, { type: 'tool_use' }] } },
      { type: 'step-start' },
      { type: 'step-finish', usage: { inputTokens: 'many' } },
      { type: 'retry', error: null },
      { type: 'subagent', sessionId: 42, event: null },
      { type: 'subagent', sessionId: 'c', event: { nope: true } },
      { type: 'done' },
    ]
    for (const event of malformed) agent.emit('s1', event as ObservedEvent)
    const spans = await harness.spans()
    expect(spans.map((span) => span.name)).toEqual(['chat', 'invoke_agent'])
  })
})
