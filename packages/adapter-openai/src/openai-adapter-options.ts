import type { Logger } from '@agentx/core'
import type OpenAI from 'openai'

/** Which OpenAI wire protocol an {@link OpenAIAdapter} speaks. */
export type OpenAIApi = 'responses' | 'chat'

/** Options of {@link OpenAIAdapter} and {@link createOpenAIAdapter}. */
export interface OpenAIAdapterOptions {
  /**
   * The API key. Default is `process.env.OPENAI_API_KEY`. Without a key the adapter talks to a
   * custom `baseURL` without an `Authorization` header (local servers); for OpenAI itself a key
   * is required and its absence throws a `ConfigurationError` from the constructor.
   */
  apiKey?: string | undefined
  /**
   * The API base URL, up to and including the version segment (`http://127.0.0.1:11434/v1`,
   * `https://gateway.example.com/openai/v1`). It never changes the API: set `api` for that.
   * Default is `process.env.OPENAI_BASE_URL`, else `https://api.openai.com/v1`.
   */
  baseURL?: string | undefined
  /**
   * An API version sent as the `api-version` query parameter of every request, as Azure OpenAI and
   * gateways in front of it expect (`2025-04-01-preview`). Default is
   * `process.env.OPENAI_API_VERSION`, else none (OpenAI itself has no version parameter).
   */
  apiVersion?: string
  /** The model used when a request names none (a session without a model). Default is none: a request without a model fails with kind `invalid_request`. */
  model?: string
  /**
   * `'responses'` streams the Responses API (`POST /responses`) and resumes conversations with
   * `previous_response_id`; `'chat'` streams Chat Completions (`POST /chat/completions`), which
   * every OpenAI-compatible server speaks. Chosen here only, whatever `baseURL` is: a gateway that
   * forwards the Responses API keeps the default. Default is `'responses'`.
   */
  api?: OpenAIApi
  /**
   * A configured `openai` client to use instead of building one (Azure, proxies, custom fetch).
   * The adapter still sends every request with `maxRetries: 0`: retries are the kernel's job.
   * Default is a client built from `apiKey`, `baseURL`, `organization`, `project` and `headers`.
   */
  client?: OpenAI
  /**
   * How long the stream may stay silent (no byte at all, before or after the response headers)
   * before the request is cancelled with an `AdapterError` of kind `timeout`; the time the caller
   * holds an event does not count. `Infinity` disables it. Default is `60_000`.
   */
  idleTimeoutMs?: number
  /** The OpenAI organization id. Default is `process.env.OPENAI_ORG_ID`. */
  organization?: string
  /** The OpenAI project id. Default is `process.env.OPENAI_PROJECT_ID`. */
  project?: string
  /** Extra headers sent with every request (gateways often want one). Default is none. */
  headers?: Record<string, string>
  /** Receives a warning when a resumed conversation falls back to a replay. Default is none. */
  logger?: Logger
}
