// The test MCP server over stdio: `node stdio-server.mjs`.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { createToolServer } from './tool-server.mjs'

process.stderr.write('stdio test server ready\n')
await createToolServer().connect(new StdioServerTransport())
