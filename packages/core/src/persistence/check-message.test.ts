import { describe, expect, it } from 'vitest'
import type { AnyMessage } from '../contracts/messages.js'
import { checkMessage } from './check-message.js'
import { validateMessage } from './validate.js'

function message(overrides: Record<string, unknown> = {}): AnyMessage {
  return {
    id: 'm1',
    sessionId: 's',
    seq: 0,
    type: 'agent',
    content: [{ type: 'tool_use', id: 't', name: 'search', input: { q: ['a', 1, null, true] } }],
    timestamp: '2025-03-01T10:00:00.000Z',
    usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
    metadata: { nested: { deep: [{}] } },
    ...overrides,
  } as AnyMessage
}

function outcome(run: () => unknown): unknown {
  try {
    return { value: run() }
  } catch (error) {
    return {
      error: (error as Error).name,
      code: (error as { code?: string }).code,
      message: (error as Error).message,
    }
  }
}

describe('checkMessage', () => {
  it('returns a plainly valid message as it is, without a deep copy', () => {
    const plain = message()
    expect(checkMessage('s', plain)).toBe(plain)
    const withoutSessionId = message({ sessionId: undefined })
    expect(checkMessage('s', withoutSessionId)).toBe(withoutSessionId)
  })

  it('accepts and rejects exactly what validateMessage of @agentx/core does, with the same errors', () => {
    class Point {
      x = 1
    }
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    let deep: unknown = 'bottom'
    for (let level = 0; level < 100; level++) deep = [deep]
    const cases: Array<[string, unknown]> = [
      ['', message()],
      ['s', null],
      ['s', message({ id: '' })],
      ['s', message({ sessionId: 'other' })],
      ['s', message({ seq: -1 })],
      ['s', message({ seq: 1.5 })],
      ['s', message({ type: 'robot' })],
      ['s', message({ content: 42 })],
      ['s', message({ timestamp: 'yesterday' })],
      ['s', message({ metadata: cyclic })],
      ['s', message({ metadata: { f: () => 1 } })],
      ['s', message({ metadata: { n: Number.NaN } })],
      ['s', message({ metadata: { big: 1n } })],
      ['s', message({ metadata: { at: new Date('2025-01-02T03:04:05.006Z') } })],
      ['s', message({ metadata: { point: new Point() } })],
      ['s', message({ content: [{ type: 'text', text: 'x' }, undefined] })],
      ['s', message({ metadata: { zero: -0 } })],
      ['s', message({ extraField: { kept: true }, other: undefined })],
      ['s', message({ content: [{ type: 'text', text: 'deep', input: deep }] })],
      ['s', Object.assign(Object.create({ inherited: 1 }), message())],
      ['s', message({ timestamp: '2026-01-01T00:00:00.000+02:00' })],
      ['s', message({ timestamp: '2026-02-30T00:00:00.000Z' })],
      ['s', message({ timestamp: '2026-01-01T00:00:00Z' })],
      ['s', message({ metadata: null })],
      ['s', message({ metadata: ['list'] })],
      ['s', message({ usage: null })],
      ['s', message({ usage: { inputTokens: '1', outputTokens: 2, totalTokens: 3 } })],
      ['s', message({ stopReason: 'weird' })],
      ['s', message({ stopReason: 'end_turn', incomplete: 'yes' })],
      ['s', message({ content: [null] })],
      ['s', message({ content: [{ type: 'text' }] })],
      [
        's',
        message({ content: [{ type: 'tool_result', toolUseId: 't', content: [{ type: 'text', text: 1 }] }] }),
      ],
      ['s', message({ content: [{ type: 'newer_block', data: [1] }] })],
    ]
    for (const [sessionId, input] of cases) {
      const expected = outcome(() => validateMessage(sessionId, input as AnyMessage))
      const actual = outcome(() => checkMessage(sessionId, input as AnyMessage))
      expect(JSON.stringify(actual)).toBe(JSON.stringify(expected))
    }
  })
})
