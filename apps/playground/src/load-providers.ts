import type { AgentAdapter } from '@agentx/core'
import { redactSecrets } from '@agentx/core/provider'
import { createDemoAdapter, DEMO_MODELS, DEMO_RETRY_OPTIONS } from './demo-adapter.js'
import { createDemoAgentSetup } from './demo-agents.js'
import { createDemoTools } from './demo-tools.js'
import type { PlaygroundProvider } from './playground-provider.js'

/** The first model offered for Claude: the Claude adapter's own default (a current model). */
export const DEFAULT_CLAUDE_MODEL = 'claude-sonnet-5-5'

/** The environment variables the playground reads (a subset of `process.env`). */
export type PlaygroundEnv = Readonly<Record<string, string | undefined>>

/** Options of {@link loadProviders}. */
export interface LoadProvidersOptions {
  /** Pause between the demo provider's words, in ms. Default is `30`. */
  demoDelayMs?: number
  /** Imports an adapter package. Default is a dynamic `import()`; tests pass a fake. */
  importModule?: (specifier: string) => Promise<unknown>
}

interface RemoteProviderSpec {
  id: string
  label: string
  specifier: string
  factory: string
  models: string[]
  options: Record<string, unknown>
  /** Whether the agent offers the demo tools (every cloud provider supports tool calls; local servers may not). */
  tools: boolean
}

/** The secret values of `env` (API keys), to scrub from anything shown or logged. */
export function secretsOf(env: PlaygroundEnv): string[] {
  const secrets = ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'AGENTX_PG_URL']
    .flatMap((name) => [env[name], env[name]?.trim()])
    .filter((value): value is string => typeof value === 'string' && value.length >= 4)
  const password = passwordOf(env.AGENTX_PG_URL)
  if (password !== undefined && password.length >= 4) secrets.push(password, encodeURIComponent(password))
  // Longest first, so a key that contains another secret is redacted whole.
  return [...new Set(secrets)].sort((a, b) => b.length - a.length)
}

function passwordOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined
  try {
    const password = new URL(url.trim()).password
    return password === '' ? undefined : decodeURIComponent(password)
  } catch {
    return undefined
  }
}

/** Replaces every secret in `text` with `[redacted]` (the adapters' own `redactSecrets`). */
export function redact(text: string, secrets: readonly string[]): string {
  return redactSecrets(text, secrets)
}

/**
 * The providers of the picker: the offline demo provider first, then every provider whose key is
 * in `env` — `ANTHROPIC_API_KEY` (Claude, through `ANTHROPIC_BASE_URL` when set),
 * `OPENAI_API_KEY` (OpenAI), `OPENAI_BASE_URL` (an OpenAI-compatible server or gateway, through
 * Chat Completions unless `OPENAI_API=responses`), `GEMINI_API_KEY` (Gemini, through
 * `GOOGLE_GEMINI_BASE_URL` when set: the adapters read their base-URL variables themselves).
 *
 * Adapter packages are imported only when their variable is set. A package that fails to load is
 * listed as unavailable with the reason (secrets scrubbed), so one broken plugin never stops the
 * playground.
 */
