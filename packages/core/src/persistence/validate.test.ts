import { describe, expect, it } from 'vitest'
import type { SessionData } from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import { isUtcTimestamp } from './shapes.js'
import { validateDeleteSessionsQuery, validateMessage, validateSessionData } from './validate.js'

const usage = { inputTokens: 3, outputTokens: 2, totalTokens: 5 }

function session(fields: Record<string, unknown> = {}): SessionData {
  return {
    id: 's1',
    summary: '',
    createdAt: '2026-01-01T00:00:00.000Z',
    lastActivity: '2026-01-01T00:00:00.000Z',
    state: 'idle',
    tokenUsage: usage,
    ...fields,
  } as SessionData
}

function message(fields: Record<string, unknown> = {}): AnyMessage {
  return {
    id: 'm1',
    sessionId: 's1',
    seq: 0,
    type: 'agent',
    content: [{ type: 'text', text: 'hello' }],
    timestamp: '2026-01-01T00:00:00.000Z',
    ...fields,
  } as AnyMessage
}

function problemOf(run: () => unknown): string | undefined {
  try {
    run()
    return undefined
  } catch (error) {
    expect((error as { code?: string }).code).toBe('VALIDATION')
    return (error as Error).message
  }
}

describe('validateSessionData: field shapes every persister refuses alike', () => {
  it.each<[string, Record<string, unknown>, RegExp]>([
    ['metadata that is a string', { metadata: 'x' }, /session\.metadata must be an object/],
    ['metadata that is an array', { metadata: [1] }, /session\.metadata must be an object/],
    ['metadata null', { metadata: null }, /session\.metadata must be an object/],
    [
      'a tokenUsage count that is a string',
      { tokenUsage: { ...usage, inputTokens: '5' } },
      /tokenUsage\.inputTokens/,
    ],
    [
      'a negative tokenUsage count',
      { tokenUsage: { ...usage, outputTokens: -1 } },
      /tokenUsage\.outputTokens/,
    ],
    ['a tokenUsage without totalTokens', { tokenUsage: { inputTokens: 1, outputTokens: 1 } }, /totalTokens/],
    [
      'a malformed optional usage part',
      { tokenUsage: { ...usage, cacheReadTokens: 'x' } },
      /cacheReadTokens/,
    ],
    ["parentSessionId ''", { parentSessionId: '' }, /parentSessionId must be a non-empty string/],
    ['a session that is its own parent', { parentSessionId: 's1' }, /its own parent/],
    ['a createdAt with a UTC offset', { createdAt: '2026-01-01T00:00:00.000-04:00' }, /ISO-8601 UTC/],
    ['a createdAt without a time', { createdAt: '2026-01-01' }, /ISO-8601 UTC/],
    [
      'a lastActivity on a day that does not exist',
      { lastActivity: '2026-02-30T00:00:00.000Z' },
      /ISO-8601 UTC/,
    ],
    ['a lastActivity in RFC 2822 form', { lastActivity: 'Thu, 01 Jan 2026 00:00:00 GMT' }, /ISO-8601 UTC/],
    ['cwd null', { cwd: null }, /session\.cwd must be a string/],
  ])('refuses %s', (_what, fields, expected) => {
    expect(problemOf(() => validateSessionData(session(fields)))).toMatch(expected)
  })

  it('accepts what round-trips: UTC in any precision, pre-1970, six-digit years, a leap day, nested metadata', () => {
    for (const fields of [
      { createdAt: '2026-01-01T00:00:00Z' },
      { createdAt: '1969-07-20T20:17:40.123Z' },
      { createdAt: '+010000-01-01T00:00:00.000Z' },
      { createdAt: '-000001-12-31T23:59:59.999Z' },
      { lastActivity: '2024-02-29T12:00:00.123456Z' },
      { metadata: { nested: { list: [1, 'two', null] } } },
      { tokenUsage: { ...usage, cacheReadTokens: 0, reasoningTokens: 1 } },
      { parentSessionId: 'parent', parentToolUseId: '' },
    ]) {
      expect(problemOf(() => validateSessionData(session(fields)))).toBeUndefined()
    }
  })
})

