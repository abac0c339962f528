// Test helpers: a real `text/event-stream` reader over fetch, and raw HTTP requests (for headers
// fetch refuses to set, like Host).
import { request as httpRequest } from 'node:http'

/** One parsed server-sent event. */
export interface ServerEvent {
  event: string
  data: Record<string, unknown> & { type?: string }
}

/** Parses complete SSE frames from `buffer`; returns the events and the unparsed rest. */
export function parseFrames(buffer: string): { events: ServerEvent[]; rest: string } {
  const events: ServerEvent[] = []
  let rest = buffer.replace(/\r\n?/g, '\n')
  for (let boundary = rest.indexOf('\n\n'); boundary !== -1; boundary = rest.indexOf('\n\n')) {
    const frame = rest.slice(0, boundary)
    rest = rest.slice(boundary + 2)
    let event = 'message'
    const data: string[] = []
    for (const line of frame.split('\n')) {
      if (line.startsWith(':')) continue
      if (line.startsWith('event:')) event = line.slice(6).trim()
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
    }
    if (data.length > 0) events.push({ event, data: JSON.parse(data.join('\n')) })
  }
  return { events, rest }
}

/**
 * POSTs a message and reads the whole event stream. `onEvent` runs as each event arrives (to
 * abort mid-stream, for example).
 */
export async function sendMessage(
  baseUrl: string,
  sessionId: string,
  content: string,
  onEvent?: (event: ServerEvent) => void | Promise<void>,
): Promise<{ status: number; contentType: string | null; events: ServerEvent[]; body?: unknown }> {
  const response = await fetch(`${baseUrl}/api/sessions/${encodeURIComponent(sessionId)}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ content }),
  })
  const contentType = response.headers.get('content-type')
  if (!contentType?.startsWith('text/event-stream')) {
    return { status: response.status, contentType, events: [], body: await response.json() }
  }
  const events: ServerEvent[] = []
  const decoder = new TextDecoder()
  let buffer = ''
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true })
    const parsed = parseFrames(buffer)
    buffer = parsed.rest
    for (const event of parsed.events) {
      events.push(event)
      await onEvent?.(event)
    }
  }
  return { status: response.status, contentType, events }
}

/** A JSON request with fetch; answers status and parsed body. */
// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by assertions, not by types
type Json = any

export async function api(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) }
}

/** A raw HTTP request with any headers (fetch forbids setting Host). */
export function rawRequest(
  port: number,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path,
        headers: options.headers ?? {},
      },
      (response) => {
        let body = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => {
          body += chunk
        })
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }))
      },
    )
    request.on('error', reject)
    request.end(options.body)
  })
}

/** The concatenated text of a list of `text-delta` events. */
export function deltaText(events: readonly ServerEvent[]): string {
  return events
    .filter((event) => event.event === 'text-delta')
    .map((event) => String(event.data.text))
    .join('')
}
