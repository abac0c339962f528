import { AgentError, type AgentErrorOptions, isAgentError } from '@agentx/core'

/**
 * What went wrong talking to an MCP server:
 * - `MCP_CONNECT_FAILED`: the server could not be started or reached, or did not complete the MCP
 *   handshake (retryable);
 * - `MCP_CONNECTION_LOST`: the server went away during a request — the process exited, the HTTP
 *   response stream broke, or the server could not be reached any more (retryable);
 * - `MCP_TIMEOUT`: no answer within `timeoutMs` (retryable);
 * - `MCP_TOOL_ERROR`: the tool ran and reported an error (`isError: true`); the message is its text;
 * - `MCP_REQUEST_FAILED`: the server refused the request with a JSON-RPC error (unknown tool,
 *   invalid arguments, a handler that threw);
 * - `MCP_INVALID_INPUT`: the input given to the tool is not a JSON object;
 * - `MCP_CLOSED`: the connection was closed with `close()`.
 */
export type McpClientErrorCode =
  | 'MCP_CONNECT_FAILED'
  | 'MCP_CONNECTION_LOST'
  | 'MCP_TIMEOUT'
  | 'MCP_TOOL_ERROR'
  | 'MCP_REQUEST_FAILED'
  | 'MCP_INVALID_INPUT'
  | 'MCP_CLOSED'

const RETRYABLE: ReadonlySet<McpClientErrorCode> = new Set([
  'MCP_CONNECT_FAILED',
  'MCP_CONNECTION_LOST',
  'MCP_TIMEOUT',
])

/**
 * An error of `@agentx/mcp`. Thrown by `tools()` and by a tool's `execute` — where the kernel turns
 * it into a tool result with `isError: true` carrying this message, so the model sees what failed.
 * SDK errors never reach callers; the original is the `cause`.
 */
export class McpClientError extends AgentError {
  override name = 'McpClientError'
  declare readonly code: McpClientErrorCode

  constructor(message: string, code: McpClientErrorCode, options: Omit<AgentErrorOptions, 'retryable'> = {}) {
    super(message, code, { ...options, retryable: RETRYABLE.has(code) })
  }
}

/** Whether `value` is an {@link McpClientError}, from this or any other copy of the package. */
export function isMcpClientError(value: unknown): value is McpClientError {
  return isAgentError(value) && typeof value.code === 'string' && value.code.startsWith('MCP_')
}
