import { mkdtempSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigurationError, type ContentBlock, type Tool, type ToolContext } from '@agentx/core'
import { afterEach, describe, expect, it } from 'vitest'
import {
  type HttpTestServer,
  isRunning,
  PIXEL_PNG,
  startHttpServer,
  stdioServer,
  waitFor,
} from '../test/test-servers.js'
import {
  connectMcp,
  type ConnectMcpOptions,
  isMcpClientError,
  type McpConnection,
  type McpServer,
} from './index.js'

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!().catch(() => undefined)
})

function connect(server: McpServer, options?: ConnectMcpOptions): McpConnection {
  const connection = connectMcp(server, options)
  cleanups.push(() => connection.close())
  return connection
}

async function http(options?: { resumable?: boolean; port?: number }): Promise<HttpTestServer> {
  const server = await startHttpServer(options)
  cleanups.push(() => server.kill())
  return server
}

function context(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { sessionId: 's1', toolCallId: 'c1', signal, messages: [] }
}

async function tool(connection: McpConnection, name: string): Promise<Tool> {
  const found = (await connection.tools()).find((candidate) => candidate.name === name)
  if (!found) throw new Error(`no tool ${name}`)
  return found
}

async function call(connection: McpConnection, name: string, input: unknown = {}, signal?: AbortSignal) {
  return (await tool(connection, name)).execute!(input, context(signal)) as Promise<ContentBlock[]>
}

async function failure(promise: unknown): Promise<{ code: string; message: string; retryable: boolean }> {
  try {
    await promise
  } catch (error) {
    if (!isMcpClientError(error)) throw error
    return { code: error.code, message: error.message, retryable: error.retryable }
  }
  throw new Error('expected a rejection')
}

async function status(connection: McpConnection): Promise<{ cancelled: number; calls: number }> {
  const [block] = await call(connection, 'status')
  return JSON.parse((block as { text: string }).text)
}

const transports = [
  ['stdio', async (): Promise<McpServer> => stdioServer()],
  ['streamable HTTP', async (): Promise<McpServer> => ({ url: (await http()).url })],
] as const

