// The playground's HTTP API as the UI uses it: JSON requests and event streams (SSE over fetch).

/** An error answer of the API: `status` and the `{ code, message, … }` object. */
export class ApiError extends Error {
  constructor(status, error) {
    super(error?.message ?? `HTTP ${status}`)
    this.status = status
    this.error = error ?? { code: `HTTP_${status}`, message: `HTTP ${status}` }
  }
}

/** A JSON request; resolves to the parsed body (`undefined` for 204), rejects with {@link ApiError}. */
export async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (response.status === 204) return undefined
  const json = await response.json().catch(() => undefined)
  if (!response.ok) throw new ApiError(response.status, json?.error)
  return json
}

/** The path of a session route; ids are opaque (a child's contains `/`), so they are encoded. */
export function sessionPath(id, suffix = '') {
  return `/api/sessions/${encodeURIComponent(id)}${suffix}`
}

/**
 * Opens an event stream (`POST …/messages`, `POST …/retry`, `GET …/events`) and calls
 * `onOpen()` once the server accepted it, then `onEvent(type, data, id)` per event until the
 * server ends it or `signal` aborts. Resolves to
 * `'ended'` (the server sent `end`), `'idle'` (204: nothing runs), `'cut'` (the connection closed
 * without `end`) or `'aborted'`; rejects with {@link ApiError} when the server refused (JSON answer).
 */
export async function openStream(path, init, onEvent, onOpen) {
  let response
  try {
    response = await fetch(path, init)
  } catch (error) {
    if (init.signal?.aborted) return 'aborted'
    throw new ApiError(0, {
      code: 'NETWORK',
      message: `Could not reach the playground server: ${error.message}`,
    })
  }
  if (response.status === 204) return 'idle'
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
    const json = await response.json().catch(() => undefined)
    throw new ApiError(response.status, json?.error)
  }
  onOpen?.()
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return 'cut'
      buffer += value.replace(/\r\n?/g, '\n')
      for (let boundary = buffer.indexOf('\n\n'); boundary !== -1; boundary = buffer.indexOf('\n\n')) {
        const frame = buffer.slice(0, boundary)
        buffer = buffer.slice(boundary + 2)
        let type = 'message'
        let id
        const data = []
        for (const line of frame.split('\n')) {
          if (line.startsWith(':')) continue
          if (line.startsWith('event:')) type = line.slice(6).trim()
          else if (line.startsWith('id:')) id = Number(line.slice(3).trim())
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
        }
        if (type === 'end') return 'ended'
        if (data.length > 0) onEvent(type, JSON.parse(data.join('\n')), id)
      }
    }
  } catch (error) {
    if (init.signal?.aborted) return 'aborted'
    if (error instanceof SyntaxError) throw error
    return 'cut'
  }
}
