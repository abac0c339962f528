import { openAIChatDialect, openAIResponsesDialect } from '@agentx/contract-tests'
import { describeAdapterContract } from '@agentx/contract-tests/vitest'
import { OpenAIAdapter } from './openai-adapter.js'

describeAdapterContract({
  name: 'OpenAIAdapter (Responses API)',
  dialect: openAIResponsesDialect,
  createAdapter: ({ baseURL, apiKey, idleTimeoutMs }) =>
    new OpenAIAdapter({ api: 'responses', baseURL, apiKey, idleTimeoutMs }),
  capabilities: ['toolCalls', 'parallelToolCalls', 'thinking', 'images', 'usage', 'providerSessionId'],
})

describeAdapterContract({
  name: 'OpenAIAdapter (Chat Completions)',
  dialect: openAIChatDialect,
  createAdapter: ({ baseURL, apiKey, idleTimeoutMs }) =>
    new OpenAIAdapter({ api: 'chat', baseURL, apiKey, idleTimeoutMs }),
  capabilities: ['toolCalls', 'parallelToolCalls', 'images', 'usage'],
})
