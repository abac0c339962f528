import { ConfigurationError, type Logger, rejectUnknownOptions, type Tool } from '@agentx/core'
import { McpConnectionImpl } from './mcp-connection.js'

/** An MCP server started as a child process and spoken to over its stdin/stdout. */
export interface McpStdioServer {
  /** The executable, e.g. `'npx'` or `process.execPath`. */
  command: string
  /** Its arguments. Default is `[]`. */
  args?: string[]
  /**
   * Environment variables of the child, added to the few the SDK passes on by default (`HOME`,
   * `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER`; on Windows their equivalents) — the rest of
   * `process.env`, API keys included, is not inherited. Default is none.
   */
  env?: Record<string, string>
  /** Its working directory. Default is the current one. */
  cwd?: string
  /**
   * Receives the child's stderr as text (its logs). Default is to drop it; the last 4 KB are kept
   * either way and quoted in the error when the server dies.
   */
  onStderr?: (text: string) => void
}

/** An MCP server reached over streamable HTTP. */
export interface McpHttpServer {
  /** The MCP endpoint, e.g. `'https://example.com/mcp'`. */
  url: string | URL
  /** Headers sent with every request, e.g. `{ Authorization: 'Bearer …' }`. Default is none. */
  headers?: Record<string, string>
}

/** Where the server is: {@link McpStdioServer} or {@link McpHttpServer}. */
export type McpServer = McpStdioServer | McpHttpServer

/** Options of {@link connectMcp}. */
export interface ConnectMcpOptions {
  /**
   * Put before every tool name, e.g. `'github_'` makes `create_issue` the AgentX tool
   * `github_create_issue` (to tell several servers' tools apart). Default is `''`.
   */
  namePrefix?: string
  /** The server's name in error messages. Default is the command and its first operand, or the URL. */
  name?: string
  /**
   * How long one request (the handshake, a `tools/list` page, a tool call) may wait for its answer,
   * in ms; progress notifications from the server restart the clock. Default is `60000`.
   */
  timeoutMs?: number
  /** Called with the new tool list after the server announced a change (`tools/list_changed`). */
  onToolsChanged?: (tools: Tool[]) => void
  /** Where diagnostics go (a failed background refresh, transport errors). Default is none. */
  logger?: Logger
}

/** A connection to one MCP server, as {@link connectMcp} returns it. */
export interface McpConnection {
  /**
   * The server's tools as AgentX {@link Tool}s, with the JSON Schema the server gave for their input.
   * The first call starts the server (or opens the HTTP session); the list is cached until the
   * server announces a change (`notifications/tools/list_changed`) or the connection is renewed.
   * Rejects with an {@link McpClientError} when the server cannot be reached.
   */
  tools(): Promise<Tool[]>
  /**
   * Ends the connection: terminates the HTTP session, or ends the child process (stdin closed, then
   * `SIGTERM`, then `SIGKILL`, two seconds apart). Calls still running reject with `MCP_CLOSED`, as
   * does everything afterwards. Calling it again returns the same promise.
   */
  close(): Promise<void>
}

const DEFAULT_TIMEOUT_MS = 60_000

/**
 * Connects AgentX to a Model Context Protocol server (DESIGN §10.8) through the official
 * `@modelcontextprotocol/sdk`: a child process over stdio (`{ command, args?, env?, cwd? }`) or an
 * HTTP endpoint over streamable HTTP (`{ url, headers? }`).
 *
 * Synchronous and free of I/O, like `createAgent`: the server is started or reached on the first
 * `tools()` (or tool call). Each tool's `execute` calls the server and maps its result to content
 * blocks (text, images); a tool error, a refused call or a server that went away throws an
 * {@link McpClientError}, which the kernel records as an `isError` tool result. Aborting the send
 * cancels the MCP request (`notifications/cancelled`). A server that died is started again (stdio)
 * or a session the server forgot is opened again (HTTP, after a 404) on the next use.
 *
 * Bad options throw a `ConfigurationError`.
 */
export function connectMcp(server: McpServer, options: ConnectMcpOptions = {}): McpConnection {
  validateServer(server)
  validateOptions(options)
  const connection = new McpConnectionImpl(server, {
    namePrefix: options.namePrefix ?? '',
    label: options.name ?? labelOf(server),
    secrets: secretsFor(server),
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    onToolsChanged: options.onToolsChanged,
    logger: options.logger,
  })
  return {
    tools: () => connection.tools(),
    close: () => connection.close(),
  }
}

// The keys each object knows (the compiler checks the lists are whole); any other key is refused,
// so a misspelled `header` cannot drop an Authorization header without a word.
const STDIO_KEYS = Object.keys({
  command: true,
  args: true,
  env: true,
  cwd: true,
  onStderr: true,
} satisfies Record<keyof McpStdioServer, true>)
const HTTP_KEYS = Object.keys({ url: true, headers: true } satisfies Record<keyof McpHttpServer, true>)
const OPTION_KEYS = Object.keys({
  namePrefix: true,
  name: true,
  timeoutMs: true,
  onToolsChanged: true,
  logger: true,
} satisfies Record<keyof ConnectMcpOptions, true>)

