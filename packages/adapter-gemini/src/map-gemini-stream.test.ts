import type { AdapterMessage } from '@agentx/core'
import type { GenerateContentResponse } from '@google/genai'
import { describe, expect, it } from 'vitest'
import { mapGeminiStream } from './map-gemini-stream.js'

async function* chunksThen(chunks: unknown[], error?: Error): AsyncGenerator<GenerateContentResponse> {
  for (const chunk of chunks) yield chunk as GenerateContentResponse
  if (error) throw error
}

async function run(chunks: unknown[], error?: Error): Promise<AdapterMessage[]> {
  const events: AdapterMessage[] = []
  for await (const event of mapGeminiStream(chunksThen(chunks, error))) events.push(event)
  return events
}

describe('mapGeminiStream', () => {
  it('keeps a complete response when the connection breaks after its finish reason', async () => {
    const events = await run(
      [{ candidates: [{ content: { role: 'model', parts: [{ text: 'done' }] }, finishReason: 'STOP' }] }],
      new TypeError('terminated'),
    )
    expect(events).toEqual([
      { type: 'text-delta', text: 'done' },
      { type: 'message', content: [{ type: 'text', text: 'done' }], stopReason: 'end_turn' },
    ])
  })

  it('parses string arguments when they are JSON and keeps them raw when not; missing arguments are {}', async () => {
    const events = await run([
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

  it('yields fresh tool inputs: mutating an event leaves the message intact', async () => {
    const events: AdapterMessage[] = []
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
    for await (const event of mapGeminiStream(chunksThen(chunks))) {
      if (event.type === 'tool-call') (event.input as { list: number[] }).list.push(2)
      events.push(event)
    }
    const message = events.at(-1)
    expect(message?.type === 'message' && message.content[0]).toMatchObject({ input: { list: [1] } })
  })

  it('reads only the first candidate', async () => {
    const events = await run([
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
