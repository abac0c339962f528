import type { AdapterMessage } from '@agentx/core'
import { describe, expect, it } from 'vitest'
import { geminiIdentity } from './map-gemini-error.js'
import { GeminiStreamMapper } from './map-gemini-stream.js'

/** Feeds each chunk as the `data` of one event, then ends the body. */
function run(chunks: unknown[]): AdapterMessage[] {
  const events: AdapterMessage[] = []
  const mapper = new GeminiStreamMapper(geminiIdentity([]))
  for (const chunk of chunks) mapper.onEvent(undefined, JSON.stringify(chunk), events)
  mapper.onEnd(events)
  return events
}

describe('GeminiStreamMapper', () => {
  it('reports usage of a trailing chunk after the finish reason, once, before the message', () => {
    const events = run([
      { candidates: [{ content: { role: 'model', parts: [{ text: 'done' }] }, finishReason: 'STOP' }] },
      { usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 1, totalTokenCount: 5 } },
    ])
    expect(events).toEqual([
      { type: 'text-delta', text: 'done' },
      { type: 'usage', usage: { inputTokens: 4, outputTokens: 1, totalTokens: 5 } },
      { type: 'message', content: [{ type: 'text', text: 'done' }], stopReason: 'end_turn' },
    ])
  })

  it('throws a retryable network error when the body ends before a finish reason', () => {
    expect(() => run([{ candidates: [{ content: { role: 'model', parts: [{ text: 'cut' }] } }] }])).toThrow(
      expect.objectContaining({ kind: 'network', retryable: true }),
    )
  })

  it('parses string arguments when they are JSON and keeps them raw when not; missing arguments are {}', () => {
    const events = run([
      {
        responseId: 'r9',
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { functionCall: { id: 'a', name: 'f', args: '{"x":1}' } },
                { functionCall: { id: 'b', name: 'f', args: '{"x":' } },
                { functionCall: { name: 'g' } },
              ],
            },
            finishReason: 'STOP',
          },
        ],
      },
    ])
    expect(events.filter((event) => event.type === 'tool-call')).toEqual([
      { type: 'tool-call', id: 'a', name: 'f', input: { x: 1 } },
      { type: 'tool-call', id: 'b', name: 'f', input: '{"x":' },
      { type: 'tool-call', id: 'gemini-call-r9-2', name: 'g', input: {} },
    ])
  })

  it('yields fresh tool inputs: mutating an event leaves the message intact', () => {
    const chunks = [
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [{ functionCall: { id: 'a', name: 'f', args: { list: [1] } } }],
            },
            finishReason: 'STOP',
          },
        ],
      },
    ]
    const events = run(chunks)
    for (const event of events)
      if (event.type === 'tool-call') (event.input as { list: number[] }).list.push(2)
    const message = events.at(-1)
    expect(message?.type === 'message' && message.content[0]).toMatchObject({ input: { list: [1] } })
  })

  it('reads only the first candidate', () => {
    const events = run([
      {
        candidates: [
          { index: 1, content: { role: 'model', parts: [{ text: 'second' }] }, finishReason: 'STOP' },
          { index: 0, content: { role: 'model', parts: [{ text: 'first' }] }, finishReason: 'STOP' },
        ],
      },
    ])
    expect(events.filter((event) => event.type === 'text-delta')).toEqual([
      { type: 'text-delta', text: 'first' },
    ])
  })
})
