import type { AdapterMessage } from '@agentx/core'
import { describe, expect, it } from 'vitest'
import { claudeIdentity } from './map-claude-error.js'
import { ClaudeStreamMapper } from './map-claude-stream.js'

const frame = (type: string, data: Record<string, unknown>): [string, string] => [
  type,
  JSON.stringify({ type, ...data }),
]

/** Feeds the frames to a fresh mapper; returns what it pushed. */
function map(frames: Array<[string, string]>): AdapterMessage[] {
  const mapper = new ClaudeStreamMapper(claudeIdentity([]))
  const output: AdapterMessage[] = []
  for (const [event, data] of frames) mapper.onEvent(event, data, output)
  if (!mapper.complete) mapper.onEnd()
  return output
}

const start = frame('message_start', {
  message: { id: 'msg_1', model: 'm', usage: { input_tokens: 1, output_tokens: 1 } },
})
const stop = [frame('content_block_stop', { index: 0 }), frame('message_stop', {})]

describe('ClaudeStreamMapper', () => {
  it('reads text deltas exactly as JSON.parse would, escapes, quotes and unicode included', () => {
    const texts = ['plain', 'a "quote"', 'back\\slash', 'line\nbreak', 'tab\t', 'é✈️😀', '\u2028', '}}"}}', '']
    const events = map([
      start,
      frame('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      ...texts.map((text) => frame('content_block_delta', { index: 0, delta: { type: 'text_delta', text } })),
      ...stop,
    ])
    const deltas = events
      .filter((event) => event.type === 'text-delta')
      .map((event) => (event as { text: string }).text)
    expect(deltas).toEqual(texts.filter((text) => text !== ''))
    expect(events.at(-1)).toMatchObject({
      type: 'message',
      content: [{ type: 'text', text: texts.join('') }],
    })
  })

  it('keeps text deltas of several blocks apart by index, also above 9', () => {
    const events = map([
      start,
      frame('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      frame('content_block_start', { index: 12, content_block: { type: 'text', text: '' } }),
      frame('content_block_delta', { index: 12, delta: { type: 'text_delta', text: 'twelve' } }),
      frame('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'zero' } }),
      frame('content_block_stop', { index: 12 }),
      ...stop,
    ])
    expect(events.at(-1)).toMatchObject({
      content: [
        { type: 'text', text: 'zero' },
        { type: 'text', text: 'twelve' },
      ],
    })
  })

  it('treats a text delta of a thinking block or of no block like the general path does', () => {
    const events = map([
      start,
      frame('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }),
      frame('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'ignored in thinking' } }),
      frame('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'starts a block' } }),
      frame('content_block_stop', { index: 1 }),
      ...stop,
    ])
    expect(events.filter((event) => event.type === 'text-delta')).toEqual([
      { type: 'text-delta', text: 'starts a block' },
    ])
  })

  it('rejects a text delta frame that is cut, although it starts like one, as a malformed frame', () => {
    expect(() =>
      map([
        start,
        frame('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
        [
          'content_block_delta',
          '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"cut',
        ],
      ]),
    ).toThrow(expect.objectContaining({ kind: 'server', retryable: false }))
  })
})