function validateServer(server: unknown): asserts server is McpServer {
  if (typeof server !== 'object' || server === null) {
    throw new ConfigurationError('connectMcp: pass { command, args?, env?, cwd? } or { url, headers? }.')
  }
  const { command, url } = server as { command?: unknown; url?: unknown }
  if (command !== undefined && url !== undefined) {
    throw new ConfigurationError('connectMcp: pass either `command` (stdio) or `url` (HTTP), not both.')
  }
  if (command !== undefined) {
    rejectUnknownOptions(server, STDIO_KEYS, 'connectMcp stdio server')
    const { args, env, cwd, onStderr } = server as McpStdioServer
    if (typeof command !== 'string' || command === '') {
      throw new ConfigurationError('connectMcp: `command` must be a non-empty string.')
    }
    if (args !== undefined && (!Array.isArray(args) || !args.every((arg) => typeof arg === 'string'))) {
      throw new ConfigurationError('connectMcp: `args` must be an array of strings.')
    }
    if (env !== undefined && !isStringRecord(env)) {
      throw new ConfigurationError('connectMcp: `env` must be an object of string values.')
    }
    if (cwd !== undefined && (typeof cwd !== 'string' || cwd === '')) {
      throw new ConfigurationError('connectMcp: `cwd` must be a non-empty string.')
    }
    if (onStderr !== undefined && typeof onStderr !== 'function') {
      throw new ConfigurationError('connectMcp: `onStderr` must be a function.')
    }
    return
  }
  if (url !== undefined) {
    rejectUnknownOptions(server, HTTP_KEYS, 'connectMcp HTTP server')
    let parsed: URL
    try {
      parsed = new URL(url as string | URL)
    } catch (error) {
      // Not quoted: a URL that does not parse may still carry a token in its query.
      throw new ConfigurationError(
        'connectMcp: `url` is not a valid URL (an absolute http: or https: URL).',
        {
          cause: error,
        },
      )
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new ConfigurationError(`connectMcp: \`url\` must be http: or https:, got ${parsed.protocol}`)
    }
    if (parsed.username !== '' || parsed.password !== '') {
      throw new ConfigurationError(
        'connectMcp: `url` must not contain credentials; pass them in `headers` (e.g. Authorization).',
      )
    }
    const { headers } = server as McpHttpServer
    if (headers !== undefined && !isStringRecord(headers)) {
      throw new ConfigurationError('connectMcp: `headers` must be an object of string values.')
    }
    return
  }
  throw new ConfigurationError(
    'connectMcp: pass `command` (a stdio server) or `url` (a streamable HTTP server).',
  )
}

function validateOptions(options: ConnectMcpOptions): void {
  rejectUnknownOptions(options, OPTION_KEYS, 'connectMcp')
  const { namePrefix, name, timeoutMs, onToolsChanged } = options
  if (namePrefix !== undefined && typeof namePrefix !== 'string') {
    throw new ConfigurationError('connectMcp: `namePrefix` must be a string.')
  }
  if (name !== undefined && (typeof name !== 'string' || name === '')) {
    throw new ConfigurationError('connectMcp: `name` must be a non-empty string.')
  }
  if (timeoutMs !== undefined && (!Number.isFinite(timeoutMs) || timeoutMs <= 0)) {
    throw new ConfigurationError('connectMcp: `timeoutMs` must be a positive number of milliseconds.')
  }
  if (onToolsChanged !== undefined && typeof onToolsChanged !== 'function') {
    throw new ConfigurationError('connectMcp: `onToolsChanged` must be a function.')
  }
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((item) => typeof item === 'string')
  )
}

/**
 * Values that must never appear in an error message or a log: header values, query parameters and
 * `env` values — each whole, trimmed (`fetch` sends a header value trimmed, so a server echoes it
 * so), and each of its words (the credential of `Bearer <token>`, which a server may quote alone).
 */
export function secretsFor(server: McpServer): string[] {
  const values =
    'url' in server
      ? [...new URL(server.url).searchParams.values(), ...Object.values(server.headers ?? {})]
      : Object.values(server.env ?? {})
  const secrets = new Set<string>()
  for (const value of values) {
    secrets.add(value)
    secrets.add(value.trim())
    const words = value.trim().split(/[\s,]+/)
    // The first of several words is a scheme (`Bearer`, `Basic`), not a secret.
    for (const word of words.length > 1 ? words.slice(1) : words) secrets.add(word)
  }
  // Very short values would blank out ordinary words.
  return [...secrets].filter((secret) => secret.length >= 6)
}

function labelOf(server: McpServer): string {
  if ('url' in server) {
    const url = new URL(server.url)
    // Never put credentials from the URL into messages.
    return `${url.origin}${url.pathname}`
  }
  // The command and its first operand (e.g. `node server.mjs`, `npx @scope/server`): never the
  // whole command line, which may carry tokens.
  const operand = (server.args ?? []).find((arg) => !arg.startsWith('-'))
  return [basename(server.command), ...(operand === undefined ? [] : [basename(operand)])].join(' ')
}

function basename(path: string): string {
  return path.split(/[\\/]/).pop() || path
}
