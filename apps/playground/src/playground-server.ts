import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type Logger, type SessionEvent, ValidationError } from '@agentx/core'
import { allowedHostsFor, checkRequestOrigin } from './check-request-origin.js'
import type { PlaygroundHub } from './playground-hub.js'
import { type PlaygroundProvider, toProviderInfo } from './playground-provider.js'
import { readJsonBody } from './read-json-body.js'
import { serializeError, statusOf } from './serialize-error.js'
import { serveStatic } from './serve-static.js'

/** Where the playground stores its sessions, as the UI shows it (never a password). */
export interface StorageInfo {
  kind: 'sqlite' | 'postgres' | 'custom'
  /** A file path or a database host/name. */
  location: string
}

/** Options of {@link startPlaygroundServer}. */
export interface PlaygroundServerOptions {
  hub: PlaygroundHub
  providers: readonly PlaygroundProvider[]
  storage: StorageInfo
  /** Values scrubbed from every answer (API keys, database URLs). Default is none. */
  secrets?: readonly string[]
  /** Default is `127.0.0.1`. */
  host?: string
  /** `0` picks a free port. Default is `4173`. */
  port?: number
  /** Interval of SSE keep-alive comments, in ms. Default is `15000`. */
  keepAliveMs?: number
  logger?: Logger
}

/** A running playground HTTP server. */
export interface PlaygroundServer {
  /** The URL it listens on, e.g. `http://127.0.0.1:4173`. */
  readonly url: string
  readonly host: string
  readonly port: number
  /** Stops accepting requests, aborts running replies (keeping their partial text) and closes every connection. */
  close(): Promise<void>
}

const SESSION_PATH = /^\/api\/sessions\/([^/]+)(\/messages|\/abort)?$/
const MAX_CONTENT_LENGTH = 100_000

/**
 * Starts the playground's HTTP server (node:http): the web UI and the JSON + SSE API of
 * DESIGN.md §9. Requests whose `Host` or `Origin` is not the server's own are refused with 403.
 */
