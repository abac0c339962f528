import { describe, expect, it } from 'vitest'
import type { ContentBlock } from '../contracts/messages.js'
import {
  blocksOf,
  imageUrlOf,
  parseDataUrl,
  parseToolInput,
  textOf,
  toolInputObject,
} from './content-blocks.js'

describe('content block helpers', () => {
  it('textOf joins the text blocks with a line break and ignores the others', () => {
    const content: ContentBlock[] = [
      { type: 'text', text: 'one' },
      { type: 'image', mediaType: 'image/png', data: 'AAAA' },
      { type: 'tool_use', id: 't', name: 'n', input: {} },
      { type: 'text', text: 'two' },
    ]
    expect(textOf(content)).toBe('one\ntwo')
    expect(textOf('as is')).toBe('as is')
    expect(textOf([])).toBe('')
  })

  it('blocksOf turns a string into one text block, and an empty one into none', () => {
    expect(blocksOf('hi')).toEqual([{ type: 'text', text: 'hi' }])
    expect(blocksOf('')).toEqual([])
  })

  it('takes data URLs apart and builds them from base64 images', () => {
    expect(parseDataUrl('data:image/png;base64,iVBOR')).toEqual({ mediaType: 'image/png', data: 'iVBOR' })
    expect(parseDataUrl('data:image/jpeg;name=a.jpg;base64,/9j/')).toEqual({
      mediaType: 'image/jpeg',
      data: '/9j/',
    })
    expect(parseDataUrl('https://example.com/a.png')).toBeUndefined()
    expect(parseDataUrl('data:text/plain,hello')).toBeUndefined()
    expect(imageUrlOf({ type: 'image', mediaType: 'image/png', data: 'AAAA' })).toBe(
      'data:image/png;base64,AAAA',
    )
    expect(imageUrlOf({ type: 'image', mediaType: 'image/png', url: 'https://x/a.png' })).toBe(
      'https://x/a.png',
    )
  })

  it('parses tool arguments: blank is {}, invalid JSON stays raw text', () => {
    expect(parseToolInput('  ')).toEqual({ ok: true, input: {} })
    expect(parseToolInput('{"city":"Paris"}')).toEqual({ ok: true, input: { city: 'Paris' } })
    expect(parseToolInput('{"city":')).toEqual({ ok: false, input: '{"city":' })
  })

  it('turns any tool input into the JSON object providers require, losing nothing', () => {
    expect(toolInputObject({ a: 1 })).toEqual({ a: 1 })
    expect(toolInputObject(undefined)).toEqual({})
    expect(toolInputObject(null)).toEqual({})
    expect(toolInputObject('{"a":1}')).toEqual({ a: 1 })
    expect(toolInputObject('not json')).toEqual({ value: 'not json' })
    expect(toolInputObject([1, 2])).toEqual({ value: [1, 2] })
    expect(toolInputObject(42)).toEqual({ value: 42 })
  })
})
