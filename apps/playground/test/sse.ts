// Test helpers: a real `text/event-stream` reader over fetch, and raw HTTP requests (for headers
// fetch refuses to set, like Host).
import { request as httpRequest } from 'node:http'

/** One parsed server-sent event. */
export interface ServerEvent {
  event: string
  /** The SSE `id:` field, when the frame had one. */
  id?: string
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
    let id: string | undefined
    const data: string[] = []
    for (const line of frame.split('\n')) {
      if (line.startsWith(':')) continue
      if (line.startsWith('event:')) event = line.slice(6).trim()
      else if (line.startsWith('id:')) id = line.slice(3).trim()
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
    }
    if (data.length > 0)
      events.push({ event, ...(id === undefined ? {} : { id }), data: JSON.parse(data.join('\n')) })
  }
  return { events, rest }
}

/** Called for each event as it arrives; returning `'stop'` disconnects there. */
export type OnEvent = (event: ServerEvent) => unknown

/** What reading an event-stream request answered: its status, and its events or JSON body. */
export interface StreamReply {
  status: number
  contentType: string | null
  events: ServerEvent[]
  body?: unknown
}

/**
 * Reads a whole `text/event-stream` answer (or the JSON error instead). `onEvent` runs as each
 * event arrives (to abort mid-stream, for example); returning `'stop'` disconnects there.
 */
export async function readStream(
  response: Response,
  onEvent?: OnEvent,
  controller?: AbortController,
): Promise<StreamReply> {
  const contentType = response.headers.get('content-type')
  if (!contentType?.startsWith('text/event-stream')) {
    const text = await response.text()
    return {
      status: response.status,
      contentType,
      events: [],
      body: text === '' ? undefined : JSON.parse(text),
    }
  }
  const events: ServerEvent[] = []
  const decoder = new TextDecoder()
  let buffer = ''
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true })
      const parsed = parseFrames(buffer)
      buffer = parsed.rest
      for (const event of parsed.events) {
        events.push(event)
        if ((await onEvent?.(event)) === 'stop') {
          controller?.abort()
          return { status: response.status, contentType, events }
        }
      }
    }
  } catch (error) {
    if (!controller?.signal.aborted) throw error
  }
  return { status: response.status, contentType, events }
}

/**
 * POSTs a message and reads the whole event stream. `onEvent` runs as each event arrives;
 * returning `'stop'` disconnects there (the send goes on on the server).
 */
export async function sendMessage(
  baseUrl: string,
  sessionId: string,
  content: unknown,
  onEvent?: OnEvent,
  options: Record<string, unknown> = {},
): Promise<StreamReply> {
  const controller = new AbortController()
  const response = await fetch(`${baseUrl}/api/sessions/${encodeURIComponent(sessionId)}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ content, ...options }),
    signal: controller.signal,
  })
  return readStream(response, onEvent, controller)
}

/** POSTs a retry of the session's failed send and reads its event stream. */
export async function retrySend(
  baseUrl: string,
  sessionId: string,
  body: Record<string, unknown> = {},
): Promise<StreamReply> {
  const response = await fetch(`${baseUrl}/api/sessions/${encodeURIComponent(sessionId)}/retry`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return readStream(response)
}

/** Reattaches to a session's running send (`GET …/events`), from `after` or from the current point. */
export async function reattach(
  baseUrl: string,
  sessionId: string,
  options: { after?: number; lastEventId?: string; onEvent?: OnEvent } = {},
): Promise<StreamReply> {
  const controller = new AbortController()
  const query = options.after === undefined ? '' : `?after=${options.after}`
  const response = await fetch(`${baseUrl}/api/sessions/${encodeURIComponent(sessionId)}/events${query}`, {
    headers: options.lastEventId === undefined ? {} : { 'last-event-id': options.lastEventId },
    signal: controller.signal,
  })
  return readStream(response, options.onEvent, controller)
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