describe.each(transports)('over %s', (_kind, serve) => {
  it('lists the server’s tools with their JSON Schema, prefixed and with provider-safe names', async () => {
    const connection = connect(await serve(), { namePrefix: 'test_' })
    const tools = await connection.tools()
    expect(tools.map((each) => each.name)).toEqual([
      'test_echo',
      'test_add',
      'test_fail',
      'test_throws',
      'test_slow',
      'test_image',
      'test_mixed',
      'test_die',
      'test_add_tool',
      'test_status',
      'test_whoami',
      'test_quota',
      'test_quote_credential',
      'test_dotted_name_with_spaces',
    ])
    const echo = tools[0]!
    expect(echo.description).toBe('Returns its text.')
    expect(echo.inputSchema).toEqual({
      type: 'object',
      properties: { text: { type: 'string', description: 'What to echo.' } },
      required: ['text'],
      additionalProperties: false,
    })
    // The sanitized name still calls the original MCP tool.
    expect(await tools[13]!.execute!({}, context())).toEqual([{ type: 'text', text: 'dotted works' }])
  })

  it('maps results to content blocks: text, images, structured content and the rest', async () => {
    const connection = connect(await serve())
    expect(await call(connection, 'echo', { text: 'héllo 👋' })).toEqual([{ type: 'text', text: 'héllo 👋' }])
    expect(await call(connection, 'add', { a: 2, b: 3 })).toEqual([{ type: 'text', text: '{"sum":5}' }])
    expect(await call(connection, 'image')).toEqual([
      { type: 'image', mediaType: 'image/png', data: PIXEL_PNG },
      { type: 'text', text: 'a single pixel' },
    ])
    expect(await call(connection, 'mixed')).toEqual([
      { type: 'text', text: '[audio (audio/wav) not shown]' },
      { type: 'text', text: 'note text' },
      { type: 'image', mediaType: 'image/png', data: PIXEL_PNG },
      { type: 'text', text: '[resource big.csv at file:///big.csv: A large table]' },
    ])
  })

  it('turns a tool error result and a failing handler into errors the kernel records as isError', async () => {
    const connection = connect(await serve())
    expect(await failure(call(connection, 'fail'))).toEqual({
      code: 'MCP_TOOL_ERROR',
      message: 'The file does not exist.',
      retryable: false,
    })
    const thrown = await failure(call(connection, 'throws'))
    expect(thrown.code).toBe('MCP_REQUEST_FAILED')
    expect(thrown.message).toContain('handler exploded')
    expect(thrown.message).toContain('"throws"')
    // The connection is still usable.
    expect(await call(connection, 'echo', { text: 'still fine' })).toEqual([
      { type: 'text', text: 'still fine' },
    ])
  })

  it('cancels the MCP request when the send is aborted', async () => {
    const connection = connect(await serve())
    const slowTool = await tool(connection, 'slow')
    const before = (await status(connection)).calls
    const controller = new AbortController()
    const reason = new Error('send aborted')
    const slow = slowTool.execute!({ ms: 10_000 }, context(controller.signal))
    // Wait until the server runs it (the status call itself counts too).
    for (let seen = before; seen < before + 2; ) seen = (await status(connection)).calls
    const started = Date.now()
    controller.abort(reason)
    await expect(slow).rejects.toBe(reason)
    expect(Date.now() - started).toBeLessThan(1000)
    // The server was told (notifications/cancelled) and stopped the work.
    let seen = await status(connection)
    for (let i = 0; i < 50 && seen.cancelled === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      seen = await status(connection)
    }
    expect(seen.cancelled).toBe(1)
    // A signal aborted before the call never reaches the server.
    const calls = seen.calls
    await expect(call(connection, 'echo', { text: 'x' }, AbortSignal.abort(reason))).rejects.toBe(reason)
    expect((await status(connection)).calls).toBe(calls + 1)
  })

  it('fails a call after timeoutMs with MCP_TIMEOUT', async () => {
    const connection = connect(await serve(), { timeoutMs: 2000 })
    const slow = await tool(connection, 'slow')
    const started = Date.now()
    const error = await failure(slow.execute!({ ms: 20_000 }, context()))
    expect(error.code).toBe('MCP_TIMEOUT')
    expect(error.retryable).toBe(true)
    expect(error.message).toContain('did not answer in time')
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900)
    expect(Date.now() - started).toBeLessThan(8000)
  })

  it('refreshes the cached list on tools/list_changed', async () => {
    const changes: string[][] = []
    const connection = connect(await serve(), {
      onToolsChanged: (tools) => changes.push(tools.map((each) => each.name)),
    })
    const before = await connection.tools()
    expect(before.map((each) => each.name)).not.toContain('extra')
    expect(await connection.tools()).toEqual(before)
    await call(connection, 'add_tool')
    await waitFor(() => changes.length > 0)
    expect(changes[0]).toContain('extra')
    const after = await connection.tools()
    expect(after.map((each) => each.name)).toContain('extra')
    expect(await call(connection, 'extra')).toEqual([{ type: 'text', text: 'extra works' }])
  })

  it("classifies a server's own -32000 error as a refused call, and the connection stays", async () => {
    const connection = connect(await serve())
    // Before, MCP_CONNECTION_LOST "went away before it answered", retryable.
    expect(await failure(call(connection, 'quota'))).toEqual({
      code: 'MCP_REQUEST_FAILED',
      message: expect.stringContaining('Quota exceeded for today'),
      retryable: false,
    })
    expect(await call(connection, 'echo', { text: 'still fine' })).toEqual([
      { type: 'text', text: 'still fine' },
    ])
  })

  it('rejects every use after close() with MCP_CLOSED, also a call in flight', async () => {
    const connection = connect(await serve())
    await connection.tools()
    const slow = failure(call(connection, 'slow', { ms: 10_000 }))
    await new Promise((resolve) => setTimeout(resolve, 100))
    const closing = connection.close()
    expect(connection.close()).toBe(closing)
    // The call in flight rejects at once, not when the connection is down.
    expect((await slow).code).toBe('MCP_CLOSED')
    await closing
    expect((await failure(connection.tools())).code).toBe('MCP_CLOSED')
  })
})

