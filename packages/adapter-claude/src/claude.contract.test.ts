import { anthropicMessagesDialect } from '@agentx/contract-tests'
import { describeAdapterContract } from '@agentx/contract-tests/vitest'
import { ClaudeAdapter } from './claude-adapter.js'

// The Messages API is stateless (no provider session id), so `providerSessionId` is not claimed.
describeAdapterContract({
  name: 'ClaudeAdapter',
  dialect: anthropicMessagesDialect,
  createAdapter: ({ baseURL, apiKey, idleTimeoutMs }) =>
    new ClaudeAdapter({ baseURL, apiKey, idleTimeoutMs }),
  capabilities: ['toolCalls', 'parallelToolCalls', 'thinking', 'images', 'usage', 'structuredOutput'],
})
