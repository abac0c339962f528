import { describe, expect, it } from 'vitest'
import { ServerSentEventParser } from './server-sent-event-parser.js'

type Event = { event: string | undefined; data: string }

function parse(...chunks: string[]): Event[] {
  const events: Event[] = []
  const parser = new ServerSentEventParser((event, data) => events.push({ event, data }))
  for (const chunk of chunks) parser.feed(chunk)
  parser.end()
  return events
}

const STREAM = [
  'event: message_start\ndata: {"a":1}\n\n',
  ': keep-alive\n\n',
  'data: first line\ndata:second line\ndata\n\n',
  'event: ping\n\n',
  'id: 7\nretry: 100\nunknown: x\ndata: {"b":"é€😀"}\n\n',
  'event: done\ndata: \n\n',
].join('')

const EXPECTED: Event[] = [
  { event: 'message_start', data: '{"a":1}' },
  { event: undefined, data: 'first line\nsecond line\n' },
  { event: undefined, data: '{"b":"é€😀"}' },
  { event: 'done', data: '' },
]

describe('ServerSentEventParser', () => {
  it('dispatches events at blank lines: names, multi-line data, comments and unknown fields as the grammar says', () => {
    expect(parse(STREAM)).toEqual(EXPECTED)
  })

  it('reads CRLF and lone CR line endings like LF', () => {
    expect(parse(STREAM.replaceAll('\n', '\r\n'))).toEqual(EXPECTED)
    expect(parse(STREAM.replaceAll('\n', '\r'))).toEqual(EXPECTED)
  })

  it('gives the same events however the text is split, a CRLF split between two chunks included', () => {
    for (const text of [STREAM, STREAM.replaceAll('\n', '\r\n'), STREAM.replaceAll('\n', '\r')]) {
      for (let at = 0; at <= text.length; at++) {
        expect(parse(text.slice(0, at), text.slice(at))).toEqual(EXPECTED)
      }
      expect(parse(...Array.from(text))).toEqual(EXPECTED)
    }
  })

  it('drops an event that the end of the stream cuts before its blank line', () => {
    expect(parse('data: {"complete":true}\n\ndata: {"cut":')).toEqual([
      { event: undefined, data: '{"complete":true}' },
    ])
    expect(parse('data: {"no blank line":true}\n')).toEqual([])
  })

  it('keeps only one leading space of a value and no event name across events', () => {
    expect(parse('event: a\ndata:  two spaces\n\ndata: x\n\n')).toEqual([
      { event: 'a', data: ' two spaces' },
      { event: undefined, data: 'x' },
    ])
  })

  it('starts clean after end(), so a parser can be reused', () => {
    const events: Event[] = []
    const parser = new ServerSentEventParser((event, data) => events.push({ event, data }))
    parser.feed('event: a\ndata: half')
    parser.end()
    parser.feed('data: whole\n\n')
    expect(events).toEqual([{ event: undefined, data: 'whole' }])
  })
})

describe('ServerSentEventParser with unframedJson', () => {
  function parseUnframed(...chunks: string[]): Event[] {
    const events: Event[] = []
    const parser = new ServerSentEventParser((event, data) => events.push({ event, data }), {
      unframedJson: true,
    })
    for (const chunk of chunks) parser.feed(chunk)
    parser.end()
    return events
  }
  const error = '{"error": {"code": 500, "message": "Internal error", "status": "INTERNAL"}}'

  it('hands a bare JSON line over as an event of its own, with or without a line ending at the end', () => {
    expect(parseUnframed('data: {"a":1}\n\n', `${error}\n`)).toEqual([
      { event: undefined, data: '{"a":1}' },
      { event: undefined, data: error },
    ])
    expect(parseUnframed('data: {"a":1}\n\n', error.slice(0, 20), error.slice(20))).toEqual([
      { event: undefined, data: '{"a":1}' },
      { event: undefined, data: error },
    ])
  })

  it('is off by default: the grammar ignores such a line', () => {
    expect(parse('data: {"a":1}\n\n', `${error}\n`, error)).toEqual([{ event: undefined, data: '{"a":1}' }])
  })
})
