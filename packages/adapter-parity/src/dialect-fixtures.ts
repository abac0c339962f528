import { ClaudeAdapter } from '@agentx/adapter-claude'
import { GeminiAdapter } from '@agentx/adapter-gemini'
import { OpenAIAdapter } from '@agentx/adapter-openai'
import {
  anthropicMessagesDialect,
  geminiDialect,
  openAIChatDialect,
  openAIResponsesDialect,
  type ReceivedRequest,
  type WireDialect,
} from '@agentx/contract-tests'
import type { AdapterStreamOptions, AgentAdapter } from '@agentx/core'

/** Constructor options every first-party adapter takes (the rest is the adapter's own). */
export interface CommonOptions {
  apiKey?: string
  baseURL?: string
  apiVersion?: string
  idleTimeoutMs?: unknown
}

/**
 * One adapter and its wire dialect, as the parity suite drives it: everything the suite needs to
 * know that differs by provider. A fourth adapter joins the suite with one more entry.
 */
export interface DialectFixture {
  /** Shown in test names. */
  readonly name: string
  readonly dialect: WireDialect
  /** `getName()`, the key of `providerOptions`, `AdapterError.provider`. */
  readonly provider: string
  /** How messages name the provider. */
  readonly label: string
  /** The environment variable of the API key, named in authentication advice. */
  readonly apiKeyEnv: string
  /** The environment variable of the base URL. */
  readonly baseUrlEnv: string
  /** Makes the adapter. */
  create(options: CommonOptions): AgentAdapter
  /** An API version the adapter is given, and how it shows in the request. */
  readonly apiVersion: { value: string; seenIn(request: ReceivedRequest): boolean }
  /** A send option this provider cannot take, refused before the request, and the option's name. */
  readonly unsupported: { options: Partial<AdapterStreamOptions>; option: string }
  /**
   * The provider options that set the native structured-output field the adapter sets for
   * `output`, and that field's path under `providerOptions.<provider>`.
   */
  readonly outputField: { providerOptions: Record<string, unknown>; field: string }
  /**
   * What the provider requires of the conversation a request carries (its fake server does not
   * check it): `alternating` — it opens with a user turn and roles alternate; `replayed` — only that
   * every tool result answers a call of the turn before.
   */
  readonly turns: 'alternating' | 'replayed'
  /** Whether the adapter resumes a conversation from the provider's stored response (`resume`). */
  readonly resumes: boolean
}

const header = (request: ReceivedRequest, name: string): string | undefined => {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

export const DIALECT_FIXTURES: readonly DialectFixture[] = [
  {
    name: 'Claude (Messages API)',
    dialect: anthropicMessagesDialect,
    provider: 'claude',
    label: 'Claude',
    apiKeyEnv: 'ANTHROPIC_API_KEY',
    baseUrlEnv: 'ANTHROPIC_BASE_URL',
    create: (options) => new ClaudeAdapter(options as ConstructorParameters<typeof ClaudeAdapter>[0]),
    apiVersion: {
      value: '2023-06-01',
      seenIn: (request) => header(request, 'anthropic-version') === '2023-06-01',
    },
    // API version 2026-10-21, the default of @anthropic-ai/sdk 1.x, rejects temperature.
    unsupported: { options: { temperature: 0.3 }, option: 'temperature' },
    outputField: {
      providerOptions: { output_config: { format: { type: 'json_schema', schema: { type: 'object' } } } },
      field: 'output_config.format',
    },
    turns: 'alternating',
    resumes: false,
  },
  {
    name: 'OpenAI (Responses API)',
    dialect: openAIResponsesDialect,
    provider: 'openai',
    label: 'OpenAI',
    apiKeyEnv: 'OPENAI_API_KEY',
    baseUrlEnv: 'OPENAI_BASE_URL',
    create: (options) => new OpenAIAdapter(options as ConstructorParameters<typeof OpenAIAdapter>[0]),
    apiVersion: {
      value: '2025-04-01-preview',
      seenIn: (request) => request.url.endsWith('?api-version=2025-04-01-preview'),
    },
    unsupported: {
      options: { providerOptions: { openai: { previous_response_id: 'resp_x' } } },
      option: 'providerOptions.openai.previous_response_id',
    },
    outputField: { providerOptions: { text: { format: { type: 'json_object' } } }, field: 'text.format' },
    turns: 'replayed',
    resumes: true,
  },
  {
    name: 'OpenAI (Chat Completions)',
    dialect: openAIChatDialect,
    provider: 'openai',
    label: 'OpenAI',
    apiKeyEnv: 'OPENAI_API_KEY',
    baseUrlEnv: 'OPENAI_BASE_URL',
    create: (options) =>
      new OpenAIAdapter({ ...(options as ConstructorParameters<typeof OpenAIAdapter>[0]), api: 'chat' }),
    apiVersion: {
      value: '2025-04-01-preview',
      seenIn: (request) => request.url.endsWith('?api-version=2025-04-01-preview'),
    },
    unsupported: {
      options: { providerOptions: { openai: { messages: [] } } },
      option: 'providerOptions.openai.messages',
    },
    outputField: { providerOptions: { response_format: { type: 'json_object' } }, field: 'response_format' },
    turns: 'replayed',
    resumes: false,
  },
  {
    name: 'Gemini (generateContent)',
    dialect: geminiDialect,
    provider: 'gemini',
    label: 'Gemini',
    apiKeyEnv: 'GEMINI_API_KEY',
    baseUrlEnv: 'GOOGLE_GEMINI_BASE_URL',
    create: (options) => new GeminiAdapter(options as ConstructorParameters<typeof GeminiAdapter>[0]),
    apiVersion: { value: 'v1beta', seenIn: (request) => request.url.startsWith('/v1beta/models/') },
    unsupported: {
      options: {
        providerOptions: {
          gemini: { toolConfig: { functionCallingConfig: { streamFunctionCallArguments: true } } },
        },
      },
      option: 'providerOptions.gemini.toolConfig.functionCallingConfig.streamFunctionCallArguments',
    },
    outputField: { providerOptions: { responseJsonSchema: { type: 'object' } }, field: 'responseJsonSchema' },
    turns: 'alternating',
    resumes: false,
  },
]
