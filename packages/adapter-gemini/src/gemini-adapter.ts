import {
  AdapterError,
  type AdapterMessage,
  type AdapterStreamOptions,
  type AgentAdapter,
  ConfigurationError,
  type ContentBlock,
  type ToolDefinition,
} from '@agentx/core'
import { type GenerateContentConfig, GoogleGenAI, type HttpOptions, type Tool } from '@google/genai'
import { convertToGeminiContents } from './convert-to-gemini-contents.js'
import { createWatchedFetch, type WatchedResponse } from './create-watched-fetch.js'
import { IdleWatchdog } from './idle-watchdog.js'
import { GEMINI_PROVIDER, type GeminiStopCause, mapGeminiError } from './map-gemini-error.js'
import { mapGeminiStream } from './map-gemini-stream.js'

/** The model used when neither the call nor the adapter names one. */
export const DEFAULT_GEMINI_MODEL = 'gemini-2.5-flash'

/** Default of {@link GeminiAdapterOptions.idleTimeoutMs}. */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000

/** Options of {@link GeminiAdapter}. */
export interface GeminiAdapterOptions {
  /**
   * The Gemini API key. Default is the `GEMINI_API_KEY` environment variable, then `GOOGLE_API_KEY`.
   * Never logged, never part of an error.
   */
  apiKey?: string
  /** The model used when a request names none (`AdapterStreamOptions.model` is empty). Default is `'gemini-2.5-flash'`. */
  model?: string
  /**
   * HTTP options of the `@google/genai` client (`baseUrl`, `apiVersion`, `headers`, `timeout`,
   * `fetch` …). `retryOptions` is refused: retries are the agent's job (`AgentConfig.retry`).
   * Default is the SDK's defaults.
   */
  httpOptions?: HttpOptions
  /** Shorthand for `httpOptions.baseUrl` (e.g. a proxy or a loopback test server). Default is the SDK's. */
  baseURL?: string
  /**
   * A ready `GoogleGenAI` client (e.g. for Vertex AI), used as is instead of building one; then
   * `apiKey`, `baseURL` and `httpOptions` must not be given. Its own `retryOptions` are disabled per
   * request. Default is a client built from the options above.
   */
  client?: GoogleGenAI
  /**
   * How long a request may go without receiving a single byte (before the response starts or
   * while it streams) before it fails with an `AdapterError` of kind `timeout` and its connection
   * is closed. Default is `60_000` (60 s).
   */
  idleTimeoutMs?: number
}

/** Options under `providerOptions.gemini` of a send: extra `generateContent` config, e.g. `thinkingConfig`, `safetySettings`, `toolConfig`. */
export type GeminiProviderOptions = Omit<
  GenerateContentConfig,
  'abortSignal' | 'httpOptions' | 'systemInstruction' | 'tools'
>

/**
 * The {@link AgentAdapter} for Google Gemini, through the official `@google/genai` SDK
 * (`models.generateContentStream`).
 *
 * Streams text, thought summaries (as thinking, when `thinkingConfig.includeThoughts` is set in
 * `providerOptions.gemini`), and function calls (parallel ones included); reports usage once per
 * response and maps finish reasons and errors onto core's terms. The SDK's own retries are off
 * (the kernel retries); an abort or an early `break` closes the connection; a stream cut before
 * its finish reason is a retryable `network` error. Gemini keeps no server-side conversation, so
 * the whole history is replayed on every request and `resume` is ignored.
 *
 * Constructing it performs no I/O (rule A-REQ-01).
 *
 * @example
 * const agent = createAgent({ model: 'gemini-2.5-flash' }, { adapter: new GeminiAdapter() })
 */
export class GeminiAdapter implements AgentAdapter {
  readonly specificationVersion = 'v1' as const
  readonly #client: GoogleGenAI
  readonly #ownClient: boolean
  readonly #model: string
  readonly #idleTimeoutMs: number
  readonly #secrets: readonly string[]
  /** The `fetch` the requests go through; `undefined`: the global one, looked up per request. */
  readonly #baseFetch: typeof fetch | undefined

