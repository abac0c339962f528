import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type { AnyMessage, ContentBlock } from '../contracts/messages.js'
import { estimateTokens, IMAGE_TOKEN_ESTIMATE } from './estimate-tokens.js'

interface Sample {
  name: string
  category: 'english' | 'european' | 'cjk' | 'other-scripts'
  o200k: number
  claudeLegacy: number
  text: string
}

const { samples } = JSON.parse(
  readFileSync(new URL('./__fixtures__/token-samples.json', import.meta.url), 'utf8'),
) as { samples: Sample[] }

/** The documented error of each category (estimate / real count). */
const BOUNDS: Record<Sample['category'], [number, number]> = {
  english: [0.74, 1.36],
  european: [0.67, 1.72],
  cjk: [0.67, 1.29],
  'other-scripts': [0.42, 1.85],
}

const message = (seq: number, content: string | ContentBlock[]): AnyMessage => ({
  id: `m${seq}`,
  sessionId: 's',
  seq,
  type: seq % 2 === 0 ? 'user' : 'agent',
  content,
  timestamp: '2026-01-01T00:00:00.000Z',
})

describe('estimateTokens', () => {
  it.each(samples)('stays within the documented error for $name ($category)', (sample) => {
    const estimate = estimateTokens(sample.text)
    const [low, high] = BOUNDS[sample.category]
    for (const real of [sample.o200k, sample.claudeLegacy]) {
      expect(estimate / real).toBeGreaterThanOrEqual(low)
      expect(estimate / real).toBeLessThanOrEqual(high)
    }
  })

  it('keeps English text within ±15 % of the reference counts on the median', () => {
    const ratios = samples
      .filter((sample) => sample.category === 'english')
      .flatMap((sample) =>
        [sample.o200k, sample.claudeLegacy].map((real) => estimateTokens(sample.text) / real),
      )
      .sort((a, b) => a - b)
    const median = ratios[Math.floor(ratios.length / 2)]!
    expect(median).toBeGreaterThan(0.85)
    expect(median).toBeLessThan(1.15)
  })

  it('counts nothing for empty text and grows with the text', () => {
    expect(estimateTokens('')).toBe(0)
    const one = estimateTokens('The quick brown fox jumps over the lazy dog. ')
    expect(one).toBeGreaterThan(5)
    expect(estimateTokens('The quick brown fox jumps over the lazy dog. '.repeat(100))).toBeGreaterThan(
      one * 90,
    )
  })

  it('counts a character outside the Basic Multilingual Plane once, not as two characters', () => {
    expect(estimateTokens('😀')).toBe(2)
    expect(estimateTokens('😀😀😀')).toBe(6)
  })

  it('counts blocks: text, a fixed cost per image, tool calls with their JSON input, tool results', () => {
    const text = estimateTokens('Paris weather please')
    expect(estimateTokens([{ type: 'text', text: 'Paris weather please' }])).toBe(text)
    expect(estimateTokens([{ type: 'image', mediaType: 'image/png', data: 'A'.repeat(100_000) }])).toBe(
      IMAGE_TOKEN_ESTIMATE,
    )
    const small = estimateTokens([{ type: 'tool_use', id: 't1', name: 'weather', input: { city: 'Paris' } }])
    const large = estimateTokens([
      { type: 'tool_use', id: 't1', name: 'weather', input: { city: 'Paris', days: 'x'.repeat(600) } },
    ])
    expect(large - small).toBeGreaterThanOrEqual(100)
    const result = estimateTokens([{ type: 'tool_result', toolUseId: 't1', content: 'sunny, 24 degrees' }])
    expect(result).toBeGreaterThan(estimateTokens('sunny, 24 degrees'))
  })

  it('adds a per-message overhead to the content of each message', () => {
    const content = 'How do I deploy the service?'
    const messages = [message(0, content), message(1, [{ type: 'text', text: content }])]
    const two = estimateTokens(messages)
    expect(two).toBeGreaterThan(2 * estimateTokens(content))
    expect(two).toBeLessThanOrEqual(2 * estimateTokens(content) + 10)
    expect(estimateTokens([])).toBe(0)
  })
})
