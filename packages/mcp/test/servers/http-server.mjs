// The test MCP server over streamable HTTP on 127.0.0.1: `node http-server.mjs [port] [--resumable]`.
// Prints `{"port":N}` on stdout once listening.
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import { createToolServer } from './tool-server.mjs'

const port = Number(process.argv.find((arg) => /^\d+$/.test(arg)) ?? 0)
const resumable = process.argv.includes('--resumable')
const transports = new Map()

async function readJson(request) {
  const chunks = []
  for await (const chunk of request) chunks.push(chunk)
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'))
}

const http = createServer(async (request, response) => {
  try {
    const sessionId = request.headers['mcp-session-id']
    const body = request.method === 'POST' ? await readJson(request) : undefined
    let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined
    if (!transport && request.method === 'POST' && isInitializeRequest(body)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        ...(resumable ? { eventStore: new InMemoryEventStore() } : {}),
        onsessioninitialized: (id) => transports.set(id, transport),
      })
      transport.onclose = () => {
        if (transport.sessionId) transports.delete(transport.sessionId)
      }
      await createToolServer().connect(transport)
    }
    if (!transport) {
      response.writeHead(sessionId ? 404 : 400, { 'content-type': 'application/json' })
      response.end(
        JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'No such session' }, id: null }),
      )
      return
    }
    await transport.handleRequest(request, response, body)
  } catch (error) {
    if (!response.headersSent) response.writeHead(500)
    response.end(String(error))
  }
})

http.listen(port, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: http.address().port })}\n`)
})
