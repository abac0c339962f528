import { readFileSync } from 'node:fs'
import type { IncomingHttpHeaders } from 'node:http'
import { type FakeProvider, geminiDialect, type Scenario, startFakeProvider } from '@agentx/contract-tests'

/** A request as the server received it. */
export interface RecordedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
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
      /** Stop writing (keep the connection open) before this frame. */
      stallAfterFrame?: number
      /** Destroy the socket before this frame. */
      resetAfterFrame?: number
      /** End the response cleanly before this frame, without the rest. */
      endAfterFrame?: number
    }
  | { status: number; json: string; headers?: Record<string, string> }
  /** Send the stream headers, then nothing. */
  | { stall: true }

/**
 * The kit's fake provider in the Gemini dialect, answering with recorded Gemini bytes: replies
 * are turned into replay scenarios, requests are read back with their JSON body parsed.
 */
export interface GeminiTestServer {
  /** `http://127.0.0.1:PORT`, what `baseURL` / `httpOptions.baseUrl` takes. */
  readonly baseUrl: string
  readonly requests: RecordedRequest[]
  /** Client connections that closed before the server finished its response. */
  readonly disconnects: number
  /** Resolves at the next client disconnect (or at once if one happened since the last call). */
  waitForDisconnect(): Promise<void>
  enqueue(...replies: LoopbackReply[]): void
  /** Forgets requests and queued replies. */
  reset(): void
  close(): Promise<void>
}

const FIXTURES = new URL('../src/__fixtures__/', import.meta.url)

/** The text of a fixture file of `src/__fixtures__`. */
export function fixture(name: string): string {
  return readFileSync(new URL(name, FIXTURES), 'utf8')
}

/** Builds an SSE body from response objects. */
export function sseOf(...chunks: unknown[]): string {
  return chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('')
}

/** The replay scenario of a reply. */
export function scenarioOf(reply: LoopbackReply): Scenario {
  const stream = { 'content-type': 'text/event-stream', 'content-disposition': 'attachment' }
  if ('stall' in reply) {
    return {
      replay: { headers: stream, body: sseOf({}) },
      delivery: { pauseBeforeFrame: 0, pauseMs: Number.POSITIVE_INFINITY },
    }
  }
  if ('status' in reply) {
    return {
      replay: {
        status: reply.status,
        headers: { 'content-type': 'application/json; charset=UTF-8', ...reply.headers },
        body: reply.json,
      },
    }
  }
  const delivery: NonNullable<Scenario['delivery']> = {}
  if (reply.chunkBytes !== undefined) delivery.chunkBytes = reply.chunkBytes
  if (reply.stallAfterFrame !== undefined) {
    delivery.pauseBeforeFrame = reply.stallAfterFrame
    delivery.pauseMs = Number.POSITIVE_INFINITY
  }
  if (reply.resetAfterFrame !== undefined) {
    delivery.truncateAfterFrame = reply.resetAfterFrame
    delivery.truncateMode = 'reset'
  }
  if (reply.endAfterFrame !== undefined) delivery.truncateAfterFrame = reply.endAfterFrame
  return { replay: { headers: stream, body: reply.sse }, delivery }
}

/** Starts the server; every request takes the next enqueued reply (none left: 500). */
export async function startGeminiTestServer(): Promise<GeminiTestServer> {
  const fake: FakeProvider = await startFakeProvider({ dialect: geminiDialect })
  return {
    baseUrl: fake.baseURL,
    get requests(): RecordedRequest[] {
      return fake.requests.map(({ received }) => ({
        method: received.method,
        url: received.url,
        headers: received.headers,
        body: received.body === '' ? {} : (JSON.parse(received.body) as Record<string, unknown>),
      }))
    },
    get disconnects() {
      return fake.disconnects
    },
    waitForDisconnect: () => fake.waitForDisconnect(5_000),
    enqueue: (...replies) => fake.enqueue(...replies.map(scenarioOf)),
    reset: () => fake.reset(),
    close: () => fake.close(),
  }
}
