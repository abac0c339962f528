// The real adapters (and their provider SDKs) against the contract kit's loopback fake provider,
// one server per provider, each speaking that provider's wire dialect.
import { createClaudeAdapter } from '@agentx/adapter-claude'
import { GeminiAdapter } from '@agentx/adapter-gemini'
import { OpenAIAdapter } from '@agentx/adapter-openai'
import {
  anthropicMessagesDialect,
  type DecodedRequest,
  type FakeProvider,
  geminiDialect,
  openAIChatDialect,
  openAIResponsesDialect,
  startFakeProvider,
  type WireDialect,
} from '@agentx/contract-tests'
import type { AgentAdapter } from '@agentx/core'

/** Not a real key: the loopback servers accept anything. */
const API_KEY = 'offline-test-key'

export type ProviderName = 'claude' | 'openai-responses' | 'openai-chat' | 'gemini'

/** One provider: its loopback server and the real adapter pointed at it. */
export interface LiveProvider {
  name: ProviderName
  fake: FakeProvider
  adapter: AgentAdapter
  /** The requests the server received so far, decoded into core terms. */
  decoded(): DecodedRequest[]
  /** The raw JSON body of request `index`. */
  body(index: number): Record<string, unknown>
}

const DIALECTS: Record<ProviderName, WireDialect> = {
  claude: anthropicMessagesDialect,
  'openai-responses': openAIResponsesDialect,
  'openai-chat': openAIChatDialect,
  gemini: geminiDialect,
}

function createAdapter(name: ProviderName, baseURL: string): AgentAdapter {
  switch (name) {
    case 'claude':
      return createClaudeAdapter({ apiKey: API_KEY, baseURL })
    case 'openai-responses':
      return new OpenAIAdapter({ apiKey: API_KEY, baseURL, api: 'responses' })
    case 'openai-chat':
      return new OpenAIAdapter({ apiKey: API_KEY, baseURL, api: 'chat' })
    case 'gemini':
      return new GeminiAdapter({ apiKey: API_KEY, baseURL })
  }
}

/** Starts the loopback server of `name` and the real adapter that talks to it. */
export async function startProvider(name: ProviderName): Promise<LiveProvider> {
  const fake = await startFakeProvider({ dialect: DIALECTS[name] })
  return {
    name,
    fake,
    adapter: createAdapter(name, fake.baseURL),
    decoded: () => fake.requests.map((request) => request.decoded),
    body: (index) => JSON.parse(fake.requests[index]!.received.body) as Record<string, unknown>,
  }
}
