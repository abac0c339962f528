import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** Reads a recorded SSE fixture of this folder, byte for byte. */
export function readFixture(name: string): string {
  return readFileSync(new URL(`./${name}`, import.meta.url), 'utf8')
}

/** One scripted answer of the loopback server. */
export interface ReplayAnswer {
  /** The SSE body to stream (status 200, `text/event-stream`). */
  sse?: string
  /** An HTTP error instead: status, JSON body and headers. */
  status?: number
  json?: unknown
  headers?: Record<string, string>
  /** Write the body in pieces of this many bytes (default: one write per SSE frame). */
  chunkBytes?: number
  /** Stop writing after this many bytes and keep the connection open (a stalled stream). */
  stallAfterBytes?: number
  /** Wait this long between two writes (default: the next event-loop turn). */
  delayMs?: number
  /** Never send the response headers (a server that hangs). */
  hang?: boolean
  /** Destroy the socket after this many bytes (a connection reset). */
  resetAfterBytes?: number
}

/** A request as the server received it. */
export interface ReplayRequest {
  method: string
  url: string
  headers: Record<string, string | string[] | undefined>
  body: Record<string, unknown>
}

/** A loopback HTTP server that answers `POST /v1/messages` with scripted Anthropic wire bytes. */
export interface ReplayServer {
  /** What to pass as the SDK's `baseURL`. */
  baseURL: string
  requests: ReplayRequest[]
  /** Connections the client closed before the server finished its response. */
  disconnects: number
  enqueue(...answers: ReplayAnswer[]): void
  /** Resolves when the next client disconnect happens (or has happened since the last call). */
  waitForDisconnect(): Promise<void>
  close(): Promise<void>
}

/** Starts a {@link ReplayServer} on 127.0.0.1 with a random port. */
export async function startReplayServer(): Promise<ReplayServer> {
  const queue: ReplayAnswer[] = []
  const requests: ReplayRequest[] = []
  const sockets = new Set<import('node:net').Socket>()
  let disconnects = 0
  let seenDisconnects = 0
  let waiters: Array<() => void> = []
  const onDisconnect = (): void => {
    disconnects++
    const pending = waiters
    waiters = []
    for (const wake of pending) wake()
  }

  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: text === '' ? {} : JSON.parse(text) })
      const answer = queue.shift()
      let finished = false
      response.on('finish', () => {
        finished = true
      })
      response.on('close', () => {
        if (!finished) onDisconnect()
      })
      if (answer === undefined || request.method !== 'POST' || request.url !== '/v1/messages') {
        response.writeHead(500, { 'content-type': 'application/json', 'request-id': 'req_none' })
        response.end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'No scripted answer left' } }))
        return
      }
      void play(answer, request, response)
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    baseURL: `http://127.0.0.1:${port}`,
    requests,
    get disconnects() {
      return disconnects
    },
    enqueue: (...answers) => {
      queue.push(...answers)
    },
    waitForDisconnect: () =>
      new Promise<void>((resolve) => {
        if (disconnects > seenDisconnects) {
          seenDisconnects = disconnects
          resolve()
          return
        }
        waiters.push(() => {
          seenDisconnects = disconnects
          resolve()
        })
      }),
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

async function play(answer: ReplayAnswer, request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (answer.hang) return
  const requestId = `req_${Math.random().toString(36).slice(2, 10)}`
  if (answer.status !== undefined && answer.status !== 200) {
    response.writeHead(answer.status, { 'content-type': 'application/json', 'request-id': requestId, ...answer.headers })
    response.end(JSON.stringify(answer.json ?? { type: 'error', error: { type: 'api_error', message: 'error' }, request_id: requestId }))
    return
  }
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'request-id': requestId,
    ...answer.headers,
  })
  const bytes = Buffer.from(answer.sse ?? '', 'utf8')
  const pieces: Buffer[] = []
  if (answer.chunkBytes !== undefined) {
    for (let at = 0; at < bytes.length; at += answer.chunkBytes) pieces.push(bytes.subarray(at, at + answer.chunkBytes))
  } else {
    let at = 0
    for (;;) {
      const end = bytes.indexOf('\n\n', at)
      if (end === -1) {
        if (at < bytes.length) pieces.push(bytes.subarray(at))
        break
      }
      pieces.push(bytes.subarray(at, end + 2))
      at = end + 2
    }
  }
  let written = 0
  for (const piece of pieces) {
    if (response.destroyed) return
    const limit = answer.stallAfterBytes ?? answer.resetAfterBytes
    if (limit !== undefined && written + piece.length > limit) {
      response.write(piece.subarray(0, Math.max(0, limit - written)))
      if (answer.resetAfterBytes !== undefined) {
        await new Promise((resolve) => setImmediate(resolve))
        response.socket?.destroy()
      }
      return
    }
    response.write(piece)
    written += piece.length
    await new Promise((resolve) => (answer.delayMs === undefined ? setImmediate(resolve) : setTimeout(resolve, answer.delayMs)))
  }
  response.end()
}