describe('stdio servers', () => {
  it('passes env and cwd to the child, and not the rest of process.env', async () => {
    const directory = realpathSync(mkdtempSync(join(tmpdir(), 'agentx-mcp-')))
    process.env.AGENTX_LEAK_CHECK = 'leaked'
    const connection = connect(stdioServer({ env: { AGENTX_TEST_VALUE: 'from-env' }, cwd: directory }))
    const [block] = await call(connection, 'whoami')
    delete process.env.AGENTX_LEAK_CHECK
    const who = JSON.parse((block as { text: string }).text)
    expect(who.env).toBe('from-env')
    expect(who.leak).toBeNull()
    expect(who.cwd).toBe(directory)
  })

  it('close() during a handshake the server never answers ends the child at once, not after timeoutMs', async () => {
    // A program that reads stdin and never answers: the handshake would wait the whole timeoutMs.
    const connection = connectMcp(
      { command: process.execPath, args: ['-e', 'process.stdin.resume(); setInterval(() => {}, 1000)'] },
      { timeoutMs: 600_000 },
    )
    const listing = failure(connection.tools())
    await new Promise((resolve) => setTimeout(resolve, 300))
    // Before, close() waited for the handshake's timeout (600 s here; the test's own limit fails it).
    await connection.close()
    expect((await listing).code).toBe('MCP_CLOSED')
  })

  it('close() waits for the children of failed handshakes to end, even a child that ignores the end of stdin', async () => {
    // Never answers the handshake, and stays alive when stdin ends: only SIGTERM ends it.
    const pids: number[] = []
    const connection = connectMcp(
      {
        command: process.execPath,
        args: [
          '-e',
          'process.stderr.write(process.pid + "\\n"); process.stdin.resume(); setInterval(() => {}, 1000)',
        ],
        onStderr: (text) => pids.push(...text.split('\n').filter(Boolean).map(Number)),
      },
      { timeoutMs: 300 },
    )
    expect((await failure(connection.tools())).code).toBe('MCP_TIMEOUT')
    expect((await failure(connection.tools())).code).toBe('MCP_TIMEOUT')
    await waitFor(() => pids.length === 2)
    // Before, close() resolved at once and the children got SIGTERM later, on unref'd timers: an
    // app exiting after `await close()` left them running for good.
    await connection.close()
    expect(pids.filter(isRunning)).toEqual([])
  })

  it('says where a tool list breaks the MCP schema, instead of dumping the validator output', async () => {
    const connection = connect(stdioServer({ env: { AGENTX_TEST_BAD_SCHEMA: '1' } }))
    const error = await failure(connection.tools())
    expect(error.code).toBe('MCP_REQUEST_FAILED')
    expect(error.message).toMatch(
      /^MCP server ".+" answered its tool list \(tools\/list\) with a response that is not valid MCP: tools\[14\]\.inputSchema\.required: .+\.$/,
    )
    expect(error.message).not.toContain('"code"')
  })

  it('a stdio tool error quoting an env value is redacted like every other message', async () => {
    const connection = connect(stdioServer({ env: { AGENTX_TEST_VALUE: 'env-secret-42' } }))
    for (const how of ['result', 'throw']) {
      const error = await failure(call(connection, 'quote_credential', { how }))
      expect(error.message).toContain('invalid token [redacted]')
      expect(error.message).not.toContain('env-secret-42')
    }
  })

  it('says a missing working directory, not a missing command', async () => {
    const connection = connect(stdioServer({ cwd: join(tmpdir(), 'agentx-no-such-directory-7f3a') }))
    const error = await failure(connection.tools())
    expect(error.code).toBe('MCP_CONNECT_FAILED')
    expect(error.message).toContain('working directory (cwd) was not found')
  })

  it('ends the child process on close()', async () => {
    const connection = connect(stdioServer())
    const [block] = await call(connection, 'whoami')
    const { pid } = JSON.parse((block as { text: string }).text) as { pid: number }
    expect(isRunning(pid)).toBe(true)
    await connection.close()
    await waitFor(() => !isRunning(pid))
  })

  it('fails a call clearly, without hanging, when the server dies mid-call — and starts it again next time', async () => {
    const stderr: string[] = []
    const connection = connect(stdioServer({ onStderr: (text) => stderr.push(text) }))
    const [block] = await call(connection, 'whoami')
    const { pid } = JSON.parse((block as { text: string }).text) as { pid: number }
    const started = Date.now()
    const error = await failure(call(connection, 'die'))
    expect(Date.now() - started).toBeLessThan(5000)
    expect(error.code).toBe('MCP_CONNECTION_LOST')
    expect(error.retryable).toBe(true)
    expect(error.message).toContain(
      'MCP tool "die" of server "node stdio-server.mjs" went away before it answered',
    )
    expect(error.message).toContain('fatal: the test server is going down')
    expect(stderr.join('')).toContain('stdio test server ready')
    await waitFor(() => !isRunning(pid))
    const [again] = await call(connection, 'whoami')
    const restarted = JSON.parse((again as { text: string }).text) as { pid: number }
    expect(restarted.pid).not.toBe(pid)
  })

  it('says which command could not be started', async () => {
    const connection = connect({ command: 'agentx-no-such-command-7f3a' })
    const error = await failure(connection.tools())
    expect(error.code).toBe('MCP_CONNECT_FAILED')
    expect(error.message).toContain('agentx-no-such-command-7f3a')
    expect(error.message).toContain('not found')
  })

  it('fails the handshake of a program that is not an MCP server', async () => {
    const connection = connect({
      command: process.execPath,
      args: ['-e', 'process.stderr.write("not mcp\\n")'],
    })
    const error = await failure(connection.tools())
    expect(error.code).toBe('MCP_CONNECT_FAILED')
    expect(error.message).toContain('not mcp')
  })
})

