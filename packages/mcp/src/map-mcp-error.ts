import { existsSync } from 'node:fs'
import { redactSecrets, sanitizeCause } from '@agentx/core/provider'
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { McpClientError, isMcpClientError } from './mcp-client-error.js'

/** Where an error happened, for a message that says what to do. */
export interface McpErrorContext {
  /** The server's label (`name`, or the command / URL). */
  server: string
  /** `connect`: starting the server or the handshake; `list`: `tools/list`; `call`: a tool call. */
  operation: 'connect' | 'list' | 'call'
  /** The tool being called. */
  tool?: string
  /** The tail of the server's stderr (stdio servers), to show why it died. */
  stderr?: string
  /** Strings to redact from the message (header values, query parameters, env values). */
  secrets?: readonly string[]
  /**
   * Whether the connection was gone when the request failed. `false` makes a `ConnectionClosed`
   * code the server's own answer (`MCP_REQUEST_FAILED`). Default: unknown (taken as gone).
   */
  connectionLost?: boolean
  /** The stdio server's working directory, to tell a missing one from a missing command. */
  cwd?: string
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
])

/**
 * Turns whatever the SDK, the child process or `fetch` threw into an {@link McpClientError} whose
 * message says what failed and never contains a secret of the configuration.
 */
export function mapMcpError(error: unknown, context: McpErrorContext): McpClientError {
  if (isMcpClientError(error)) return redactError(error, context.secrets ?? [])
  return redactError(classify(error, context), context.secrets ?? [])
}

/**
 * The error itself, or a copy with its secrets redacted by the adapters' own helpers: from the
 * message, and — when the cause quotes one — a sanitized copy of the cause instead of the original.
 */
function redactError(error: McpClientError, secrets: readonly string[]): McpClientError {
  const message = redactSecrets(error.message, secrets)
  const cause = error.cause
  const causeText = cause instanceof Error ? `${cause.message}\n${cause.stack ?? ''}` : ''
  const causeLeaks = causeText !== '' && redactSecrets(causeText, secrets) !== causeText
  if (message === error.message && !causeLeaks) return error
  return new McpClientError(message, error.code, {
    cause: causeLeaks ? sanitizeCause(cause, secrets) : cause,
  })
}

function classify(error: unknown, context: McpErrorContext): McpClientError {
  const what =
    context.tool === undefined
      ? `MCP server "${context.server}"`
      : `MCP tool "${context.tool}" of server "${context.server}"`
  const stderr = context.stderr ? ` Its last output on stderr: ${JSON.stringify(context.stderr)}` : ''
  const options = { cause: error }

  if (error instanceof McpError) {
    const detail = error.message.replace(/^MCP error -?\d+: /, '')
    // The SDK's own timeout carries `{ timeout }`; a server may answer with the same code itself.
    if (
      error.code === ErrorCode.RequestTimeout &&
      typeof (error.data as { timeout?: unknown })?.timeout === 'number'
    ) {
      return new McpClientError(`${what} did not answer in time (${detail}).`, 'MCP_TIMEOUT', options)
    }
    // The SDK reports a closed connection with this code; a server's own -32000 ("server error",
    // which many servers use) is a refusal like any other.
    if (error.code === ErrorCode.ConnectionClosed && context.connectionLost !== false) {
      return context.operation === 'connect'
        ? new McpClientError(
            `${what} closed the connection during the MCP handshake: ${detail}.${stderr}`,
            'MCP_CONNECT_FAILED',
            options,
          )
        : new McpClientError(
            `${what} went away before it answered: ${detail}.${stderr}`,
            'MCP_CONNECTION_LOST',
            options,
          )
    }
    // A handshake the server answered with an error is a failed connection, not a failed call.
    return new McpClientError(
      `${what} failed: ${detail}`,
      context.operation === 'connect' ? 'MCP_CONNECT_FAILED' : 'MCP_REQUEST_FAILED',
      options,
    )
  }

  if (error instanceof StreamableHTTPError) {
    const status = error.code
    const detail = error.message.replace(/^Streamable HTTP error: /, '')
    if (status === 401 || status === 403) {
      return new McpClientError(
        `${what} refused the request with HTTP ${status}; check the headers (e.g. Authorization). ${detail}`,
        context.operation === 'connect' ? 'MCP_CONNECT_FAILED' : 'MCP_REQUEST_FAILED',
        options,
      )
    }
    const code =
      context.operation === 'connect'
        ? 'MCP_CONNECT_FAILED'
        : status !== undefined && status >= 500
          ? 'MCP_CONNECTION_LOST'
          : 'MCP_REQUEST_FAILED'
    // The SDK reports a response it cannot read (a wrong content type, say) with code -1: there is
    // no HTTP status to name then.
    const answered =
      status !== undefined && status >= 100 ? `answered HTTP ${status}` : 'gave an unusable answer'
    return new McpClientError(`${what} ${answered}: ${detail}`, code, options)
  }

  const systemCode = systemErrorCode(error)
  if (context.operation === 'connect') {
    const reason =
      systemCode !== 'ENOENT'
        ? messageOf(error)
        : context.cwd !== undefined && !existsSync(context.cwd)
          ? `its working directory (cwd) was not found (ENOENT)`
          : 'the command was not found (ENOENT)'
    return new McpClientError(
      `Could not start or reach ${what}: ${reason}.${stderr}`,
      'MCP_CONNECT_FAILED',
      options,
    )
  }
  if (systemCode !== undefined && NETWORK_CODES.has(systemCode)) {
    return new McpClientError(
      `${what} could not be reached (${systemCode}).${stderr}`,
      'MCP_CONNECTION_LOST',
      options,
    )
  }
  if (/not connected|connection closed|fetch failed/i.test(messageOf(error))) {
    return new McpClientError(
      `${what} is not reachable: ${messageOf(error)}.${stderr}`,
      'MCP_CONNECTION_LOST',
      options,
    )
  }
  const invalid = schemaIssues(error)
  if (invalid !== undefined) {
    const answer = context.operation === 'list' ? 'its tool list (tools/list)' : 'the call'
    return new McpClientError(
      `${what} answered ${answer} with a response that is not valid MCP: ${invalid}.`,
      'MCP_REQUEST_FAILED',
      options,
    )
  }
  return new McpClientError(`${what} failed: ${messageOf(error)}`, 'MCP_REQUEST_FAILED', options)
}

/**
 * The SDK checks every response against the MCP schema and throws the validator's error (a zod
 * error: `issues`, each with a `path` and a `message`) when it does not fit. Its message is a JSON
 * dump; this says where and what, at most three issues.
 */
function schemaIssues(error: unknown): string | undefined {
  const issues = (error as { issues?: unknown })?.issues
  if (!Array.isArray(issues) || issues.length === 0) return undefined
  const described = issues.slice(0, 3).map((issue: { path?: unknown; message?: unknown }) => {
    const path = Array.isArray(issue.path)
      ? issue.path
          .map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`))
          .join('')
      : ''
    return `${path === '' ? '' : `${path}: `}${String(issue.message)}`
  })
  const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : ''
  return `${described.join('; ')}${more}`
}

/** The `code` of a Node system error, also when it is the `cause` of a `fetch` TypeError. */
function systemErrorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string') return code
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
