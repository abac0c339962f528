import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { describe, expect, it } from 'vitest'
import { mapMcpError } from './map-mcp-error.js'

describe('mapMcpError', () => {
  const call = { server: 'srv', operation: 'call', tool: 'lookup' } as const

  it('maps JSON-RPC errors by code', () => {
    // The SDK's own timeout carries { timeout }.
    const timeout = mapMcpError(
      new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: 60_000 }),
      call,
    )
    expect([timeout.code, timeout.retryable]).toEqual(['MCP_TIMEOUT', true])
    const closed = mapMcpError(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'), {
      ...call,
      stderr: 'panic: out of memory',
    })
    expect(closed.code).toBe('MCP_CONNECTION_LOST')
    expect(closed.message).toBe(
      'MCP tool "lookup" of server "srv" went away before it answered: Connection closed. Its last output on stderr: "panic: out of memory"',
    )
    const refused = mapMcpError(new McpError(ErrorCode.InvalidParams, 'Unknown tool: lookup'), call)
    expect([refused.code, refused.message]).toEqual([
      'MCP_REQUEST_FAILED',
      'MCP tool "lookup" of server "srv" failed: Unknown tool: lookup',
    ])
    expect(refused.cause).toBeInstanceOf(McpError)
  })

  it("a server's own error with the codes the SDK uses locally (-32000, -32001) is a refusal, not a lost connection", () => {
    // Before, a handler throwing McpError(-32000, 'Quota exceeded') read as "went away", retryable.
    const quota = mapMcpError(new McpError(-32000, 'Quota exceeded for today'), {
      ...call,
      connectionLost: false,
    })
    expect([quota.code, quota.retryable, quota.message]).toEqual([
      'MCP_REQUEST_FAILED',
      false,
      'MCP tool "lookup" of server "srv" failed: Quota exceeded for today',
    ])
    const slow = mapMcpError(new McpError(-32001, 'Upstream timed out'), { ...call, connectionLost: false })
    expect([slow.code, slow.retryable]).toEqual(['MCP_REQUEST_FAILED', false])
    // A handshake the server answers with an error is a failed connection.
    const handshake = mapMcpError(new McpError(ErrorCode.MethodNotFound, 'Method not found'), {
      server: 'srv',
      operation: 'connect',
      connectionLost: false,
    })
    expect(handshake.code).toBe('MCP_CONNECT_FAILED')
  })

  it('redacts the credential of a header value quoted alone, and the cause too', async () => {
    const { secretsFor } = await import('./connect-mcp.js')
    const secrets = secretsFor({
      url: 'http://127.0.0.1:1/mcp?key=QUERYSECRET',
      headers: { authorization: 'Bearer sk-live-SECRET\n' },
    })
    const error = mapMcpError(new Error('invalid token sk-live-SECRET (key QUERYSECRET)'), {
      ...call,
      secrets,
    })
    expect(error.message).toBe(
      'MCP tool "lookup" of server "srv" failed: invalid token [redacted] (key [redacted])',
    )
    expect(JSON.stringify(error.cause, Object.getOwnPropertyNames(error.cause))).not.toContain('SECRET')
  })

  it('maps network failures of a call to MCP_CONNECTION_LOST', () => {
    const fetchFailed = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }),
    })
    const lost = mapMcpError(fetchFailed, call)
    expect([lost.code, lost.message]).toEqual([
      'MCP_CONNECTION_LOST',
      'MCP tool "lookup" of server "srv" could not be reached (ECONNREFUSED).',
    ])
  })

  it('names the HTTP status, and no status for an answer the SDK could not read (its code -1)', () => {
    const connect = { server: 'srv', operation: 'connect' } as const
    const unusable = mapMcpError(new StreamableHTTPError(-1, 'Unexpected content type: text/plain'), connect)
    expect([unusable.code, unusable.message]).toEqual([
      'MCP_CONNECT_FAILED',
      'MCP server "srv" gave an unusable answer: Unexpected content type: text/plain',
    ])
    const failed = mapMcpError(new StreamableHTTPError(502, 'Error POSTing to endpoint: bad gateway'), call)
    expect([failed.code, failed.message]).toEqual([
      'MCP_CONNECTION_LOST',
      'MCP tool "lookup" of server "srv" answered HTTP 502: Error POSTing to endpoint: bad gateway',
    ])
  })

  it('redacts configured secrets from every message', () => {
    const error = mapMcpError(new Error('401 for token abcdef123 at https://h/?k=abcdef123'), {
      ...call,
      secrets: ['abcdef123'],
    })
    expect(error.message).toBe(
      'MCP tool "lookup" of server "srv" failed: 401 for token [redacted] at https://h/?k=[redacted]',
    )
  })
})
