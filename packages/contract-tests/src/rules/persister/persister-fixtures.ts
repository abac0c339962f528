import type { AnyMessage, SessionData } from '@agentx/core'

/** A session with every optional field set, for round-trip rules. */
export function fullSession(id: string, overrides: Partial<SessionData> = {}): SessionData {
  return {
    id,
    summary: `Summary of ${id}`,
    createdAt: '2026-01-02T03:04:05.678Z',
    lastActivity: '2026-01-02T04:05:06.789Z',
    cwd: '/home/user/project',
    model: 'claude-sonnet-5-5',
    systemPrompt: 'You are terse.',
    state: 'idle',
    providerSessionId: 'resp_0123456789',
    tokenUsage: {
      inputTokens: 1200,
      outputTokens: 340,
      cacheReadTokens: 1000,
      cacheWriteTokens: 100,
      reasoningTokens: 40,
      totalTokens: 1540,
    },
    userId: 'user-1',
    appName: 'app-1',
    metadata: { tags: ['a', 'b'], nested: { depth: { level: 3, ok: true } }, empty: {} },
    ...overrides,
  }
}

/** A session with only the required fields. */
export function minimalSession(id: string, overrides: Partial<SessionData> = {}): SessionData {
  return {
    id,
    summary: '',
    createdAt: '2026-01-02T03:04:05.678Z',
    lastActivity: '2026-01-02T03:04:05.678Z',
    state: 'created',
    tokenUsage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    ...overrides,
  }
}

/** A plain user message at `seq`. */
export function textMessage(sessionId: string, seq: number, overrides: Partial<AnyMessage> = {}): AnyMessage {
  return {
    id: `${sessionId}-m${String(seq).padStart(3, '0')}`,
    sessionId,
    seq,
    type: 'user',
    content: `message ${seq} of ${sessionId}`,
    timestamp: `2026-01-02T03:04:${String(5 + (seq % 50)).padStart(2, '0')}.678Z`,
    ...overrides,
  }
}

/** Messages of every type with every block type and optional field. */
export function richMessages(sessionId: string): AnyMessage[] {
  return [
    textMessage(sessionId, 0, { type: 'system', content: 'Be helpful.' }),
    textMessage(sessionId, 1, {
      content: [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgoAAAANSUhEUg==' },
        { type: 'image', mediaType: 'image/jpeg', url: 'https://example.com/cat.jpg?size=large&x=%20' },
      ],
      metadata: { client: 'web', attempt: 1 },
    }),
    textMessage(sessionId, 2, {
      type: 'agent',
      content: [
        { type: 'thinking', text: 'The user wants a description.', signature: 'sig-EqQBCkYIBxgCKkD' },
        { type: 'text', text: 'Let me look that up.' },
        { type: 'tool_use', id: 'toolu_01', name: 'search', input: { query: 'cat', filters: { max: 3 } } },
      ],
      usage: { inputTokens: 50, outputTokens: 20, cacheReadTokens: 10, reasoningTokens: 5, totalTokens: 70 },
      stopReason: 'tool_use',
    }),
    textMessage(sessionId, 3, {
      type: 'tool',
      content: [
        { type: 'tool_result', toolUseId: 'toolu_01', content: 'three cats found' },
        {
          type: 'tool_result',
          toolUseId: 'toolu_02',
          content: [{ type: 'text', text: 'nested result' }],
          isError: true,
        },
      ],
    }),
    textMessage(sessionId, 4, {
      type: 'agent',
      content: [{ type: 'text', text: 'A cat on a so' }],
      stopReason: 'aborted',
      incomplete: true,
      usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
    }),
  ]
}

/** What a JSON store returns for `value`: `undefined` properties dropped, `-0` as `0`. */
export function asJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T
}

/** Sorts sessions by id (ascending) for order-insensitive comparisons. */
export function byId<T extends { id: string }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
}
