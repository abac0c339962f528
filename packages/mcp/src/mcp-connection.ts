import { createRequire } from 'node:module'
import { StringDecoder } from 'node:string_decoder'
import type { ContentBlock, Logger, Tool, ToolContext } from '@agentx/core'
import { raceAbort, redactSecrets } from '@agentx/core/provider'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ErrorCode, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import type { McpServer } from './connect-mcp.js'
import { McpClientError, isMcpClientError } from './mcp-client-error.js'
import { type McpErrorContext, mapMcpError } from './map-mcp-error.js'
import { mapMcpResult } from './map-mcp-result.js'
import { toToolNames } from './tool-names.js'
import { type RequestId, watchResponseStreams } from './watch-response-streams.js'

const { version } = createRequire(import.meta.url)('../package.json') as { version: string }

/** How much of a stdio server's stderr is kept for error messages. */
const STDERR_TAIL = 4096
/** `tools/list` pages read at most (a server whose cursor never ends must not loop forever). */
const MAX_LIST_PAGES = 1000
/** How long `close()` waits for an HTTP server to end the session before closing anyway. */
const TERMINATE_TIMEOUT_MS = 2000
/**
 * The `data` of the error response handed to the client for a request whose response stream broke:
 * it tells that failure from a server's own error of the same code.
 */
const STREAM_LOST = { agentx: 'response-stream-lost' } as const

/** The settings {@link McpConnectionImpl} runs with (validated by `connectMcp`). */
export interface McpConnectionSettings {
  namePrefix: string
  label: string
  /** Strings redacted from every error message (header values, query parameters, env values). */
  secrets: string[]
  timeoutMs: number
  onToolsChanged: ((tools: Tool[]) => void) | undefined
  logger: Logger | undefined
}

/** One live MCP session: a client on a started transport. Replaced when it is lost. */
interface Link {
  client: Client
  transport: Transport
  http: StreamableHTTPClientTransport | undefined
  alive: boolean
  /** The end of the child's stderr (stdio). */
  stderr: { text: string } | undefined
  /** Requests whose response stream broke on a resumable stream, while the SDK tries to resume it. */
  resuming: Set<RequestId>
}

/**
 * The connection behind `connectMcp`: opens the MCP session on first use, shares one opening among
 * concurrent callers, caches the tool list (invalidated by `tools/list_changed` and by a new
 * session), calls tools with the send's abort signal, and opens a new session when the old one is
 * gone (the child exited, or the HTTP server answered 404 for a session it forgot).
 */
export class McpConnectionImpl {
  readonly #server: McpServer
  readonly #settings: McpConnectionSettings
  #link: Link | undefined
  #opening: Promise<Link> | undefined
  #tools: Tool[] | undefined
  #stale = true
  /** Bumped by every `tools/list_changed`, so a listing that raced one does not count as fresh. */
  #generation = 0
  #listing: Promise<Tool[]> | undefined
  #closed = false
  #closing: Promise<void> | undefined
  /** A session whose handshake is running: `close()` ends it instead of waiting for it. */
  #handshaking: Link | undefined
  /** Sessions being ended (a child given its two seconds to exit): `close()` waits for them. */
  readonly #ending = new Set<Promise<void>>()
  /** Aborted by `close()`: calls still running end at once. */
  readonly #closeController = new AbortController()

  constructor(server: McpServer, settings: McpConnectionSettings) {
    this.#server = server
    this.#settings = settings
  }

