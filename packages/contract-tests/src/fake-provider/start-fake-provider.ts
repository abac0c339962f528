import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { DecodedRequest, ReceivedRequest, WireDialect } from '../dialects/wire-dialect.js'
import type { FakeProvider, FakeProviderRequest } from './fake-provider.js'
import type { Scenario, ScenarioDelivery, ScenarioError } from './scenario.js'

/** Options of {@link startFakeProvider}. */
export interface StartFakeProviderOptions {
  /** The wire protocol the server speaks, e.g. `anthropicMessagesDialect`. */
  readonly dialect: WireDialect
  /** Interface to listen on. Default is `127.0.0.1` (loopback only). */
  readonly host?: string
}

interface MutableRequest {
  received: ReceivedRequest
  decoded: DecodedRequest
  scenario?: Scenario
  finished: boolean
  disconnected: boolean
}

/**
 * Starts a loopback `node:http` server that answers model requests with queued {@link Scenario}s in
 * `dialect`'s exact bytes, and records what it received. Resolves once it listens on a free port.
 *
 * Used by the adapter contract rules; plugin authors use it in their own tests as well.
 */
export async function startFakeProvider(options: StartFakeProviderOptions): Promise<FakeProvider> {
  const { dialect } = options
  const host = options.host ?? '127.0.0.1'
  const queue: Scenario[] = []
  const requests: MutableRequest[] = []
  const unmatched: ReceivedRequest[] = []
  const sockets = new Set<Socket>()
  const active = new Map<ServerResponse, MutableRequest>()
  let disconnects = 0
  let consumed = 0
  let waiters: Array<() => void> = []
  let closed = false

  const notifyDisconnect = (): void => {
    disconnects += 1
    const current = waiters
    waiters = []
    for (const wake of current) wake()
  }

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const body = await readBody(request)
    const received: ReceivedRequest = {
      method: request.method ?? 'GET',
      url: request.url ?? '/',
      headers: { ...request.headers },
      body,
    }
    if (!dialect.matches(received)) {
      unmatched.push(received)
      sendJson(response, 404, {
        error: {
          message: `fake provider (${dialect.name}): no route for ${received.method} ${received.url}`,
        },
      })
      return
    }
    let decoded: DecodedRequest
    try {
      decoded = dialect.decodeRequest(received)
    } catch (error) {
      unmatched.push(received)
      const reason = error instanceof Error ? error.message : String(error)
      sendHttpError(
        response,
        dialect.encodeHttpError({
          kind: 'invalid_request',
          message: `fake provider could not decode the request: ${reason}`,
        }),
      )
      return
    }
    const scenario = queue.shift()
    const record: MutableRequest = { received, decoded, finished: false, disconnected: false }
    if (scenario) record.scenario = scenario
    requests.push(record)
    active.set(response, record)
    response.on('finish', () => {
      record.finished = true
      active.delete(response)
    })
    response.on('close', () => {
      active.delete(response)
      if (!record.finished) {
        record.disconnected = true
        notifyDisconnect()
      }
    })
    if (!scenario) {
      sendHttpError(
        response,
        dialect.encodeHttpError({
          kind: 'server',
          message: 'fake provider: no scenario queued for this request',
        }),
      )
      return
    }
    if (scenario.httpError) {
      sendHttpError(response, dialect.encodeHttpError(scenario.httpError))
      return
    }
    if (scenario.replay) {
      const status = scenario.replay.status ?? 200
      const headers =
        scenario.replay.headers ??
        (status >= 200 && status < 300 ? dialect.streamHeaders() : { 'content-type': 'application/json' })
      await writeFrames(dialect, response, record, splitFrames(scenario.replay.body), {
        status,
        headers,
        delivery: scenario.delivery ?? {},
        streamError: scenario.streamError,
      })
      return
    }
    if (!scenario.response) {
      sendHttpError(
        response,
        dialect.encodeHttpError({
          kind: 'server',
          message: 'fake provider: scenario has neither response, replay nor httpError',
        }),
      )
      return
    }
    await writeFrames(dialect, response, record, dialect.encodeResponse(scenario.response, record.decoded), {
      status: 200,
      headers: dialect.streamHeaders(),
      delivery: scenario.delivery ?? {},
      streamError: scenario.streamError,
    })
  }

  const server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.statusCode = 500
      response.destroy()
    })
  })
  server.keepAliveTimeout = 5_000
  server.on('connection', (socket) => {
    socket.setNoDelay(true)
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`

  const endActive = (): void => {
    for (const [response, record] of active) {
      record.finished = true
      response.destroy()
    }
    active.clear()
  }

  return {
    origin,
    baseURL: origin + dialect.basePath,
    dialect,
    enqueue(...scenarios) {
      queue.push(...scenarios)
    },
    get pending() {
      return queue.length
    },
    get requests(): readonly FakeProviderRequest[] {
      return requests
    },
    get unmatched(): readonly ReceivedRequest[] {
      return unmatched
    },
    get disconnects() {
      return disconnects
    },
    get openConnections() {
      return sockets.size
    },
    waitForDisconnect(timeoutMs = 2_000) {
      return new Promise<void>((resolve, reject) => {
        const take = (): boolean => {
          if (disconnects <= consumed) return false
          consumed += 1
          return true
        }
        if (take()) {
          resolve()
          return
        }
        const wake = (): void => {
          if (take()) {
            clearTimeout(timer)
            resolve()
          } else waiters.push(wake)
        }
        const timer = setTimeout(() => {
          waiters = waiters.filter((waiter) => waiter !== wake)
          reject(
            new Error(
              `fake provider: no client disconnect within ${timeoutMs} ms (the connection is still open)`,
            ),
          )
        }, timeoutMs)
        waiters.push(wake)
      })
    },
    reset() {
      endActive()
      queue.length = 0
      requests.length = 0
      unmatched.length = 0
      disconnects = 0
      consumed = 0
    },
    async close() {
      if (closed) return
      closed = true
      endActive()
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections()
      for (const socket of sockets) socket.destroy()
      await stopped
    },
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' })
  response.end(JSON.stringify(body))
}

function sendHttpError(
  response: ServerResponse,
  error: { status: number; headers: Record<string, string>; body: string },
): void {
  response.writeHead(error.status, { 'content-type': 'application/json', ...error.headers })
  response.end(error.body)
}

/** Cuts a recorded body into frames after each blank line, keeping every byte. */
function splitFrames(body: string): string[] {
  const frames = body.split(/(?<=\r\n\r\n|\n\n|\r\r)/)
  return frames.filter((frame) => frame !== '')
}

interface FrameWriting {
  status: number
  headers: Record<string, string>
  delivery: ScenarioDelivery
  streamError: ScenarioError | undefined
}

/** Writes frames with the delivery's quirks (byte splitting, pauses, cuts, bad frames). */
async function writeFrames(
  dialect: WireDialect,
  response: ServerResponse,
  record: MutableRequest,
  frames: readonly string[],
  { status, headers, delivery, streamError }: FrameWriting,
): Promise<void> {
  const gone = new Promise<void>((resolve) => response.once('close', () => resolve()))
  let isGone = false
  void gone.then(() => {
    isGone = true
  })
  const write = async (text: string): Promise<void> => {
    const bytes = Buffer.from(delivery.crlf ? text.replace(/\r?\n/g, '\r\n') : text, 'utf8')
    const size = delivery.chunkBytes && delivery.chunkBytes > 0 ? delivery.chunkBytes : bytes.length
    for (let offset = 0; offset < bytes.length; offset += size) {
      if (isGone || response.destroyed) return
      const slice = bytes.subarray(offset, offset + size)
      await new Promise<void>((resolve) => response.write(slice, () => resolve()))
      // Let the slice leave on its own so the client really reads it separately.
      if (size < bytes.length) await new Promise<void>((resolve) => setImmediate(resolve))
    }
  }
  const holdHeaders = delivery.holdHeaders === true && delivery.pauseBeforeFrame === 0
  if (holdHeaders && delivery.pauseMs !== undefined && delivery.pauseMs > 0) {
    await pause(delivery.pauseMs, gone, undefined, async () => {})
    if (isGone) return
  }
  response.writeHead(status, headers)
  response.flushHeaders()
  for (let index = 0; index < frames.length; index += 1) {
    if (isGone) return
    if (
      !holdHeaders &&
      delivery.pauseBeforeFrame === index &&
      delivery.pauseMs !== undefined &&
      delivery.pauseMs > 0
    ) {
      await pause(delivery.pauseMs, gone, delivery.heartbeatMs, () => write(': heartbeat\n\n'))
      if (isGone) return
    }
    if (delivery.errorFrameAfter === index) {
      await write(dialect.encodeStreamError(streamError ?? { kind: 'server' }))
      response.end()
      return
    }
    if (delivery.truncateAfterFrame === index) {
      if (delivery.truncateMode === 'reset') {
        record.finished = true
        response.destroy()
      } else response.end()
      return
    }
    const frame = delivery.malformedFrame === index ? dialect.encodeMalformedFrame() : (frames[index] ?? '')
    await write(delivery.multiLineData ? spreadData(frame) : frame)
    if (index < frames.length - 1) {
      if (delivery.keepAlive) await write(': keep-alive\n\n')
      if (delivery.unknownFrames && dialect.encodeUnknownFrame) await write(dialect.encodeUnknownFrame())
    }
  }
  if (!isGone) response.end()
}

/** Rewrites each `data:` line holding a JSON object as several `data:` lines (valid SSE, same data once joined). */
function spreadData(frame: string): string {
  return frame
    .split('\n')
    .map((line) => {
      if (!line.startsWith('data:')) return line
      const payload = line.slice(line.startsWith('data: ') ? 6 : 5)
      try {
        const value: unknown = JSON.parse(payload)
        if (typeof value !== 'object' || value === null) return line
        return JSON.stringify(value, null, 1)
          .split('\n')
          .map((part) => `data: ${part}`)
          .join('\n')
      } catch {
        return line
      }
    })
    .join('\n')
}

/** Waits `ms` (forever for `Infinity`) or until the client goes away, sending heartbeats if asked. */
async function pause(
  ms: number,
  gone: Promise<void>,
  heartbeatMs: number | undefined,
  heartbeat: () => Promise<void>,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  let beat: NodeJS.Timeout | undefined
  if (heartbeatMs !== undefined && heartbeatMs > 0) {
    beat = setInterval(() => void heartbeat(), heartbeatMs)
  }
  const over = Number.isFinite(ms)
    ? new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))
    : new Promise<void>(() => {})
  await Promise.race([gone, over])
  clearTimeout(timer)
  clearInterval(beat)
}
