import { geminiDialect } from '@agentx/contract-tests'
import { describeAdapterContract } from '@agentx/contract-tests/vitest'
import { GeminiAdapter } from './gemini-adapter.js'

describeAdapterContract({
  name: 'GeminiAdapter',
  dialect: geminiDialect,
  createAdapter: ({ baseURL, apiKey, idleTimeoutMs }) =>
    new GeminiAdapter({ baseURL, apiKey, idleTimeoutMs }),
  capabilities: ['toolCalls', 'parallelToolCalls', 'thinking', 'images', 'usage', 'structuredOutput'],
})
