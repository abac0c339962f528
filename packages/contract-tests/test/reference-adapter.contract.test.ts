import { anthropicMessagesDialect } from '../src/dialects/anthropic-messages-dialect.js'
import { describeAdapterContract } from '../src/bindings/vitest.js'
import { ReferenceAnthropicAdapter } from '../src/reference/reference-anthropic-adapter.js'

const STATELESS = 'The Anthropic Messages API is stateless: it has no conversation id to report or resume.'

// The reference adapter under the vitest binding with every capability declared: the three rules
// for stateful providers are known gaps of the Anthropic protocol, so they must keep failing.
describeAdapterContract({
  name: 'ReferenceAnthropicAdapter',
  dialect: anthropicMessagesDialect,
  createAdapter: ({ baseURL, apiKey, idleTimeoutMs }) =>
    new ReferenceAnthropicAdapter({ baseURL, apiKey, idleTimeoutMs }),
  capabilities: [
    'toolCalls',
    'parallelToolCalls',
    'thinking',
    'images',
    'usage',
    'providerSessionId',
    'structuredOutput',
  ],
  expectedFailures: { 'A-REQ-008': STATELESS, 'A-REQ-009': STATELESS, 'A-REQ-010': STATELESS },
})