  async tools(): Promise<Tool[]> {
    for (let attempt = 0; ; attempt++) {
      const link = await this.#ready(undefined)
      if (this.#tools !== undefined && !this.#stale) return [...this.#tools]
      try {
        this.#listing ??= this.#list(link).finally(() => {
          this.#listing = undefined
        })
        return [...(await this.#listing)]
      } catch (error) {
        if (this.#closed) throw this.#closedError()
        if (attempt === 0 && this.#sessionForgotten(link, error)) continue
        throw mapMcpError(error, this.#context(link, 'list', undefined, error))
      }
    }
  }

  close(): Promise<void> {
    this.#closed = true
    this.#closeController.abort()
    this.#closing ??= (async () => {
      // A handshake still running is cut short (the child ended, the HTTP request aborted), not
      // waited for: a server that never answers would hold `close()` for the whole `timeoutMs`.
      const handshaking = this.#handshaking
      if (handshaking) await this.#shut(handshaking, false)
      const link = this.#link ?? (await this.#opening?.catch(() => undefined))
      this.#link = undefined
      if (link) await this.#shut(link, true)
      // Sessions that failed or were dropped earlier may still be ending their child.
      await Promise.all(this.#ending)
    })()
    return this.#closing
  }

  // --- sessions ------------------------------------------------------------------------------------

  /** The live session, opening one if needed (one opening shared by concurrent callers). */
  async #ready(signal: AbortSignal | undefined): Promise<Link> {
    if (this.#closed) throw this.#closedError()
    if (this.#link?.alive) return this.#link
    this.#opening ??= this.#open().finally(() => {
      this.#opening = undefined
    })
    return signal ? raceAbort(this.#opening, signal) : this.#opening
  }

  async #open(): Promise<Link> {
    const link = this.#createLink()
    this.#handshaking = link
    try {
      await link.client.connect(link.transport, { timeout: this.#settings.timeoutMs })
    } catch (error) {
      // Ended in the background: the caller hears of the failure now, and `close()` waits for the
      // child (a server that ignores the end of stdin takes two seconds to get SIGTERM).
      void this.#shut(link, false)
      if (this.#closed) throw this.#closedError()
      throw mapMcpError(error, this.#context(link, 'connect', undefined, error))
    } finally {
      this.#handshaking = undefined
    }
    if (this.#closed) {
      await this.#shut(link, true)
      throw this.#closedError()
    }
    if (link.http) this.#trackResumed(link)
    this.#link = link
    this.#stale = true
    return link
  }

  #createLink(): Link {
    const client = new Client({ name: '@agentx/mcp', version }, { capabilities: {} })
    const server = this.#server
    let link: Link
    if ('url' in server) {
      const http = new StreamableHTTPClientTransport(new URL(server.url), {
        ...(server.headers === undefined ? {} : { requestInit: { headers: { ...server.headers } } }),
        fetch: watchResponseStreams((ids, resumable) => this.#lost(link, ids, resumable)),
      })
      link = { client, transport: http, http, alive: true, stderr: undefined, resuming: new Set() }
    } else {
      const stdio = new StdioClientTransport({
        command: server.command,
        ...(server.args === undefined ? {} : { args: [...server.args] }),
        ...(server.env === undefined ? {} : { env: { ...server.env } }),
        ...(server.cwd === undefined ? {} : { cwd: server.cwd }),
        stderr: 'pipe',
      })
      // The SDK ends the child (stdin closed, then SIGTERM, then SIGKILL) in its first `close()`
      // only; a later call returns at once. It makes that first call itself when the handshake
      // fails, so every call shares it: whoever waits for the close waits for the child.
      const end = stdio.close.bind(stdio)
      let ending: Promise<void> | undefined
      stdio.close = () => {
        ending ??= end()
        return ending
      }
      const tail = { text: '' }
      const decoder = new StringDecoder('utf8')
      const { onStderr } = server
      // Always read it: an unread pipe would block the child once its buffer is full.
      stdio.stderr?.on('data', (chunk: Buffer | string) => {
        const text = typeof chunk === 'string' ? chunk : decoder.write(chunk)
        if (text === '') return
        tail.text = (tail.text + text).slice(-STDERR_TAIL)
        try {
          onStderr?.(text)
        } catch {
          // A throwing log sink must not break the connection.
        }
      })
      link = { client, transport: stdio, http: undefined, alive: true, stderr: tail, resuming: new Set() }
    }
    client.onclose = () => {
      link.alive = false
      if (this.#link === link) {
        this.#link = undefined
        this.#stale = true
      }
    }
    client.onerror = (error) => {
      this.#settings.logger?.debug('agentx/mcp: transport error', {
        server: this.#settings.label,
        error: this.#logged(error),
      })
    }
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.#toolsChanged())
    return link
  }

  /** Ends a session: the HTTP session is terminated first when `terminate` (best effort, bounded). */
  #shut(link: Link, terminate: boolean): Promise<void> {
    link.alive = false
    const ending = (async () => {
      if (terminate && link.http?.sessionId !== undefined) {
        await Promise.race([
          link.http.terminateSession().catch(() => undefined),
          new Promise((resolve) => setTimeout(resolve, TERMINATE_TIMEOUT_MS).unref()),
        ])
      }
      await link.client.close().catch(() => undefined)
    })()
    this.#ending.add(ending)
    void ending.finally(() => this.#ending.delete(ending))
    return ending
  }

  /** Drops a session the server no longer knows, so the next use opens a new one. */
  #drop(link: Link): void {
    if (this.#link === link) {
      this.#link = undefined
      this.#stale = true
    }
    void this.#shut(link, false)
  }

  /** Whether the HTTP server answered 404 for our session id: it forgot us (restarted); open anew. */
  #sessionForgotten(link: Link, error: unknown): boolean {
    if (!(error instanceof StreamableHTTPError) || error.code !== 404 || link.http === undefined) return false
    this.#drop(link)
    return true
  }

  // --- lost response streams (HTTP) ----------------------------------------------------------------

  /**
   * A POST's response stream ended without answering `ids`. Unless the server can resume it (it
   * sent event ids; the SDK then reconnects), those requests fail now instead of at their timeout.
   */
  #lost(link: Link, ids: RequestId[], resumable: boolean): void {
    if (!link.alive || this.#closed) return
    if (resumable) {
      for (const id of ids) link.resuming.add(id)
      return
    }
    this.#fail(
      link,
      ids,
      'the response stream ended before the server answered (it may have crashed or restarted)',
    )
  }

  /** Fails requests by handing the client the error response the server never sent. */
  #fail(link: Link, ids: Iterable<RequestId>, message: string): void {
    const deliver = link.transport.onmessage
    for (const id of ids) {
      link.resuming.delete(id)
      deliver?.({
        jsonrpc: '2.0',
        id,
        error: { code: ErrorCode.ConnectionClosed, message, data: STREAM_LOST },
      })
    }
  }

