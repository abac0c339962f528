// The public API of @agentx/mcp: MCP servers as AgentX tools.
export { connectMcp } from './connect-mcp.js'
export type {
  ConnectMcpOptions,
  McpConnection,
  McpHttpServer,
  McpServer,
  McpStdioServer,
} from './connect-mcp.js'
export { isMcpClientError, McpClientError } from './mcp-client-error.js'
export type { McpClientErrorCode } from './mcp-client-error.js'
