import {
  type AdapterStreamOptions,
  ConfigurationError,
  type ContentBlock,
  rejectUnknownOptions,
  type ToolDefinition,
} from '@agentx/core'
import { DEFAULT_IDLE_TIMEOUT_MS as SHARED_IDLE_TIMEOUT_MS, invalidOption } from '@agentx/core/provider'
import { readBaseUrl, readEnv, readIdleTimeoutMs, readProviderOptions } from '@agentx/core/provider'
import { readStringOption, ServerSentEventAdapter, unsupportedOption } from '@agentx/core/provider'
import { checkSendOptions, conflictingOutputOption } from '@agentx/core/provider'
import type { OpenedEventStream, ProviderIdentity } from '@agentx/core/provider'
import {
  type Content,
  type GenerateContentConfig,
  GoogleGenAI,
  type HttpOptions,
  type Tool,
} from '@google/genai'
import { convertToGeminiContents } from './convert-to-gemini-contents.js'
import { geminiIdentity, mapGeminiError } from './map-gemini-error.js'
import { GeminiStreamMapper } from './map-gemini-stream.js'

/** The model used when neither the call nor the adapter names one. */
export const DEFAULT_GEMINI_MODEL = 'gemini-2.5-flash'

/** Default of {@link GeminiAdapterOptions.idleTimeoutMs}. */
export const DEFAULT_IDLE_TIMEOUT_MS: number = SHARED_IDLE_TIMEOUT_MS

/** The response MIME type of structured output. */
const JSON_MIME_TYPE = 'application/json'

/** `generateContent` config fields the adapter sets itself; `providerOptions.gemini` cannot. */
const RESERVED_CONFIG_FIELDS = ['abortSignal', 'httpOptions', 'systemInstruction', 'tools']

/** Options of {@link GeminiAdapter}. */
export interface GeminiAdapterOptions {
  /**
   * The Gemini API key. Default is the `GEMINI_API_KEY` environment variable, then `GOOGLE_API_KEY`.
   * Never logged, never part of an error.
   */
  apiKey?: string | undefined
  /** The model used when a request names none (`AdapterStreamOptions.model` is empty). Default is `'gemini-2.5-flash'`. */
  model?: string
  /**
   * The API origin, without the version segment (the SDK adds it): a proxy, a gateway, a test
   * server. Same as `httpOptions.baseUrl`. Default is `process.env.GOOGLE_GEMINI_BASE_URL`, else
   * the SDK's (`https://generativelanguage.googleapis.com`).
   */
  baseURL?: string | undefined
  /**
   * The API version segment of the path (`v1`, `v1beta`). Same as `httpOptions.apiVersion`.
   * Default is `process.env.GOOGLE_GENAI_API_VERSION` (`beta` meaning `v1beta`, as the SDK reads
   * it), else the SDK's (`v1` in @google/genai 3.x, `v1beta` in 2.x).
   */
  apiVersion?: string
  /**
   * HTTP options of the `@google/genai` client (`headers`, `timeout`, `fetch`, `baseUrl`,
   * `apiVersion` …). `retryOptions` is refused: retries are the agent's job (`AgentConfig.retry`).
   * Default is the SDK's defaults.
   */
  httpOptions?: HttpOptions
  /**
   * A ready `GoogleGenAI` client (e.g. for Vertex AI), used as is instead of building one; then
   * `apiKey`, `baseURL`, `apiVersion` and `httpOptions` must not be given. Its own `retryOptions`
   * are disabled per request. Default is a client built from the options above.
   */
  client?: GoogleGenAI
  /**
   * How long a request may go without receiving a single byte (before the response starts or
   * while it streams) before it fails with an `AdapterError` of kind `timeout` and its connection
   * is closed; the time the caller holds an event does not count. `Infinity` disables it.
   * Default is `60_000` (60 s).
   */
  idleTimeoutMs?: number
}

