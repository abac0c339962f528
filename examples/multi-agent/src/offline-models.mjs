// The models, offline: each profile's real adapter talks to a loopback server that speaks its
// provider's wire protocol (the contract kit's fake provider), so the example runs without keys
// and without a network. The script tells each server what its "model" answers next.
//
// With real keys, drop this file and pass `createClaudeAdapter()`, `new OpenAIAdapter()` and
// `createGeminiAdapter()` (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY) instead.
import { randomUUID } from 'node:crypto'
import { createClaudeAdapter } from '@agentx/adapter-claude'
import { GeminiAdapter } from '@agentx/adapter-gemini'
import { OpenAIAdapter } from '@agentx/adapter-openai'
import {
  anthropicMessagesDialect,
  geminiDialect,
  openAIResponsesDialect,
  startFakeProvider,
} from '@agentx/contract-tests'

/** Not a real key: the loopback servers accept anything. */
const OFFLINE_KEY = 'offline-example-key'

/**
 * @typedef {object} OfflineModel
 * @property {import('@agentx/core').AgentAdapter} adapter the real adapter, pointed at the loopback server
 * @property {import('@agentx/contract-tests').FakeProvider} provider the loopback server (what it received: `provider.requests`)
 * @property {(text: string, call: { name: string, input: unknown }) => void} willCall queues an answer: some text (may be empty), then a tool call
 * @property {(text: string) => void} willSay queues an answer: text only
 */

/**
 * @param {import('@agentx/contract-tests').FakeProvider} provider
 * @param {import('@agentx/core').AgentAdapter} adapter
 * @param {string} callPrefix how this provider's tool-call ids look
 * @returns {OfflineModel}
 */
function offlineModel(provider, adapter, callPrefix) {
  return {
    adapter,
    provider,
    willCall(text, call) {
      provider.enqueue({
        response: {
          blocks: [
            ...(text === '' ? [] : [{ type: /** @type {const} */ ('text'), text }]),
            {
              type: 'tool-call',
              id: `${callPrefix}${randomUUID().replaceAll('-', '').slice(0, 16)}`,
              ...call,
            },
          ],
          stopReason: 'tool_use',
          usage: { inputTokens: 420, outputTokens: 38 },
        },
      })
    },
    willSay(text) {
      provider.enqueue({
        response: {
          blocks: [{ type: 'text', text }],
          stopReason: 'end_turn',
          usage: { inputTokens: 510, outputTokens: 64 },
        },
      })
    },
  }
}

/**
 * Starts one loopback server per provider, and the real adapter that talks to each:
 * Claude (Anthropic Messages), OpenAI (Responses API) and Gemini.
 *
 * @returns {Promise<{ claude: OfflineModel, openai: OfflineModel, gemini: OfflineModel, close(): Promise<void> }>}
 */
export async function startOfflineModels() {
  const claude = await startFakeProvider({ dialect: anthropicMessagesDialect })
  const openai = await startFakeProvider({ dialect: openAIResponsesDialect })
  const gemini = await startFakeProvider({ dialect: geminiDialect })
  return {
    claude: offlineModel(
      claude,
      createClaudeAdapter({ apiKey: OFFLINE_KEY, baseURL: claude.baseURL }),
      'toolu_',
    ),
    openai: offlineModel(
      openai,
      new OpenAIAdapter({ apiKey: OFFLINE_KEY, baseURL: openai.baseURL, api: 'responses' }),
      'call_',
    ),
    gemini: offlineModel(gemini, new GeminiAdapter({ apiKey: OFFLINE_KEY, baseURL: gemini.baseURL }), 'fc_'),
    async close() {
      await Promise.all([claude.close(), openai.close(), gemini.close()])
    },
  }
}