export async function startPlaygroundServer(options: PlaygroundServerOptions): Promise<PlaygroundServer> {
  const host = options.host ?? '127.0.0.1'
  const secrets = options.secrets ?? []
  const keepAliveMs = options.keepAliveMs ?? 15_000
  const providers = options.providers.map(toProviderInfo)
  let allowedHosts = new Set<string>()
  const streams = new Set<ServerResponse>()

  const sendJson = (response: ServerResponse, status: number, body: unknown): void => {
    const text = JSON.stringify(body)
    response.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    })
    response.end(text)
  }
  const sendError = (response: ServerResponse, error: unknown): void => {
    const status = statusOf(error)
    if (status >= 500 && status !== 503) {
      options.logger?.error('playground: request failed', { error: serializeError(error, secrets) })
    }
    if (response.headersSent) {
      response.end()
      return
    }
    sendJson(response, status, { error: serializeError(error, secrets) })
  }
  const notAllowed = (response: ServerResponse, allow: string): void => {
    response.setHeader('allow', allow)
    sendJson(response, 405, {
      error: { name: 'Error', code: 'METHOD_NOT_ALLOWED', message: `Use ${allow}.`, retryable: false },
    })
  }

  const streamReply = async (
    request: IncomingMessage,
    response: ServerResponse,
    id: string,
  ): Promise<void> => {
    const body = await readJsonBody(request)
    const content = body.content
    if (typeof content !== 'string' || content.trim() === '')
      throw new ValidationError('content must be a non-empty string.')
    if (content.length > MAX_CONTENT_LENGTH) {
      throw new ValidationError(`content must be at most ${MAX_CONTENT_LENGTH} characters.`)
    }
    const events = await options.hub.stream(id, content)
    const iterator = events[Symbol.asyncIterator]()
    // The first event tells whether the send started: a busy or deleted session rejects here, as JSON.
    const first = await iterator.next()
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-content-type-options': 'nosniff',
    })
    response.flushHeaders()
    streams.add(response)
    const send = (frame: string): void => {
      // The server may have ended the response while closing; the reply still runs to its end.
      if (!response.writableEnded) response.write(frame)
    }
    const write = (event: SessionEvent): void => {
      send(`event: ${event.type}\ndata: ${JSON.stringify(toWireEvent(event, secrets))}\n\n`)
    }
    // A client that goes away (tab closed, fetch aborted) stops its reply: nobody would see it.
    const onClose = (): void => {
      if (!response.writableEnded) options.hub.abort(id).catch(() => undefined)
    }
    response.on('close', onClose)
    const keepAlive = setInterval(() => send(': keep-alive\n\n'), keepAliveMs)
    try {
      if (!first.done) write(first.value)
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) write(next.value)
      send('event: end\ndata: {}\n\n')
    } catch (error) {
      send(
        `event: error\ndata: ${JSON.stringify({ type: 'error', error: serializeError(error, secrets) })}\n\n`,
      )
    } finally {
      clearInterval(keepAlive)
      response.off('close', onClose)
      streams.delete(response)
      response.end()
    }
  }

  const handleApi = async (request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> => {
    const method = request.method ?? 'GET'
    const path = url.pathname
    if (path === '/api/providers') {
      if (method !== 'GET') return notAllowed(response, 'GET')
      return sendJson(response, 200, { providers, storage: options.storage })
    }
    if (path === '/api/sessions') {
      if (method === 'GET') {
        const limit = pageParameter(url.searchParams.get('limit'), 100, 'limit')
        const offset = pageParameter(url.searchParams.get('offset'), 0, 'offset')
        return sendJson(response, 200, {
          sessions: await options.hub.listSessions(Math.min(limit, 500), offset),
        })
      }
      if (method === 'POST') {
        const body = await readJsonBody(request)
        if (typeof body.provider !== 'string')
          throw new ValidationError('provider must be a provider id string.')
        if (body.model !== undefined && typeof body.model !== 'string')
          throw new ValidationError('model must be a string.')
        if (body.systemPrompt !== undefined && typeof body.systemPrompt !== 'string') {
          throw new ValidationError('systemPrompt must be a string.')
        }
        const session = await options.hub.createSession({
          provider: body.provider,
          ...(typeof body.model === 'string' && body.model.trim() !== '' ? { model: body.model } : {}),
          ...(typeof body.systemPrompt === 'string' ? { systemPrompt: body.systemPrompt } : {}),
        })
        return sendJson(response, 201, { session })
      }
      return notAllowed(response, 'GET, POST')
    }
    const match = SESSION_PATH.exec(path)
    if (match === null) {
      return sendJson(response, 404, {
        error: { name: 'Error', code: 'NOT_FOUND', message: 'No such API route.', retryable: false },
      })
    }
    let id: string
    try {
      id = decodeURIComponent(match[1] ?? '')
    } catch (error) {
      throw new ValidationError('The session id in the URL is not valid percent-encoding.', { cause: error })
    }
    const notFound = (): void =>
      sendJson(response, 404, {
        error: {
          name: 'NotFoundError',
          code: 'NOT_FOUND',
          message: `There is no session ${id}.`,
          retryable: false,
        },
      })
    switch (match[2]) {
      case '/messages':
        if (method !== 'POST') return notAllowed(response, 'POST')
        return streamReply(request, response, id)
      case '/abort':
        if (method !== 'POST') return notAllowed(response, 'POST')
        {
          const outcome = await options.hub.abort(id)
          return outcome === 'missing'
            ? notFound()
            : sendJson(response, 202, { aborted: outcome === 'aborted' })
        }
      default: {
        if (method === 'GET') {
          const detail = await options.hub.getSession(id)
          return detail === undefined ? notFound() : sendJson(response, 200, detail)
        }
        if (method === 'DELETE') {
          if (!(await options.hub.deleteSession(id))) return notFound()
          response.writeHead(204, { 'cache-control': 'no-store' })
          response.end()
          return
        }
        return notAllowed(response, 'GET, DELETE')
      }
    }
  }

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://playground.invalid')
    const isApi = url.pathname === '/api' || url.pathname.startsWith('/api/')
    // The Host check guards everything (DNS rebinding); the Origin and Sec-Fetch-Site checks guard
    // the API (a link from another site may still open the page itself).
    const refused = checkRequestOrigin(
      isApi ? request.headers : { ...request.headers, origin: undefined, 'sec-fetch-site': undefined },
      allowedHosts,
    )
    if (refused !== undefined) {
      request.resume()
      return sendJson(response, 403, {
        error: { name: 'Error', code: 'FORBIDDEN', message: `Refused: ${refused}.`, retryable: false },
      })
    }
    if (isApi) return handleApi(request, response, url)
    const method = request.method ?? 'GET'
    if (method !== 'GET' && method !== 'HEAD') return notAllowed(response, 'GET, HEAD')
    if (await serveStatic(url.pathname, response, method === 'HEAD')) return
    response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
    response.end('Not found')
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => sendError(response, error))
  })
  server.keepAliveTimeout = 5_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 4173, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const port = (server.address() as AddressInfo).port
  allowedHosts = allowedHostsFor(host, port)
  const urlHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
  let closing: Promise<void> | undefined
  return {
    url: `http://${urlHost}:${port}`,
    host,
    port,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()))
        server.closeIdleConnections()
        // Aborting the running replies ends their event streams with `state: aborted`.
        await options.hub.close()
        for (const response of streams) response.end()
        server.closeAllConnections()
        await stopped
      })()
      return closing
    },
  }
}

/** A session event as the wire carries it: errors become {@link serializeError} views. */
function toWireEvent(event: SessionEvent, secrets: readonly string[]): unknown {
  switch (event.type) {
    case 'retry':
    case 'retries-exhausted':
    case 'persist-error':
    case 'error':
      return { ...event, error: serializeError(event.error, secrets) }
    default:
      return event
  }
}

function pageParameter(value: string | null, fallback: number, name: string): number {
  if (value === null || value === '') return fallback
  const number = Number(value)
  if (!Number.isInteger(number) || number < 0)
    throw new ValidationError(`${name} must be a non-negative integer.`)
  return number
}