/** Options under `providerOptions.gemini` of a send: extra `generateContent` config, e.g. `thinkingConfig`, `safetySettings`, `toolConfig`. */
export type GeminiProviderOptions = Omit<
  GenerateContentConfig,
  'abortSignal' | 'httpOptions' | 'systemInstruction' | 'tools'
>

/** The options {@link GeminiAdapter} knows (the compiler checks the list is whole); any other key is refused. */
const OPTION_KEYS = Object.keys({
  apiKey: true,
  model: true,
  baseURL: true,
  apiVersion: true,
  httpOptions: true,
  client: true,
  idleTimeoutMs: true,
} satisfies Record<keyof GeminiAdapterOptions, true>)

/**
 * The `AgentAdapter` for Google Gemini, through the official `@google/genai` SDK
 * (`models.generateContentStream`).
 *
 * The SDK builds, authenticates and sends each request and turns HTTP errors into its `ApiError`;
 * the adapter takes the raw streaming response from the SDK's `fetch` and reads it with the shared
 * server-sent-event reader of `@agentx/core/provider` (much faster than the SDK's per-chunk
 * `Response` objects), so abort, idle timeout and error behaviour are those of every other adapter.
 *
 * Streams text, thought summaries (as thinking, when `thinkingConfig.includeThoughts` is set in
 * `providerOptions.gemini`), and function calls (parallel ones included); reports usage once per
 * response and maps finish reasons and errors onto core's terms. The SDK's own retries are off
 * (the kernel retries); an abort or an early `break` closes the connection; a stream cut before
 * its finish reason is a retryable `network` error. Gemini keeps no server-side conversation, so
 * the whole history is replayed on every request and `resume` is ignored. Structured output
 * (`options.output`) is sent as `responseMimeType: 'application/json'` with the schema as
 * `responseJsonSchema`.
 *
 * Needs `@google/genai` 2.23 or later (the first with `httpOptions.fetch`). Constructing it
 * performs no I/O (rule A-REQ-001).
 *
 * @example
 * const agent = createAgent({ model: 'gemini-2.5-flash' }, { adapter: new GeminiAdapter() })
 */
export class GeminiAdapter extends ServerSentEventAdapter {
  readonly #client: GoogleGenAI
  readonly #ownClient: boolean
  readonly #identity: ProviderIdentity
  readonly #model: string
  /** The `fetch` the requests go through; `undefined`: the global one, looked up per request. */
  readonly #baseFetch: typeof fetch | undefined

  /**
   * @throws {ConfigurationError} when there is no API key (neither `apiKey`, `GEMINI_API_KEY`,
   *   `GOOGLE_API_KEY` nor `client`).
   * @throws {ValidationError} when an option has a value that can never work (naming it).
   */
  constructor(options: GeminiAdapterOptions = {}) {
    rejectUnknownOptions(options, OPTION_KEYS, 'GeminiAdapter')
    const unkeyed = geminiIdentity([])
    const idleTimeoutMs = readIdleTimeoutMs(unkeyed, options.idleTimeoutMs)
    if (options.httpOptions?.retryOptions !== undefined) {
      throw unsupportedOption(
        unkeyed,
        'httpOptions.retryOptions',
        'retries are done by the agent (AgentConfig.retry); leave it out.',
      )
    }
    const { client, identity, baseFetch } = resolveClient(options, unkeyed)
    super({
      provider: identity,
      idleTimeoutMs,
      mapError: (error) => mapGeminiError(error, { secrets: identity.secrets ?? [] }),
    })
    this.#client = client
    this.#ownClient = options.client === undefined
    this.#identity = identity
    this.#model = readStringOption(unkeyed, 'model', options.model) ?? DEFAULT_GEMINI_MODEL
    this.#baseFetch = baseFetch
  }

  /** The model of a request that names none: `options.model`, else {@link DEFAULT_GEMINI_MODEL}. */
  get defaultModel(): string {
    return this.#model
  }

