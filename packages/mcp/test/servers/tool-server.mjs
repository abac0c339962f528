// A real MCP server built with the official SDK, served over stdio (stdio-server.mjs) or streamable
// HTTP (http-server.mjs) by the tests. Its tools cover what a client must handle.
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js'

/** A 1×1 PNG. */
export const PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII='

/** What survives across sessions of one server process. */
const state = { cancelled: 0, calls: 0 }

const BASE_TOOLS = [
  {
    name: 'echo',
    title: 'Echo',
    description: 'Returns its text.',
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string', description: 'What to echo.' } },
      required: ['text'],
      additionalProperties: false,
    },
  },
  {
    name: 'add',
    description: 'Adds two numbers.',
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
    outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
  },
  { name: 'fail', description: 'Returns an error result.', inputSchema: { type: 'object' } },
  { name: 'throws', description: 'Its handler throws.', inputSchema: { type: 'object' } },
  {
    name: 'slow',
    description: 'Waits, honouring cancellation.',
    inputSchema: { type: 'object', properties: { ms: { type: 'number' } } },
  },
  { name: 'image', description: 'Returns an image and a caption.', inputSchema: { type: 'object' } },
  { name: 'mixed', description: 'Returns every kind of content.', inputSchema: { type: 'object' } },
  { name: 'die', description: 'Kills the server while answering.', inputSchema: { type: 'object' } },
  { name: 'add_tool', description: 'Adds the tool "extra" and says so.', inputSchema: { type: 'object' } },
  { name: 'status', description: 'Counters of this server process.', inputSchema: { type: 'object' } },
  { name: 'whoami', description: 'Pid, cwd, env and request headers.', inputSchema: { type: 'object' } },
  { name: 'quota', description: 'Refuses with JSON-RPC code -32000.', inputSchema: { type: 'object' } },
  {
    name: 'quote_credential',
    description: 'Fails quoting its credential (the Authorization token, or AGENTX_TEST_VALUE).',
    inputSchema: { type: 'object', properties: { how: { type: 'string' } } },
  },
  {
    name: 'dotted.name/with spaces',
    description: 'A name providers do not accept.',
    inputSchema: { type: 'object' },
  },
]

let extraTools = []
const servers = new Set()

/** A new low-level MCP server with the test tools (one per client session). */
export function createToolServer() {
  const server = new Server(
    { name: 'agentx-test-server', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true } } },
  )
  servers.add(server)
  server.onclose = () => servers.delete(server)
  // AGENTX_TEST_BAD_SCHEMA: one tool's schema breaks the MCP schema (`required` is not an array).
  const broken = process.env.AGENTX_TEST_BAD_SCHEMA
    ? [{ name: 'broken', inputSchema: { type: 'object', required: 'x' } }]
    : []
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...BASE_TOOLS, ...broken, ...extraTools],
  }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    state.calls++
    const args = request.params.arguments ?? {}
    switch (request.params.name) {
      case 'echo':
        return { content: [{ type: 'text', text: String(args.text) }] }
      case 'add': {
        const sum = Number(args.a) + Number(args.b)
        return { content: [{ type: 'text', text: JSON.stringify({ sum }) }], structuredContent: { sum } }
      }
      case 'fail':
        return { content: [{ type: 'text', text: 'The file does not exist.' }], isError: true }
      case 'throws':
        throw new Error('handler exploded')
      case 'slow':
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, Number(args.ms ?? 10_000))
          extra.signal.addEventListener('abort', () => {
            state.cancelled++
            clearTimeout(timer)
            resolve(undefined)
          })
        })
        return { content: [{ type: 'text', text: extra.signal.aborted ? 'cancelled' : 'slept' }] }
      case 'image':
        return {
          content: [
            { type: 'image', data: PIXEL_PNG, mimeType: 'image/png' },
            { type: 'text', text: 'a single pixel' },
          ],
        }
      case 'mixed':
        return {
          content: [
            { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
            {
              type: 'resource',
              resource: { uri: 'file:///notes.txt', text: 'note text', mimeType: 'text/plain' },
            },
            {
              type: 'resource',
              resource: { uri: 'file:///photo.png', blob: PIXEL_PNG, mimeType: 'image/png' },
            },
            { type: 'resource_link', uri: 'file:///big.csv', name: 'big.csv', description: 'A large table' },
          ],
        }
      case 'die':
        process.stderr.write('fatal: the test server is going down\n')
        setTimeout(() => process.exit(3), 20)
        return new Promise(() => {})
      case 'add_tool':
        extraTools = [{ name: 'extra', description: 'Added at run time.', inputSchema: { type: 'object' } }]
        await Promise.all([...servers].map((each) => each.sendToolListChanged().catch(() => undefined)))
        return { content: [{ type: 'text', text: 'added' }] }
      case 'extra':
        return { content: [{ type: 'text', text: 'extra works' }] }
      case 'status':
        return { content: [{ type: 'text', text: JSON.stringify(state) }] }
      case 'whoami':
        return {
          content: [
            {
              type: 'text',
              text: JSON.stringify({
                pid: process.pid,
                cwd: process.cwd(),
                env: process.env.AGENTX_TEST_VALUE ?? null,
                leak: process.env.AGENTX_LEAK_CHECK ?? null,
                header: extra.requestInfo?.headers?.['x-test-header'] ?? null,
              }),
            },
          ],
        }
      case 'quota':
        // -32000 is the generic JSON-RPC server error many servers use; the SDK also uses it locally.
        throw new McpError(-32000, 'Quota exceeded for today')
      case 'quote_credential': {
        const authorization = extra.requestInfo?.headers?.authorization
        const credential =
          typeof authorization === 'string'
            ? authorization.replace(/^Bearer\s+/, '')
            : process.env.AGENTX_TEST_VALUE
        if (args.how === 'throw') throw new Error(`invalid token ${credential}`)
        return { content: [{ type: 'text', text: `invalid token ${credential}` }], isError: true }
      }
      case 'dotted.name/with spaces':
        return { content: [{ type: 'text', text: 'dotted works' }] }
      default:
        throw new Error(`Unknown tool: ${request.params.name}`)
    }
  })
  return server
}
