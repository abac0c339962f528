import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A request as the loopback server received it. */
export interface RecordedRequest {
  method: string
  url: string
  headers: IncomingMessage['headers']
  /** The parsed JSON body. */
  body: Record<string, unknown>
}

/** How the server answers one request. */
export type LoopbackReply =
  | {
      /** The exact response body of a stream (SSE text). */
      sse: string
      /** Write the body in pieces of this many bytes. Default is one write per frame. */
      chunkBytes?: number
      /** Stop writing (keep the connection open) after this many frames. */
      stallAfterFrame?: number
      /** Destroy the socket after this many frames. */
      resetAfterFrame?: number
      /** End the response cleanly after this many frames, without the rest. */
      endAfterFrame?: number
    }
  | { status: number; json: string; headers?: Record<string, string> }
  | { stall: true }

/** A `node:http` server on 127.0.0.1 that speaks Gemini's `streamGenerateContent?alt=sse`. */
export interface GeminiLoopbackServer {
  /** `http://127.0.0.1:PORT`, what `baseURL` / `httpOptions.baseUrl` takes. */
  baseUrl: string
  requests: RecordedRequest[]
  /** Client connections that closed before the server finished its response. */
  readonly disconnects: number
  /** Resolves at the next client disconnect (or at once if one happened since the last call). */
  waitForDisconnect(): Promise<void>
  enqueue(...replies: LoopbackReply[]): void
  close(): Promise<void>
}

const FIXTURES = new URL('../src/__fixtures__/', import.meta.url)

/** The text of a fixture file of `src/__fixtures__`. */
export function fixture(name: string): string {
  return readFileSync(new URL(name, FIXTURES), 'utf8')
}

/** The frames of an SSE body (each with its blank line). */
export function framesOf(sse: string): string[] {
  return sse.split(/(?<=\n\n)/).filter((frame) => frame.trim() !== '')
}

/** Builds an SSE body from response objects. */
export function sseOf(...chunks: unknown[]): string {
  return chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('')
}

/** Starts the server; every request takes the next enqueued reply (none left: 500). */
export async function startGeminiLoopbackServer(): Promise<GeminiLoopbackServer> {
  const queue: LoopbackReply[] = []
  const requests: RecordedRequest[] = []
  let disconnects = 0
  let pendingDisconnects = 0
  const waiters: Array<() => void> = []
  const sockets = new Set<import('node:net').Socket>()

  const onDisconnect = (): void => {
    disconnects++
    const waiter = waiters.shift()
    if (waiter) waiter()
    else pendingDisconnects++
  }

  const server = createServer((request, response) => {
    let text = ''
    request.setEncoding('utf8')
    request.on('data', (data: string) => {
      text += data
    })
    request.on('end', () => {
      requests.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
      })
      const reply = queue.shift() ?? {
        status: 500,
        json: '{"error":{"code":500,"message":"no reply queued","status":"INTERNAL"}}',
      }
      let finished = false
      response.on('finish', () => {
        finished = true
      })
      response.on('close', () => {
        if (!finished) onDisconnect()
      })
      void answer(reply, response)
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    get disconnects() {
      return disconnects
    },
    waitForDisconnect() {
      if (pendingDisconnects > 0) {
        pendingDisconnects--
        return Promise.resolve()
      }
      return new Promise((resolve) => waiters.push(resolve))
    },
    enqueue(...replies) {
      queue.push(...replies)
    },
    close() {
      for (const socket of sockets) socket.destroy()
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
}

async function answer(reply: LoopbackReply, response: ServerResponse): Promise<void> {
  if ('stall' in reply) {
    response.writeHead(200, { 'content-type': 'text/event-stream' })
    response.flushHeaders()
    return
  }
  if ('status' in reply) {
    response.writeHead(reply.status, { 'content-type': 'application/json; charset=UTF-8', ...reply.headers })
    response.end(reply.json)
    return
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'content-disposition': 'attachment' })
  const frames = framesOf(reply.sse)
  for (const [index, frame] of frames.entries()) {
    if (index === reply.stallAfterFrame) return
    if (index === reply.resetAfterFrame) {
      response.socket?.destroy()
      return
    }
    if (index === reply.endAfterFrame) break
    const bytes = Buffer.from(frame, 'utf8')
    const size = reply.chunkBytes ?? bytes.length
    for (let offset = 0; offset < bytes.length; offset += size) {
      response.write(bytes.subarray(offset, offset + size))
      // Lets each piece leave as its own TCP write.
      if (reply.chunkBytes !== undefined) await new Promise((resolve) => setImmediate(resolve))
    }
    await new Promise((resolve) => setImmediate(resolve))
  }
  response.end()
}