  constructor(options: GeminiAdapterOptions = {}) {
    const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS
    if (typeof idleTimeoutMs !== 'number' || !(idleTimeoutMs > 0) || !Number.isFinite(idleTimeoutMs)) {
      throw new ConfigurationError(
        'GeminiAdapter: idleTimeoutMs must be a positive, finite number of milliseconds.',
      )
    }
    if (options.model !== undefined && (typeof options.model !== 'string' || options.model === '')) {
      throw new ConfigurationError('GeminiAdapter: model must be a non-empty string.')
    }
    if (options.httpOptions?.retryOptions !== undefined) {
      throw new ConfigurationError(
        'GeminiAdapter: httpOptions.retryOptions is not supported; retries are done by the agent (AgentConfig.retry).',
      )
    }
    this.#idleTimeoutMs = idleTimeoutMs
    this.#model = options.model ?? DEFAULT_GEMINI_MODEL

    if (options.client !== undefined) {
      if (
        options.apiKey !== undefined ||
        options.baseURL !== undefined ||
        options.httpOptions !== undefined
      ) {
        throw new ConfigurationError(
          'GeminiAdapter: pass either a ready `client` or `apiKey`/`baseURL`/`httpOptions` to build one, not both.',
        )
      }
      this.#client = options.client
      this.#ownClient = false
      this.#baseFetch = undefined
      const key = (
        options.client as unknown as { apiClient?: { getApiKey?: () => unknown } }
      ).apiClient?.getApiKey?.()
      this.#secrets = typeof key === 'string' && key !== '' ? [key] : []
      return
    }

    const apiKey =
      options.apiKey ?? nonEmpty(process.env.GEMINI_API_KEY) ?? nonEmpty(process.env.GOOGLE_API_KEY)
    if (apiKey === undefined || typeof apiKey !== 'string' || apiKey === '') {
      throw new ConfigurationError(
        'GeminiAdapter: no API key. Set GEMINI_API_KEY (or GOOGLE_API_KEY), or pass { apiKey } to the GeminiAdapter.',
      )
    }
    const baseUrl = options.baseURL
    if (
      baseUrl !== undefined &&
      options.httpOptions?.baseUrl !== undefined &&
      options.httpOptions.baseUrl !== baseUrl
    ) {
      throw new ConfigurationError('GeminiAdapter: baseURL and httpOptions.baseUrl disagree; give only one.')
    }
    const httpOptions: HttpOptions = { ...options.httpOptions }
    if (baseUrl !== undefined) httpOptions.baseUrl = baseUrl
    this.#baseFetch = options.httpOptions?.fetch
    this.#client = new GoogleGenAI({ apiKey, httpOptions })
    this.#ownClient = true
    this.#secrets = [apiKey]
  }

  /** Always `'gemini'`. */
  getName(): string {
    return GEMINI_PROVIDER
  }

