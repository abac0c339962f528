// The model, offline: the real Claude adapter talks to a loopback server that speaks the Anthropic
// Messages wire protocol (the contract kit's fake provider), so the example runs without a key
// and without a network. The script tells the server what "Claude" answers next.
//
// With a real key, drop this file and pass `createClaudeAdapter()` (ANTHROPIC_API_KEY) instead.
import { randomUUID } from 'node:crypto'
import { createClaudeAdapter } from '@agentx/adapter-claude'
import { anthropicMessagesDialect, startFakeProvider } from '@agentx/contract-tests'

/** Not a real key: the loopback server accepts anything. */
const OFFLINE_KEY = 'offline-example-key'

/**
 * @typedef {object} OfflineModel
 * @property {import('@agentx/core').AgentAdapter} adapter the Claude adapter, pointed at the loopback server
 * @property {import('@agentx/contract-tests').FakeProvider} provider the loopback server (what it received: `provider.requests`)
 * @property {(text: string, call: { name: string, input: unknown }) => void} willCall the next answer: some text, then a tool call
 * @property {(text: string) => void} willSay the next answer: text only
 * @property {() => Promise<void>} close stops the server
 */

/**
 * Starts the loopback server and the Claude adapter that talks to it.
 * @returns {Promise<OfflineModel>}
 */
export async function startOfflineModel() {
  const provider = await startFakeProvider({ dialect: anthropicMessagesDialect })
  const adapter = createClaudeAdapter({ apiKey: OFFLINE_KEY, baseURL: provider.baseURL })
  return {
    adapter,
    provider,
    willCall(text, call) {
      provider.enqueue({
        response: {
          blocks: [
            { type: 'text', text },
            { type: 'tool-call', id: `toolu_${randomUUID().replaceAll('-', '')}`, ...call },
          ],
          stopReason: 'tool_use',
          usage: { inputTokens: 310, outputTokens: 42 },
        },
      })
    },
    willSay(text) {
      provider.enqueue({
        response: {
          blocks: [{ type: 'text', text }],
          stopReason: 'end_turn',
          usage: { inputTokens: 380, outputTokens: 18 },
        },
      })
    },
    close: () => provider.close(),
  }
}

/**
 * What a model would make of a request such as "Deploy web 2.4.1 to production": the input of
 * a `deploy` call. (Claude would read the request; the offline stand-in reads it with two regexes.)
 *
 * @param {string} request
 * @returns {import('./deploy-tool.mjs').DeployInput}
 */
export function planDeploy(request) {
  const version = /\b\d+\.\d+\.\d+\b/.exec(request)?.[0] ?? '1.0.0'
  const service = /\bdeploy\s+(?!version\b)([a-z][\w-]*)/i.exec(request)?.[1] ?? 'web'
  const environment = /\bstaging\b/i.test(request) ? 'staging' : 'production'
  return { service, version, environment }
}
