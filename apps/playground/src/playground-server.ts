import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type Logger, ValidationError } from '@agentx/core'
import { allowedHostsFor, checkRequestOrigin } from './check-request-origin.js'
import { DEMO_OUTPUT } from './demo-output.js'
import type { PlaygroundHub } from './playground-hub.js'
import { type PlaygroundProvider, toProviderInfo } from './playground-provider.js'
import { readJsonBody } from './read-json-body.js'
import { readSendBody, readSendOptions } from './read-send-body.js'
import { serializeError, statusOf } from './serialize-error.js'
import { serveStatic } from './serve-static.js'
import { SESSION_STATES } from './session-states.js'
import type { SessionRun } from './session-run.js'

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
  /**
   * More `Host` values the server answers to (an SSH tunnel, an editor's port forward), as
   * {@link parseAllowedHosts} makes them: `name:port`, or `name:*` for any port. Default is none:
   * only the server's own address.
   */
  allowedHosts?: readonly string[]
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

const SESSION_PATH = /^\/api\/sessions\/([^/]+)(\/messages|\/abort|\/events|\/retry|\/fork|\/export)?$/
const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
  'x-content-type-options': 'nosniff',
}

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
  /** The hosts of `ALLOWED_HOSTS` alone: their Origin may be https (a forward that ends TLS). */
  let forwardedHosts = new Set<string>()
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

  /**
   * Streams a run's events as SSE (`id:` the event's id, `event:` its type), from after `after`
   * (replaying kept events) or from the current point, then `event: end`. A client that goes away
   * only stops watching: the send goes on, and `GET /api/sessions/:id/events` reattaches.
   */
  const streamRun = (response: ServerResponse, run: SessionRun, after: number | undefined): void => {
    response.writeHead(200, SSE_HEADERS)
    response.flushHeaders()
    streams.add(response)
    const send = (frame: string): void => {
      if (!response.writableEnded) response.write(frame)
    }
    let stopWatching: (() => void) | undefined
    let finished = false
    const finish = (): void => {
      if (finished) return
      finished = true
      clearInterval(keepAlive)
      stopWatching?.()
      streams.delete(response)
      response.off('close', finish)
      if (!response.writableEnded) response.end()
    }
    const keepAlive = setInterval(() => send(': keep-alive\n\n'), keepAliveMs)
    response.on('close', finish)
    stopWatching = run.subscribe(
      {
        entry: (entry) =>
          send(`id: ${entry.id}\nevent: ${entry.type}\ndata: ${JSON.stringify(entry.data)}\n\n`),
        end: () => {
          send('event: end\ndata: {}\n\n')
          finish()
        },
      },
      after,
    )
    if (finished) stopWatching()
  }

  const handleApi = async (request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> => {
    const method = request.method ?? 'GET'
    const path = url.pathname
    if (path === '/api/providers') {
      if (method !== 'GET') return notAllowed(response, 'GET')
      return sendJson(response, 200, { providers, storage: options.storage, outputExample: DEMO_OUTPUT })
    }
    if (path === '/api/sessions') {
      if (method === 'GET') {
        const limit = pageParameter(url.searchParams.get('limit'), 100, 'limit')
        const offset = pageParameter(url.searchParams.get('offset'), 0, 'offset')
        const q = url.searchParams.get('q') ?? ''
        if (q.length > 200) throw new ValidationError('q must be at most 200 characters.')
        const provider = url.searchParams.get('provider') ?? ''
        if (provider.length > 100) throw new ValidationError('provider must be at most 100 characters.')
        const stateParameter = url.searchParams.get('state') ?? ''
        const states =
          stateParameter === '' ? undefined : stateParameter.split(',').map((state) => state.trim())
        for (const state of states ?? []) {
          if (!SESSION_STATES.includes(state as never))
            throw new ValidationError(
              `state must be one or more of ${SESSION_STATES.join(', ')} (comma-separated).`,
            )
        }
        return sendJson(response, 200, {
          sessions: await options.hub.listSessions({
            limit: Math.min(limit, 500),
            offset,
            ...(q.trim() === '' ? {} : { q }),
            ...(provider === '' ? {} : { provider }),
            ...(states === undefined ? {} : { states: states as never }),
          }),
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
      case '/messages': {
        if (method !== 'POST') return notAllowed(response, 'POST')
        const { content, options: sendOptions } = readSendBody(await readJsonBody(request))
        return streamRun(response, await options.hub.send(id, content, sendOptions), 0)
      }
      case '/retry': {
        if (method !== 'POST') return notAllowed(response, 'POST')
        const sendOptions = readSendOptions(await readJsonBody(request), 'retry')
        return streamRun(response, await options.hub.send(id, undefined, sendOptions), 0)
      }
      case '/events': {
        if (method !== 'GET') return notAllowed(response, 'GET')
        const run = options.hub.runOf(id)
        if (run === undefined) {
          if (!(await options.hub.exists(id))) return notFound()
          response.writeHead(204, { 'cache-control': 'no-store' })
          response.end()
          return
        }
        const lastEventId = url.searchParams.get('after') ?? request.headers['last-event-id']
        const after =
          typeof lastEventId === 'string' && lastEventId !== ''
            ? pageParameter(lastEventId, 0, 'after')
            : undefined
        return streamRun(response, run, after)
      }
      case '/abort':
        if (method !== 'POST') return notAllowed(response, 'POST')
        {
          const outcome = await options.hub.abort(id)
          return outcome === 'missing'
            ? notFound()
            : sendJson(response, 202, { aborted: outcome === 'aborted' })
        }
      case '/fork': {
        if (method !== 'POST') return notAllowed(response, 'POST')
        const body = await readJsonBody(request)
        const throughSeq = body.throughSeq
        if (throughSeq !== undefined && (!Number.isInteger(throughSeq) || (throughSeq as number) < 0)) {
          throw new ValidationError('throughSeq must be a non-negative integer.')
        }
        const forked = await options.hub.fork(id, throughSeq as number | undefined)
        return forked === undefined ? notFound() : sendJson(response, 201, { session: forked })
      }
      case '/export': {
        if (method !== 'GET') return notAllowed(response, 'GET')
        const exported = await options.hub.exportSession(id)
        if (exported === undefined) return notFound()
        const text = JSON.stringify({ exportedAt: new Date().toISOString(), ...exported }, null, 2)
        response.writeHead(200, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': Buffer.byteLength(text),
          'content-disposition': `attachment; filename="agentx-session-${id.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80)}.json"`,
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
        })
        response.end(text)
        return
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
        if (method === 'PATCH') {
          const body = await readJsonBody(request)
          const changes: { summary?: string; metadata?: Record<string, unknown> } = {}
          if (body.summary !== undefined) {
            if (typeof body.summary !== 'string' || body.summary.length > 200)
              throw new ValidationError('summary must be a string of at most 200 characters.')
            changes.summary = body.summary
          }
          if (body.metadata !== undefined) {
            if (typeof body.metadata !== 'object' || body.metadata === null || Array.isArray(body.metadata))
              throw new ValidationError('metadata must be a JSON object.')
            changes.metadata = body.metadata as Record<string, unknown>
          }
          const updated = await options.hub.updateSession(id, changes)
          return updated === undefined ? notFound() : sendJson(response, 200, { session: updated })
        }
        return notAllowed(response, 'GET, PATCH, DELETE')
      }
    }
  }

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    let url: URL
    try {
      url = new URL(request.url ?? '/', 'http://playground.invalid')
    } catch {
      // A request target no URL parser takes (`GET http://[`): the client's mistake, not ours.
      request.resume()
      return sendJson(response, 400, {
        error: {
          name: 'Error',
          code: 'BAD_REQUEST',
          message: 'The request target is not a valid URL.',
          retryable: false,
        },
      })
    }
    const isApi = url.pathname === '/api' || url.pathname.startsWith('/api/')
    // The Host check guards everything (DNS rebinding); the Origin and Sec-Fetch-Site checks guard
    // the API (a link from another site may still open the page itself).
    const refused = checkRequestOrigin(
      isApi ? request.headers : { ...request.headers, origin: undefined, 'sec-fetch-site': undefined },
      allowedHosts,
      forwardedHosts,
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
  for (const entry of options.allowedHosts ?? []) allowedHosts.add(entry)
  forwardedHosts = new Set(options.allowedHosts ?? [])
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

function pageParameter(value: string | null, fallback: number, name: string): number {
  if (value === null || value === '') return fallback
  const number = Number(value)
  if (!Number.isInteger(number) || number < 0)
    throw new ValidationError(`${name} must be a non-negative integer.`)
  return number
}
