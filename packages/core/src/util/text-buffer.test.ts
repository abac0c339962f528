import { describe, expect, it } from 'vitest'
import { TextBuffer } from './text-buffer.js'

describe('TextBuffer', () => {
  it('reads back every delta in order, across piece boundaries and repeated reads', () => {
    const buffer = new TextBuffer()
    let expected = ''
    expect(buffer.toString()).toBe('')
    for (let i = 0; i < 1000; i++) {
      const delta = `d${i};`
      buffer.append(delta)
      expected += delta
      if (i === 0 || i === 255 || i === 256 || i === 700) expect(buffer.toString()).toBe(expected)
      expect(buffer.length).toBe(expected.length)
    }
    expect(buffer.toString()).toBe(expected)
    buffer.append('tail')
    expect(buffer.toString()).toBe(`${expected}tail`)
  })

  it('counts UTF-16 code units and keeps surrogate pairs split across deltas intact', () => {
    const buffer = new TextBuffer()
    const emoji = '😀'
    buffer.append(emoji[0] as string)
    buffer.append(emoji[1] as string)
    buffer.append('é')
    expect(buffer.length).toBe(3)
    expect(buffer.toString()).toBe('😀é')
  })

  it('ignores empty deltas in the text', () => {
    const buffer = new TextBuffer()
    for (let i = 0; i < 300; i++) buffer.append(i % 2 === 0 ? '' : 'x')
    expect(buffer.toString()).toBe('x'.repeat(150))
    expect(buffer.length).toBe(150)
  })
})