describe('streamable HTTP servers', () => {
  it('sends the configured headers', async () => {
    const server = await http()
    const connection = connect({ url: server.url, headers: { 'x-test-header': 'sent' } })
    const [block] = await call(connection, 'whoami')
    expect(JSON.parse((block as { text: string }).text).header).toBe('sent')
  })

  it('fails a call at once when the server dies mid-call, then reconnects after it restarts', async () => {
    const server = await http()
    const connection = connect({ url: server.url })
    await connection.tools()
    const started = Date.now()
    const error = await failure(call(connection, 'die'))
    expect(Date.now() - started).toBeLessThan(5000)
    expect(error.code).toBe('MCP_CONNECTION_LOST')
    expect(error.message).toContain('"die"')
    expect(error.message).toContain('response stream ended before the server answered')
    await server.kill()
    // Down: a clear error, no hang.
    const down = await failure(call(connection, 'echo', { text: 'x' }))
    expect(down.code).toBe('MCP_CONNECTION_LOST')
    // Back on the same port, without our session: a new session is opened and the call goes through.
    await http({ port: server.port })
    expect(await call(connection, 'echo', { text: 'back' })).toEqual([{ type: 'text', text: 'back' }])
  })

  it('fails a call on a resumable stream once the SDK gives up resuming it', async () => {
    const server = await http({ resumable: true })
    const connection = connect({ url: server.url })
    await connection.tools()
    const started = Date.now()
    const error = await failure(call(connection, 'die'))
    // The SDK tries to resume twice (about 1 s and 1.5 s apart) before giving up; far below the timeout.
    expect(Date.now() - started).toBeLessThan(15_000)
    expect(error.code).toBe('MCP_CONNECTION_LOST')
    expect(error.message).toContain('could not be resumed')
  })

  it('says when the server cannot be reached', async () => {
    const server = await http()
    await server.kill()
    const connection = connect({ url: server.url })
    const error = await failure(connection.tools())
    expect(error.code).toBe('MCP_CONNECT_FAILED')
    expect(error.message).toContain(`http://127.0.0.1:${server.port}/mcp`)
  })
})