  /**
   * For resumable streams: answers that arrive on the resumed stream clear the request; when the SDK
   * gives up resuming, the requests still waiting fail.
   */
  #trackResumed(link: Link): void {
    const { transport } = link
    const onmessage = transport.onmessage
    const onerror = transport.onerror
    transport.onmessage = (message, extra) => {
      if (link.resuming.size > 0 && 'id' in message && ('result' in message || 'error' in message)) {
        link.resuming.delete(message.id as RequestId)
      }
      onmessage?.(message, extra)
    }
    transport.onerror = (error) => {
      onerror?.(error)
      if (link.resuming.size > 0 && /Maximum reconnection attempts/i.test(error.message)) {
        this.#fail(link, [...link.resuming], 'the response stream broke and could not be resumed')
      }
    }
  }

  // --- tools ---------------------------------------------------------------------------------------

  async #list(link: Link): Promise<Tool[]> {
    const generation = this.#generation
    const definitions: McpToolDefinition[] = []
    let cursor: string | undefined
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await link.client.listTools(cursor === undefined ? undefined : { cursor }, {
        timeout: this.#settings.timeoutMs,
      })
      definitions.push(...result.tools)
      if (result.nextCursor === undefined || result.nextCursor === cursor) break
      cursor = result.nextCursor
    }
    const names = toToolNames(
      definitions.map((definition) => definition.name),
      this.#settings.namePrefix,
    )
    const tools = definitions.map((definition, index) => this.#toTool(definition, names[index]!))
    if (generation === this.#generation && this.#link === link) {
      this.#tools = tools
      this.#stale = false
    }
    return tools
  }

  #toTool(definition: McpToolDefinition, name: string): Tool {
    const mcpName = definition.name
    return {
      name,
      description: definition.description ?? definition.title ?? '',
      inputSchema: definition.inputSchema,
      execute: (input: unknown, context?: ToolContext) => this.#call(mcpName, name, input, context),
    }
  }

  #toolsChanged(): void {
    this.#generation++
    this.#stale = true
    const listener = this.#settings.onToolsChanged
    if (!listener || this.#tools === undefined) return
    this.tools().then(
      (tools) => {
        try {
          listener(tools)
        } catch (error) {
          this.#settings.logger?.warn('agentx/mcp: onToolsChanged threw', { error: this.#logged(error) })
        }
      },
      (error: unknown) => {
        this.#settings.logger?.warn('agentx/mcp: could not refresh the tool list', {
          server: this.#settings.label,
          error: this.#logged(error),
        })
      },
    )
  }

  async #call(
    mcpName: string,
    name: string,
    input: unknown,
    context: ToolContext | undefined,
  ): Promise<ContentBlock[]> {
    const args = input ?? {}
    if (typeof args !== 'object' || Array.isArray(args)) {
      throw new McpClientError(`The MCP tool "${name}" takes a JSON object as input.`, 'MCP_INVALID_INPUT')
    }
    const signal = context?.signal
    // The send's abort, or `close()`: either ends the call at once (and cancels it on the server).
    const ended =
      signal === undefined
        ? this.#closeController.signal
        : AbortSignal.any([signal, this.#closeController.signal])
    for (let attempt = 0; ; attempt++) {
      signal?.throwIfAborted()
      const link = await this.#ready(ended)
      try {
        const result = await link.client.callTool(
          { name: mcpName, arguments: args as Record<string, unknown> },
          undefined,
          {
            signal: ended,
            timeout: this.#settings.timeoutMs,
            resetTimeoutOnProgress: true,
            onprogress: () => undefined,
          },
        )
        return mapMcpResult(result, name)
      } catch (error) {
        // The tool's own error (`isError`) is passed on, its text redacted like every message.
        if (isMcpClientError(error)) throw mapMcpError(error, this.#context(link, 'call', name))
        if (signal?.aborted) throw signal.reason ?? error
        if (this.#closed) throw this.#closedError()
        if (attempt === 0 && this.#sessionForgotten(link, error)) continue
        throw mapMcpError(error, this.#context(link, 'call', name, error))
      }
    }
  }

  // --- errors --------------------------------------------------------------------------------------

  #context(
    link: Link,
    operation: 'connect' | 'list' | 'call',
    tool?: string,
    error?: unknown,
  ): McpErrorContext {
    const stderr = link.stderr?.text.trim()
    const lostStream = (error as { data?: unknown } | undefined)?.data === STREAM_LOST
    const cwd = 'cwd' in this.#server ? this.#server.cwd : undefined
    return {
      server: this.#settings.label,
      operation,
      secrets: this.#settings.secrets,
      // The SDK closes the link before it fails the requests that were waiting on it.
      connectionLost: !link.alive || lostStream,
      ...(tool === undefined ? {} : { tool }),
      ...(stderr ? { stderr } : {}),
      ...(cwd === undefined ? {} : { cwd }),
    }
  }

  /** An error as a log line, its secrets redacted. */
  #logged(error: unknown): string {
    return redactSecrets(error instanceof Error ? error.message : String(error), this.#settings.secrets)
  }

  #closedError(): McpClientError {
    return new McpClientError(
      `The connection to MCP server "${this.#settings.label}" is closed.`,
      'MCP_CLOSED',
    )
  }
}

/** A tool as `tools/list` describes it (the fields used). */
interface McpToolDefinition {
  name: string
  title?: string | undefined
  description?: string | undefined
  inputSchema: Record<string, unknown>
}