  /**
   * Refuses, before the kernel stores anything, every option value {@link GeminiAdapter.stream}
   * would refuse: it prepares the request of a one-word prompt with these options.
   *
   * @throws {ValidationError} naming the option.
   */
  checkOptions(options: AdapterStreamOptions): void {
    this.#prepare('.', { ...options, history: [] })
  }

  /** The request's contents and its configuration from the options (no I/O); throws for bad input. */
  #prepare(
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
  ): { config: GenerateContentConfig; contents: Content[] } {
    checkSendOptions(this.#identity, options, { toolName: GEMINI_TOOL_NAME })
    const extra = readProviderOptions(
      this.#identity,
      options.providerOptions,
      RESERVED_CONFIG_FIELDS,
    ) as GeminiProviderOptions
    if (extra.toolConfig?.functionCallingConfig?.streamFunctionCallArguments === true) {
      throw unsupportedOption(
        this.#identity,
        'providerOptions.gemini.toolConfig.functionCallingConfig.streamFunctionCallArguments',
        'leave it off: function calls then arrive whole.',
      )
    }
    const conversation = convertToGeminiContents(prompt, {
      history: options.history,
      systemPrompt: options.systemPrompt,
    })
    const config: GenerateContentConfig = { ...extra }
    if (conversation.systemInstruction) config.systemInstruction = conversation.systemInstruction
    if (options.tools !== undefined && options.tools.length > 0) config.tools = toGeminiTools(options.tools)
    if (options.maxOutputTokens !== undefined) config.maxOutputTokens = options.maxOutputTokens
    if (options.temperature !== undefined) config.temperature = options.temperature
    if (options.output !== undefined) {
      // Structured output: JSON constrained by the caller's JSON Schema, as given.
      if (extra.responseJsonSchema !== undefined)
        throw conflictingOutputOption(this.#identity, 'responseJsonSchema')
      if (extra.responseSchema !== undefined) throw conflictingOutputOption(this.#identity, 'responseSchema')
      if (extra.responseMimeType !== undefined && extra.responseMimeType !== JSON_MIME_TYPE)
        throw conflictingOutputOption(this.#identity, 'responseMimeType')
      config.responseMimeType = JSON_MIME_TYPE
      config.responseJsonSchema = options.output.schema
    }
    return { config, contents: conversation.contents }
  }

  /** Sends one request through the SDK, which checks its status; the raw response goes to the shared reader. */
  protected override async openStream(
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
    signal: AbortSignal,
  ): Promise<OpenedEventStream> {
    // Bad input fails here, before any request.
    const { config: requestConfig, contents } = this.#prepare(prompt, options)
    const baseFetch = this.#baseFetch ?? globalThis.fetch
    let response: Response | undefined
    const config: GenerateContentConfig = {
      ...requestConfig,
      abortSignal: signal,
      // The adapter reads the stream; the SDK's function-calling and continuation loops stay off.
      automaticFunctionCalling: { disable: true },
      automaticContinuation: false,
      httpOptions: {
        fetch: async (input, init) => {
          response = await baseFetch(input, init)
          return response
        },
        // A client passed in may have retries configured; a single attempt keeps retrying the kernel's job.
        ...(this.#ownClient ? {} : { retryOptions: { attempts: 1 } }),
      },
    }
    try {
      // Sends the request and checks its status; its own stream reader is never started.
      await this.#client.models.generateContentStream({
        model: options.model || this.#model,
        contents,
        config,
      })
    } catch (error) {
      // The SDK's ApiError carries no headers: map it here, where Retry-After can still be read.
      if (signal.aborted) throw error
      throw mapGeminiError(error, {
        secrets: this.#identity.secrets ?? [],
        responseHeaders: response?.headers,
        responseStatus: response?.status,
      })
    }
    if (response === undefined) {
      throw new ConfigurationError(
        'GeminiAdapter: the installed @google/genai did not send the request through httpOptions.fetch; install @google/genai 2.23 or later.',
      )
    }
    return { response, mapper: new GeminiStreamMapper(this.#identity) }
  }
}

/**
 * Creates a {@link GeminiAdapter}.
 *
 * @example
 * const adapter = createGeminiAdapter({ apiKey: process.env.GEMINI_API_KEY, model: 'gemini-2.5-pro' })
 */
export function createGeminiAdapter(options: GeminiAdapterOptions = {}): GeminiAdapter {
  return new GeminiAdapter(options)
}

/** The client of {@link GeminiAdapter}: the one given, or one built from the options; its identity and `fetch`. */
function resolveClient(
  options: GeminiAdapterOptions,
  unkeyed: ProviderIdentity,
): { client: GoogleGenAI; identity: ProviderIdentity; baseFetch: typeof fetch | undefined } {
  if (options.client !== undefined) {
    for (const option of ['apiKey', 'baseURL', 'apiVersion', 'httpOptions'] as const) {
      if (options[option] !== undefined)
        throw unsupportedOption(
          unkeyed,
          option,
          'it configures the client the adapter builds; with `client`, configure that client instead.',
        )
    }
    const apiClient = (
      options.client as unknown as { apiClient?: { getApiKey?: () => unknown; getFetch?: () => unknown } }
    ).apiClient
    const key = apiClient?.getApiKey?.()
    const clientFetch = apiClient?.getFetch?.()
    return {
      client: options.client,
      identity: geminiIdentity(typeof key === 'string' && key !== '' ? [key] : []),
      baseFetch: typeof clientFetch === 'function' ? (clientFetch as typeof fetch) : undefined,
    }
  }
  const apiKey = options.apiKey ?? readEnv('GEMINI_API_KEY') ?? readEnv('GOOGLE_API_KEY')
  if (apiKey === undefined || typeof apiKey !== 'string' || apiKey === '') {
    throw new ConfigurationError(
      'GeminiAdapter: no API key. Set GEMINI_API_KEY (or GOOGLE_API_KEY), or pass { apiKey } to the GeminiAdapter.',
    )
  }
  const identity = geminiIdentity([apiKey])
  const http = options.httpOptions
  if (options.baseURL !== undefined && http?.baseUrl !== undefined && http.baseUrl !== options.baseURL)
    throw invalidOption(
      identity,
      'baseURL',
      'the same value as httpOptions.baseUrl (or only one of them)',
      options.baseURL,
    )
  const httpOptions: HttpOptions = { ...http }
  const baseUrl = readBaseUrl(identity, 'baseURL', options.baseURL ?? http?.baseUrl, 'GOOGLE_GEMINI_BASE_URL')
  if (baseUrl !== undefined) httpOptions.baseUrl = baseUrl
  const apiVersion = readStringOption(
    identity,
    'apiVersion',
    options.apiVersion ?? http?.apiVersion ?? envApiVersion(),
  )
  if (apiVersion !== undefined) httpOptions.apiVersion = apiVersion
  return { client: new GoogleGenAI({ apiKey, httpOptions }), identity, baseFetch: http?.fetch }
}

/** `GOOGLE_GENAI_API_VERSION`, read as the SDK reads it (`beta` means `v1beta`). */
function envApiVersion(): string | undefined {
  const value = readEnv('GOOGLE_GENAI_API_VERSION')
  return value === 'beta' ? 'v1beta' : value
}

/** The function names the Gemini API accepts. */
const GEMINI_TOOL_NAME = {
  pattern: /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$/,
  description: '1–128 letters, digits, _ . : or -, starting with a letter or _',
}

/** Core tool definitions as Gemini function declarations (JSON Schema passed as `parametersJsonSchema`). */
function toGeminiTools(tools: readonly ToolDefinition[]): Tool[] {
  return [
    {
      functionDeclarations: tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        parametersJsonSchema: tool.inputSchema,
      })),
    },
  ]
}
