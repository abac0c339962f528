import type { AnyMessage, ContentBlock } from '@agentx/core'
import { ValidationError } from '@agentx/core'
import { describe, expect, it } from 'vitest'
import { convertToClaudeMessages, MISSING_TOOL_RESULT } from './convert-to-claude-messages.js'

function message(
  seq: number,
  type: AnyMessage['type'],
  content: string | ContentBlock[],
  extra: Partial<AnyMessage> = {},
): AnyMessage {
  return {
    id: `m${seq}`,
    sessionId: 's',
    seq,
    type,
    content,
    timestamp: '2026-11-23T10:00:00.000Z',
    ...extra,
  }
}

describe('convertToClaudeMessages', () => {
  it('puts the system prompt and system messages into the system field, in order', () => {
    const result = convertToClaudeMessages({
      systemPrompt: 'Be brief.',
      history: [
        message(0, 'system', 'Answer in French.'),
        message(1, 'user', 'Hi'),
        message(2, 'agent', 'Salut'),
      ],
      prompt: 'Again',
    })
    expect(result.system).toBe('Be brief.\n\nAnswer in French.')
    expect(result.messages.map((turn) => turn.role)).toEqual(['user', 'assistant', 'user'])
  })

  it('omits system when there is none, and merges consecutive user turns (a failed send left its user message)', () => {
    const result = convertToClaudeMessages({
      history: [message(0, 'user', 'First try')],
      prompt: 'Second try',
    })
    expect(result).toEqual({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'First try' },
            { type: 'text', text: 'Second try' },
          ],
        },
      ],
    })
  })

  it('answers a tool call that has no result with an error placeholder, and drops a result without its call', () => {
    const result = convertToClaudeMessages({
      history: [
        message(0, 'user', 'Go'),
        message(1, 'agent', [
          { type: 'tool_use', id: 'a', name: 't', input: {} },
          { type: 'tool_use', id: 'b', name: 't', input: {} },
        ]),
        message(2, 'tool', [
          { type: 'tool_result', toolUseId: 'b', content: 'done' },
          { type: 'tool_result', toolUseId: 'zzz', content: 'orphan' },
        ]),
      ],
      prompt: 'Next',
    })
    expect(result.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Go' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'a', name: 't', input: {} },
          { type: 'tool_use', id: 'b', name: 't', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'a', content: MISSING_TOOL_RESULT, is_error: true },
          { type: 'tool_result', tool_use_id: 'b', content: 'done' },
          { type: 'text', text: 'Next' },
        ],
      },
    ])
  })

  it('merges consecutive agent messages into one assistant turn and still answers its tool call', () => {
    const result = convertToClaudeMessages({
      history: [
        message(0, 'user', 'Go'),
        message(1, 'agent', [{ type: 'tool_use', id: 'a', name: 't', input: { x: 1 } }]),
        message(2, 'agent', 'Oops'),
      ],
      prompt: 'Hello?',
    })
    expect(result.messages.map((turn) => [turn.role, turn.content.map((block) => block.type)])).toEqual([
      ['user', ['text']],
      ['assistant', ['tool_use', 'text']],
      ['user', ['tool_result', 'text']],
    ])
  })

  it('drops unsigned thinking, empty text and tool blocks in the wrong role; keeps signed thinking', () => {
    const result = convertToClaudeMessages({
      history: [
        message(0, 'user', [
          { type: 'text', text: '' },
          { type: 'text', text: 'Q' },
          { type: 'thinking', text: 'user thinking?', signature: 's' },
        ]),
        message(1, 'agent', [
          { type: 'thinking', text: 'partial, no signature' },
          { type: 'thinking', text: 'signed', signature: 'sig' },
          { type: 'text', text: 'A' },
        ]),
      ],
      prompt: [
        { type: 'tool_use', id: 'x', name: 'y', input: {} } as ContentBlock,
        { type: 'text', text: 'Q2' },
      ],
    })
    expect(result.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Q' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'signed', signature: 'sig' },
          { type: 'text', text: 'A' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Q2' }] },
    ])
  })

  it('drops blank text from assistant turns (the API refuses whitespace-only text blocks)', () => {
    const result = convertToClaudeMessages({
      history: [
        message(0, 'user', 'Look it up'),
        message(1, 'agent', [
          { type: 'text', text: '\n\n' },
          { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} },
        ]),
        message(2, 'tool', [{ type: 'tool_result', toolUseId: 'toolu_1', content: 'found' }]),
        message(3, 'agent', [{ type: 'text', text: ' ' }]),
        message(4, 'user', 'And?'),
        message(5, 'agent', '\n'),
      ],
      prompt: 'Well?',
    })
    expect(result.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Look it up' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'found' },
          { type: 'text', text: 'And?' },
          { type: 'text', text: 'Well?' },
        ],
      },
    ])
  })

  it('turns tool call ids another provider wrote into ids Claude accepts, the same for the call and its result', () => {
    const result = convertToClaudeMessages({
      history: [
        message(0, 'user', 'Two lookups'),
        message(1, 'agent', [
          { type: 'tool_use', id: 'functions.lookup:0', name: 'lookup', input: {} },
          { type: 'tool_use', id: 'functions.lookup:1', name: 'lookup', input: {} },
          { type: 'tool_use', id: 'call_ok-1', name: 'lookup', input: {} },
        ]),
        message(2, 'tool', [
          { type: 'tool_result', toolUseId: 'functions.lookup:1', content: 'b' },
          { type: 'tool_result', toolUseId: 'functions.lookup:0', content: 'a' },
          { type: 'tool_result', toolUseId: 'call_ok-1', content: 'c' },
        ]),
      ],
      prompt: 'Thanks',
    })
    const calls = result.messages[1]!.content.map((block) => block.id as string)
    const results = result.messages[2]!.content.slice(0, 3).map((block) => block.tool_use_id as string)
    for (const id of calls) expect(id).toMatch(/^[a-zA-Z0-9_-]+$/)
    expect(new Set(calls).size).toBe(3)
    expect(calls[2]).toBe('call_ok-1')
    expect(results).toEqual([calls[1], calls[0], calls[2]])
    expect(calls[0]).toMatch(/^functions_lookup_0_/)
  })

  it('sends images inline (base64 and data URLs) and by URL, also inside tool results, with cache_control from provider metadata', () => {
    const result = convertToClaudeMessages({
      history: [],
      prompt: [
        {
          type: 'image',
          mediaType: 'image/png',
          data: 'AAAA',
          providerMetadata: { claude: { cache_control: { type: 'ephemeral' } } },
        },
        { type: 'image', mediaType: 'image/gif', url: 'data:image/gif;base64,R0lGOD' },
        { type: 'image', mediaType: 'image/webp', url: 'https://example.com/a.webp' },
      ],
    })
    expect(result.messages[0]?.content).toEqual([
      {
        type: 'image',
        source: { type: 'base64', media_type: 'image/png', data: 'AAAA' },
        cache_control: { type: 'ephemeral' },
      },
      { type: 'image', source: { type: 'base64', media_type: 'image/gif', data: 'R0lGOD' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/a.webp' } },
    ])
  })

  it('wraps a non-object tool input (raw arguments kept as text) so the request stays valid', () => {
    const result = convertToClaudeMessages({
      history: [
        message(0, 'user', 'Go'),
        message(1, 'agent', [{ type: 'tool_use', id: 'a', name: 't', input: '{not json' }]),
        message(2, 'tool', [{ type: 'tool_result', toolUseId: 'a', content: 'bad input', isError: true }]),
      ],
      prompt: 'ok',
    })
    expect(result.messages[1]?.content).toEqual([
      { type: 'tool_use', id: 'a', name: 't', input: { value: '{not json' } },
    ])
  })

  it('rejects an image with neither data nor url and an unknown block type with a ValidationError', () => {
    expect(() =>
      convertToClaudeMessages({ history: [], prompt: [{ type: 'image', mediaType: 'image/png' }] }),
    ).toThrow(ValidationError)
    expect(() =>
      convertToClaudeMessages({ history: [], prompt: [{ type: 'video' } as unknown as ContentBlock] }),
    ).toThrow(ValidationError)
  })

  it('does not mutate the history it converts', () => {
    const history = [
      message(0, 'user', 'Go'),
      message(1, 'agent', [{ type: 'tool_use', id: 'a', name: 't', input: { x: 1 } }]),
    ]
    const before = structuredClone(history)
    convertToClaudeMessages({ history, prompt: 'next' })
    expect(history).toEqual(before)
  })
})