  /** Streams one Gemini response for `prompt` after `options.history`. See {@link GeminiAdapter}. */
  async *stream(
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
  ): AsyncGenerator<AdapterMessage> {
    const signal = options.signal
    if (signal?.aborted) {
      throw mapGeminiError(signal.reason, {
        stopCause: { type: 'aborted', reason: signal.reason },
        secrets: this.#secrets,
      })
    }
    // Bad input fails here, before any request and before anything needs cleaning up.
    const conversation = convertToGeminiContents(prompt, {
      history: options.history,
      systemPrompt: options.systemPrompt,
    })
    const config: GenerateContentConfig = { ...geminiProviderOptions(options.providerOptions) }
    if (conversation.systemInstruction) config.systemInstruction = conversation.systemInstruction
    if (options.tools !== undefined && options.tools.length > 0) config.tools = toGeminiTools(options.tools)
    if (options.maxOutputTokens !== undefined) config.maxOutputTokens = options.maxOutputTokens
    if (options.temperature !== undefined) config.temperature = options.temperature

    const controller = new AbortController()
    let stopCause: GeminiStopCause | undefined
    const watchdog = new IdleWatchdog(this.#idleTimeoutMs, () => {
      stopCause ??= { type: 'idle-timeout', idleTimeoutMs: this.#idleTimeoutMs }
      controller.abort(new Error(`no data for ${this.#idleTimeoutMs} ms`))
    })
    const onAbort = (): void => {
      stopCause ??= { type: 'aborted', reason: signal?.reason }
      controller.abort(signal?.reason)
    }
    const seen: WatchedResponse = { headers: undefined, tail: '' }
    config.abortSignal = controller.signal
    config.httpOptions = { fetch: createWatchedFetch(this.#baseFetch ?? globalThis.fetch, watchdog, seen) }
    // A client passed in may have retries configured; a single attempt keeps retrying the kernel's job.
    if (!this.#ownClient) config.httpOptions.retryOptions = { attempts: 1 }
    signal?.addEventListener('abort', onAbort, { once: true })

    try {
      watchdog.start()
      const chunks = await this.#client.models.generateContentStream({
        model: options.model || this.#model,
        contents: conversation.contents,
        config,
      })
      for await (const message of mapGeminiStream(touching(chunks, watchdog))) {
        if (stopCause !== undefined) break
        watchdog.pause()
        yield message
        watchdog.start()
      }
      if (stopCause !== undefined)
        throw stopCause.type === 'aborted' ? stopCause.reason : new Error('idle timeout')
    } catch (error) {
      throw mapGeminiError(error, {
        secrets: this.#secrets,
        stopCause,
        responseHeaders: seen.headers,
        excerpt: malformedExcerpt(seen.tail),
      })
    } finally {
      watchdog.stop()
      signal?.removeEventListener('abort', onAbort)
      // Closes the connection after an early `break` too: the SDK does not on its own.
      controller.abort()
    }
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

function geminiProviderOptions(providerOptions: Record<string, unknown> | undefined): GeminiProviderOptions {
  const value = providerOptions?.[GEMINI_PROVIDER]
  if (value === undefined) return {}
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AdapterError('providerOptions.gemini must be an object of generateContent config fields.', {
      kind: 'invalid_request',
      provider: GEMINI_PROVIDER,
      retryable: false,
    })
  }
  const {
    abortSignal: _signal,
    httpOptions: _http,
    systemInstruction: _system,
    tools: _tools,
    ...rest
  } = value as GenerateContentConfig
  if (rest.toolConfig?.functionCallingConfig?.streamFunctionCallArguments === true) {
    throw new AdapterError(
      'providerOptions.gemini.toolConfig.functionCallingConfig.streamFunctionCallArguments is not supported by GeminiAdapter: leave it off and function calls arrive whole.',
      { kind: 'invalid_request', provider: GEMINI_PROVIDER, retryable: false },
    )
  }
  return rest
}

/**
 * Restarts the watchdog on every chunk too: a byte-level safety net in case an SDK version does not
 * route requests through `httpOptions.fetch`.
 */
async function* touching<T>(chunks: AsyncIterable<T>, watchdog: IdleWatchdog): AsyncGenerator<T> {
  for await (const chunk of chunks) {
    watchdog.touch()
    yield chunk
  }
}

/** The first `data:` frame in `tail` that is not valid JSON (cut to 200 characters), else the last bytes. */
function malformedExcerpt(tail: string): string {
  // The last piece may be a frame still arriving: only complete frames are judged.
  for (const event of tail.split(/\r\n\r\n|\n\n|\r\r/).slice(0, -1)) {
    const data = /^data:(.*)$/s.exec(event.trim())?.[1]?.trim()
    if (data === undefined) continue
    try {
      JSON.parse(data)
    } catch {
      return data.slice(0, 200)
    }
  }
  return tail.slice(-200)
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value
}