describe('validateMessage: field shapes every persister refuses alike', () => {
  it.each<[string, Record<string, unknown>, RegExp]>([
    ['metadata null', { metadata: null }, /message\.metadata must be an object/],
    ['metadata that is an array', { metadata: [] }, /message\.metadata must be an object/],
    ['usage null', { usage: null }, /message\.usage must be a TokenUsage/],
    ['a usage count that is a string', { usage: { ...usage, totalTokens: '5' } }, /usage\.totalTokens/],
    ['stopReason null', { stopReason: null }, /stopReason 'null' is unknown/],
    ['an unknown stopReason', { stopReason: 'weird' }, /stopReason 'weird' is unknown/],
    ['incomplete null', { incomplete: null }, /incomplete must be a boolean/],
    ["incomplete 'yes'", { incomplete: 'yes' }, /incomplete must be a boolean/],
    ['a timestamp with an offset', { timestamp: '2026-01-01T00:00:00.000+02:00' }, /ISO-8601 UTC/],
    [
      'a content block that is null',
      { content: [null] },
      /message\.content\[0\] must be a content block object/,
    ],
    ['a text block without text', { content: [{ type: 'text' }] }, /content\[0\]\.text must be a string/],
    ['a block without a type', { content: [{ text: 'x' }] }, /content\[0\]\.type must be a non-empty string/],
    ['a tool call without an id', { content: [{ type: 'tool_use', name: 'n', input: {} }] }, /\.id must be/],
    [
      'a tool result whose inner block is malformed',
      { content: [{ type: 'tool_result', toolUseId: 't', content: [{ type: 'image' }] }] },
      /content\[0\]\.content\[0\]\.mediaType must be a string/,
    ],
    ['an image without a mediaType', { content: [{ type: 'image', data: 'AAAA' }] }, /mediaType/],
    [
      'providerMetadata that is a string',
      { content: [{ type: 'text', text: 'x', providerMetadata: 'x' }] },
      /providerMetadata/,
    ],
  ])('refuses %s', (_what, fields, expected) => {
    expect(problemOf(() => validateMessage('s1', message(fields)))).toMatch(expected)
  })

  it('accepts every stop reason of DESIGN, empty text, a block of a newer kind, and string content', () => {
    for (const stopReason of [
      'end_turn',
      'max_tokens',
      'tool_use',
      'content_filter',
      'aborted',
      'error',
      'other',
    ]) {
      expect(problemOf(() => validateMessage('s1', message({ stopReason })))).toBeUndefined()
    }
    for (const content of [
      'plain text',
      [{ type: 'text', text: '' }],
      [{ type: 'thinking', text: '', signature: 'sig', providerMetadata: { claude: { redactedData: 'x' } } }],
      [{ type: 'server_tool_use', id: 'x', anything: [1] }],
      [{ type: 'tool_result', toolUseId: 't', content: 'done', isError: false }],
      [{ type: 'image', mediaType: 'image/png', url: 'https://example.com/a.png' }],
    ]) {
      expect(problemOf(() => validateMessage('s1', message({ content })))).toBeUndefined()
    }
    const copy = validateMessage('s1', message({ incomplete: true, usage, metadata: { k: 1 } }))
    expect(copy).toMatchObject({ incomplete: true, usage, metadata: { k: 1 } })
  })
})

describe('timestamps', () => {
  it('a stored timestamp is UTC; a query instant may have an offset and is normalised', () => {
    expect(isUtcTimestamp('2026-12-31T23:59:59.999Z')).toBe(true)
    expect(isUtcTimestamp('2026-12-31T24:00:00.000Z')).toBe(false)
    expect(isUtcTimestamp('2026-12-31T23:59:60.000Z')).toBe(false)
    expect(isUtcTimestamp('2100-02-29T00:00:00.000Z')).toBe(false) // not a leap year
    expect(isUtcTimestamp('2000-02-29T00:00:00.000Z')).toBe(true)
    expect(isUtcTimestamp('+275761-01-01T00:00:00.000Z')).toBe(false) // beyond the range of a Date
    expect(
      validateDeleteSessionsQuery({ lastActivityBefore: '2026-01-01T02:00:00+02:00' }).lastActivityBefore,
    ).toBe('2026-01-01T00:00:00.000Z')
  })
})
