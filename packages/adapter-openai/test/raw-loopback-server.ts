import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One canned answer of the raw server: status, headers and the exact body bytes. */
export interface RawAnswer {
  status?: number
  headers?: Record<string, string>
  body: string
}

/** A request the raw server received. */
export interface RawRequest {
  url: string
  headers: Record<string, string | string[] | undefined>
  body: Record<string, unknown>
}

/** A loopback server that answers each request with the next canned body, byte for byte. */
export interface RawLoopbackServer {
  baseURL: string
  requests: RawRequest[]
  enqueue(...answers: RawAnswer[]): void
  close(): Promise<void>
}

/** Reads a fixture of `src/__fixtures__`. */
export function fixture(name: string): string {
  return readFileSync(new URL(`../src/__fixtures__/${name}`, import.meta.url), 'utf8')
}

/** A `text/event-stream` answer with `body`. */
export function sse(body: string): RawAnswer {
  return { headers: { 'content-type': 'text/event-stream' }, body }
}

/** Starts the server on 127.0.0.1; `baseURL` ends in `/v1` like OpenAI's. */
export async function startRawLoopbackServer(): Promise<RawLoopbackServer> {
  const queue: RawAnswer[] = []
  const requests: RawRequest[] = []
  const server: Server = createServer((request, response) => {
    let text = ''
    request.setEncoding('utf8')
    request.on('data', (chunk: string) => {
      text += chunk
    })
    request.on('end', () => {
      requests.push({
        url: request.url ?? '',
        headers: request.headers,
        body: text === '' ? {} : JSON.parse(text),
      })
      const answer = queue.shift() ?? { status: 500, body: '{"error":{"message":"no answer queued"}}' }
      response.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers })
      response.end(answer.body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...answers) => queue.push(...answers),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
