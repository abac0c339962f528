import { describe, expect, it } from 'vitest'
import { decodeJson, decodeText, encodeJson, encodeText, idOrder } from './text-fields.js'

/** A deterministic pseudo-random string biased towards the characters the encoding handles. */
function randomText(seed: number): string {
  const pool = [
    '\u0000',
    '\u0010',
    '0',
    'u',
    'd',
    '8',
    '\ud800',
    '\udc00',
    '\udbff',
    '😀',
    'a',
    '\\',
    '"',
    'é',
  ]
  let state = seed
  let text = ''
  const length = seed % 12
  for (let index = 0; index < length; index++) {
    state = (state * 1103515245 + 12345) % 2 ** 31
    text += pool[state % pool.length]
  }
  return text
}

describe('text encoding for PostgreSQL', () => {
  it('leaves ordinary text, astral characters and surrogate pairs unchanged', () => {
    for (const text of ['', 'plain', 'emoji 😀 𝄞', 'controls \u0001\u001f', 'literal \\u0000']) {
      expect(encodeText(text)).toBe(text)
      expect(encodeJson({ text })).toBe(JSON.stringify({ text }))
    }
  })

  it('produces text without NUL or unpaired surrogates that decodes to the exact input', () => {
    const seen = new Map<string, string>()
    for (let seed = 0; seed < 5000; seed++) {
      const text = randomText(seed)
      const encoded = encodeText(text)
      expect(encoded.includes('\u0000')).toBe(false)
      expect((encoded as string & { isWellFormed(): boolean }).isWellFormed()).toBe(true)
      expect(decodeText(encoded) === text).toBe(true)
      // Injective: two different inputs never share an encoding.
      const previous = seen.get(encoded)
      if (previous !== undefined) expect(previous).toBe(text)
      seen.set(encoded, text)
    }
  })

  it('encodes strings and keys inside JSON values, and decodes what PostgreSQL prints back', () => {
    const value = { 'key\u0000': ['\ud800', { nested: 'a\u0010b' }], __proto__x: 1, n: 0.1 }
    const json = encodeJson(value)
    expect(json).not.toMatch(/\\u0000|\\ud800/)
    expect(decodeJson(json)).toEqual(value)
    const hostile = JSON.parse('{"__proto__":{"x":"\\u0000"}}') as Record<string, unknown>
    const decoded = decodeJson(encodeJson(hostile)) as Record<string, unknown>
    expect(Object.hasOwn(decoded, '__proto__')).toBe(true)
    expect(decoded).toEqual(hostile)
  })

  it('orders ids by UTF-16 code units, like JavaScript string comparison', () => {
    const ids = ['\uFF01', '😀', 'a', 'B', '', 'ab', '\u0000']
    const byBytes = [...ids].sort((a, b) => Buffer.compare(idOrder(a), idOrder(b)))
    expect(byBytes).toEqual([...ids].sort())
  })
})
