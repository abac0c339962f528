import type { AnyMessage } from '@agentx/core'
import { describe, expect, it } from 'vitest'
import { convertToOpenAIChatMessages } from './convert-to-openai-chat-messages.js'
import { convertToOpenAIResponsesInput } from './convert-to-openai-responses-input.js'

function message(seq: number, type: AnyMessage['type'], content: AnyMessage['content']): AnyMessage {
  return { id: `m${seq}`, sessionId: 's', seq, type, content, timestamp: '2026-01-01T00:00:00.000Z' }
}

// A crash between a tool call and its result leaves an unanswered call in the history.
const history = [
  message(0, 'system', 'Earlier instructions'),
  message(1, 'user', 'Look it up'),
  message(2, 'agent', [
    { type: 'text', text: 'Looking.' },
    { type: 'tool_use', id: 'call_lost', name: 'search', input: { q: 'x' } },
  ]),
  message(3, 'user', 'Hello again'),
]

describe('history conversion', () => {
  it('drops an unanswered tool call from a Responses replay but keeps everything else in order', () => {
    expect(convertToOpenAIResponsesInput(history, 'Next', { pairToolCalls: true })).toEqual([
      { role: 'system', content: 'Earlier instructions' },
      { role: 'user', content: 'Look it up' },
      { role: 'assistant', content: 'Looking.' },
      { role: 'user', content: 'Hello again' },
      { role: 'user', content: 'Next' },
    ])
  })

  it('keeps tool results for calls the server holds when resuming', () => {
    const results = [{ type: 'tool_result' as const, toolUseId: 'call_on_server', content: '42' }]
    expect(convertToOpenAIResponsesInput([], results, { pairToolCalls: false })).toEqual([
      { type: 'function_call_output', call_id: 'call_on_server', output: '42' },
    ])
  })

  it('sends tool result images as input_image parts of the Responses function output', () => {
    const results = [
      {
        type: 'tool_result' as const,
        toolUseId: 'call_1',
        content: [
          { type: 'text' as const, text: 'chart' },
          { type: 'image' as const, mediaType: 'image/png', data: 'AAAA' },
        ],
      },
    ]
    expect(convertToOpenAIResponsesInput([], results, { pairToolCalls: false })).toEqual([
      {
        type: 'function_call_output',
        call_id: 'call_1',
        output: [
          { type: 'input_text', text: 'chart' },
          { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'auto' },
        ],
      },
    ])
  })

  it('passes an image detail from providerMetadata.openai.detail to both APIs', () => {
    const image = {
      type: 'image' as const,
      mediaType: 'image/png',
      url: 'https://example.com/a.png',
      providerMetadata: { openai: { detail: 'high' } },
    }
    expect(convertToOpenAIResponsesInput([], [image], { pairToolCalls: true })).toEqual([
      {
        role: 'user',
        content: [{ type: 'input_image', image_url: 'https://example.com/a.png', detail: 'high' }],
      },
    ])
    expect(convertToOpenAIChatMessages(undefined, [], [image])).toEqual([
      {
        role: 'user',
        content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'high' } }],
      },
    ])
  })

  it('drops an unanswered tool call from chat messages, keeping the assistant text', () => {
    expect(convertToOpenAIChatMessages('Be brief.', history, 'Next')).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'Earlier instructions' },
      { role: 'user', content: 'Look it up' },
      { role: 'assistant', content: 'Looking.' },
      { role: 'user', content: 'Hello again' },
      { role: 'user', content: 'Next' },
    ])
  })
})