export async function loadProviders(
  env: PlaygroundEnv,
  options: LoadProvidersOptions = {},
): Promise<PlaygroundProvider[]> {
  const importModule = options.importModule ?? ((specifier: string) => import(specifier))
  const demoSetup = createDemoAgentSetup()
  const demo: PlaygroundProvider = {
    id: 'demo',
    label: 'Demo (offline)',
    offline: true,
    models: [...DEMO_MODELS],
    adapter: createDemoAdapter(options.demoDelayMs === undefined ? {} : { delayMs: options.demoDelayMs }),
    tools: demoSetup.tools,
    agents: demoSetup.agents,
    agentTools: demoSetup.agentTools,
    retryProviderOptions: DEMO_RETRY_OPTIONS,
    // Below what `/compact` reports, so the request after it is preceded by a compaction.
    compaction: { thresholdTokens: 100_000, keepRecentMessages: 4 },
  }
  const specs: RemoteProviderSpec[] = []
  const anthropicKey = nonEmpty(env.ANTHROPIC_API_KEY)
  const anthropicBaseUrl = nonEmpty(env.ANTHROPIC_BASE_URL)
  if (anthropicKey !== undefined) {
    specs.push({
      id: 'claude',
      label: 'Claude (Anthropic)',
      specifier: '@agentx/adapter-claude',
      factory: 'createClaudeAdapter',
      models: listFrom(env.ANTHROPIC_MODELS, [DEFAULT_CLAUDE_MODEL, 'claude-haiku-5-5', 'claude-opus-5-5']),
      options: {
        apiKey: anthropicKey,
        ...(anthropicBaseUrl === undefined ? {} : { baseURL: anthropicBaseUrl }),
      },
      tools: true,
    })
  }
  const openaiKey = nonEmpty(env.OPENAI_API_KEY)
  const openaiBaseUrl = nonEmpty(env.OPENAI_BASE_URL)
  if (openaiKey !== undefined && openaiBaseUrl === undefined) {
    specs.push({
      id: 'openai',
      label: 'OpenAI',
      specifier: '@agentx/adapter-openai',
      factory: 'createOpenAIAdapter',
      models: listFrom(env.OPENAI_MODELS, ['gpt-5.5', 'gpt-5.4-mini', 'gpt-6-sol']),
      options: { apiKey: openaiKey },
      tools: true,
    })
  }
  if (openaiBaseUrl !== undefined) {
    // A local server speaks Chat Completions; a gateway in front of OpenAI may forward the Responses API.
    const api = nonEmpty(env.OPENAI_API) ?? 'chat'
    specs.push({
      id: 'openai-compatible',
      label: `OpenAI-compatible (${hostOf(openaiBaseUrl)}${api === 'chat' ? '' : `, ${api} API`})`,
      specifier: '@agentx/adapter-openai',
      factory: 'createOpenAIAdapter',
      models: listFrom(env.OPENAI_MODELS, ['default']),
      // Without a key the adapter sends no Authorization header, which local servers expect.
      options: {
        ...(openaiKey === undefined ? {} : { apiKey: openaiKey }),
        baseURL: openaiBaseUrl,
        api,
      },
      // Not every local model supports tool calls; a Responses API gateway fronts OpenAI, which does.
      tools: api !== 'chat',
    })
  }
  const geminiKey = nonEmpty(env.GEMINI_API_KEY) ?? nonEmpty(env.GOOGLE_API_KEY)
  if (geminiKey !== undefined) {
    specs.push({
      id: 'gemini',
      label: 'Gemini (Google)',
      specifier: '@agentx/adapter-gemini',
      factory: 'createGeminiAdapter',
      models: listFrom(env.GEMINI_MODELS, ['gemini-2.5-flash', 'gemini-2.5-pro']),
      options: { apiKey: geminiKey },
      tools: true,
    })
  }
  const secrets = secretsOf(env)
  const remote = await Promise.all(specs.map((spec) => loadRemote(spec, importModule, secrets)))
  return [demo, ...remote]
}

async function loadRemote(
  spec: RemoteProviderSpec,
  importModule: (specifier: string) => Promise<unknown>,
  secrets: readonly string[],
): Promise<PlaygroundProvider> {
  const base: PlaygroundProvider = { id: spec.id, label: spec.label, offline: false, models: spec.models }
  if (spec.tools) base.tools = createDemoTools()
  try {
    const module = (await importModule(spec.specifier)) as Record<string, unknown>
    const factory = module[spec.factory]
    if (typeof factory !== 'function') throw new Error(`${spec.specifier} does not export ${spec.factory}()`)
    const adapter = (factory as (options: Record<string, unknown>) => AgentAdapter)(spec.options)
    if (typeof adapter?.stream !== 'function' || typeof adapter.getName !== 'function') {
      throw new Error(`${spec.factory}() did not return an adapter`)
    }
    return { ...base, adapter }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    return { ...base, unavailableReason: redact(`Could not load ${spec.specifier}: ${reason}`, secrets) }
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed === '' ? undefined : trimmed
}

function listFrom(value: string | undefined, fallback: string[]): string[] {
  const list = (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
  return list.length > 0 ? list : fallback
}

function hostOf(url: string): string {
  try {
    return new URL(url).host
  } catch {
    return 'custom URL'
  }
}