describe('connectMcp options', () => {
  it.each([
    [undefined, /command.*url/],
    [{}, /command.*url/],
    [{ command: 'x', url: 'http://127.0.0.1/' }, /not both/],
    [{ command: '' }, /command/],
    [{ command: 'x', args: 'a b' }, /args/],
    [{ command: 'x', env: { A: 1 } }, /env/],
    [{ url: 'not a url' }, /valid URL/],
    [{ url: 'ftp://127.0.0.1/' }, /http/],
    [{ url: 'http://127.0.0.1/', headers: { a: 1 } }, /headers/],
    // A misspelled key would drop what it carries without a word (here: the Authorization header).
    [
      { url: 'http://127.0.0.1/', header: { Authorization: 'x' } },
      "option 'header' — did you mean 'headers'?",
    ],
    [
      { command: 'x', arg: ['server.js'] },
      "Unknown connectMcp stdio server option 'arg' — did you mean 'args'?",
    ],
  ])('rejects the server %j', (server, message) => {
    expect(() => connectMcp(server as never)).toThrow(ConfigurationError)
    expect(() => connectMcp(server as never)).toThrow(message)
  })

  it.each([
    [{ timeoutMs: 0 }, /timeoutMs/],
    [{ namePrefix: 3 }, /namePrefix/],
    [{ onToolsChanged: 'no' }, /onToolsChanged/],
    [{ timeoutMS: 100 }, "Unknown connectMcp option 'timeoutMS' — did you mean 'timeoutMs'?"],
    [{ prefix: 'fs_' }, "Unknown connectMcp option 'prefix'"],
    [null, 'connectMcp options must be an object, got null.'],
  ])('rejects the options %j', (options, message) => {
    expect(() => connectMcp(stdioServer(), options as never)).toThrow(message)
  })

  it('does no I/O until first used, and is not a thenable', async () => {
    const connection = connectMcp({ command: 'agentx-no-such-command-7f3a' })
    expect('then' in connection).toBe(false)
    await connection.close()
    expect((await failure(connection.tools())).code).toBe('MCP_CLOSED')
  })

  it('rejects input that is not an object before calling the server', async () => {
    const connection = connect(stdioServer())
    const echo = await tool(connection, 'echo')
    const error = await failure(echo.execute!([1, 2], context()))
    expect(error.code).toBe('MCP_INVALID_INPUT')
  })

  it('never lets the token of an Authorization header out, also when the server quotes it alone', async () => {
    const server = await http()
    const logged: string[] = []
    const log = (_message: string, fields?: Record<string, unknown>) => logged.push(JSON.stringify(fields))
    const connection = connect(
      // A token read from a file keeps its newline; fetch sends it trimmed.
      { url: server.url, headers: { authorization: 'Bearer sk-live-0123456789\n' } },
      { logger: { debug: log, info: log, warn: log, error: log } },
    )
    for (const how of ['result', 'throw']) {
      const error = await failure(call(connection, 'quote_credential', { how }))
      // Before, the stored tool result (and so the next prompt) held the raw token.
      expect(error.message).toContain('invalid token [redacted]')
      expect(error.message).not.toContain('0123456789')
    }
    await server.kill()
    await failure(call(connection, 'echo', { text: 'x' }))
    expect(logged.join('\n')).not.toContain('0123456789')
  })

  it('refuses credentials in the URL, and never puts query parameters or header values in messages', async () => {
    expect(() => connectMcp({ url: 'http://user:hunter2@127.0.0.1/mcp' })).toThrow(/credentials/)
    const server = await http()
    await server.kill()
    const error = await failure(
      connect({
        url: `${server.url}?token=secret-token`,
        headers: { authorization: 'Bearer secret-header' },
      }).tools(),
    )
    expect(error.code).toBe('MCP_CONNECT_FAILED')
    expect(error.message).not.toContain('secret-token')
    expect(error.message).not.toContain('secret-header')
    // A URL that does not parse is not quoted: its query may hold a token.
    expect(() => connectMcp({ url: 'http://[::1?token=query-secret' })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('query-secret') }),
    )
  })
})
