import type {
  AdapterMessage,
  AdapterStreamOptions,
  AgentAdapter,
  ContentBlock,
  ToolDefinition,
} from '@agentx/core'
import { ConfigurationError, ValidationError } from '@agentx/core'
import { Anthropic } from '@anthropic-ai/sdk'
import type { MessageCreateParamsStreaming } from '@anthropic-ai/sdk/resources/messages'
import { Stream } from '@anthropic-ai/sdk/core/streaming'
import { convertToClaudeMessages } from './convert-to-claude-messages.js'
import { CLAUDE_PROVIDER, type ClaudeStopCause, mapClaudeError } from './map-claude-error.js'
import { type ClaudeStreamEvent, mapClaudeStream } from './map-claude-stream.js'

/** The model used when neither the session nor {@link ClaudeAdapterOptions.model} names one. */
export const DEFAULT_CLAUDE_MODEL = 'claude-sonnet-5-5'
/** `max_tokens` when neither the send nor {@link ClaudeAdapterOptions.maxOutputTokens} sets it. */
export const DEFAULT_CLAUDE_MAX_OUTPUT_TOKENS = 8192
/** How long a stream may stay silent before it fails with kind `timeout`. */
export const DEFAULT_CLAUDE_IDLE_TIMEOUT_MS = 60_000

/** Request fields the adapter owns; `providerOptions.claude` cannot set them. */
const RESERVED_BODY_FIELDS = new Set(['model', 'messages', 'stream'])
/** How many trailing characters of the stream a malformed-frame error quotes. */
const EXCERPT_LENGTH = 240

/** Options of {@link ClaudeAdapter}. */
export interface ClaudeAdapterOptions {
  /** The Anthropic API key. Default is `process.env.ANTHROPIC_API_KEY`. Never logged or put in an error. */
  apiKey?: string
  /**
   * The API origin, without `/v1` (the SDK adds it). Default is the SDK's: `ANTHROPIC_BASE_URL`,
   * else `https://api.anthropic.com`.
   */
  baseURL?: string
  /** The model when a session names none. Default is {@link DEFAULT_CLAUDE_MODEL}. */
  model?: string
  /** `max_tokens` when a send does not set `maxOutputTokens`. Default is {@link DEFAULT_CLAUDE_MAX_OUTPUT_TOKENS}. */
  maxOutputTokens?: number
  /**
   * An `Anthropic` client to use as is (its auth, base URL, fetch, logging). `apiKey` and `baseURL`
   * are then ignored. Each request still runs with `maxRetries: 0`. Default is a client the adapter creates.
   */
  client?: Anthropic
  /**
   * Fails a request with kind `timeout` (and closes its connection) when no byte arrives for this
   * long, from sending the request to the end of the stream. Default is `60_000` ms.
   */
  idleTimeoutMs?: number
}

/**
 * Claude-specific per-request options, passed as `providerOptions: { claude: { … } }`.
 *
 * Every field except `headers` is a Messages API body field sent as is (snake_case, as the API
 * names it): `thinking`, `tool_choice`, `stop_sequences`, `metadata`, `top_k`, `service_tier`,
 * `output_config` … They override what the adapter would send, except `model`, `messages` and
 * `stream`, which the adapter owns.
 */
export interface ClaudeProviderOptions {
  /** Extra HTTP headers (e.g. `anthropic-beta`). */
  headers?: Record<string, string>
  /** Extended thinking, e.g. `{ type: 'enabled', budget_tokens: 4096 }`. */
  thinking?: Record<string, unknown>
  tool_choice?: Record<string, unknown>
  stop_sequences?: string[]
  [field: string]: unknown
}

/**
 * The {@link AgentAdapter} for Claude, through the official `@anthropic-ai/sdk` Messages API.
 *
 * Streams text, extended thinking (signatures kept so the next request sends them back) and tool
 * calls (parallel ones included), reports usage with cache tokens, and maps every failure to an
 * {@link AdapterError} kind. It never retries on its own (`maxRetries: 0`): the kernel's retry
 * policy is the only one. Constructing it performs no I/O.
 *
 * @example
 * const agent = createAgent({ model: 'claude-sonnet-5-5' }, { adapter: new ClaudeAdapter() })
 */
export class ClaudeAdapter implements AgentAdapter {
  readonly specificationVersion = 'v1' as const
  readonly #client: Anthropic
  readonly #model: string
  readonly #maxOutputTokens: number
  readonly #idleTimeoutMs: number
  readonly #secrets: string[]

  /**
   * @throws {ConfigurationError} when there is no API key (neither `apiKey`, `ANTHROPIC_API_KEY`
   *   nor `client`) or an option is invalid.
   */
  constructor(options: ClaudeAdapterOptions = {}) {
    if (typeof options !== 'object' || options === null)
      throw new ConfigurationError('ClaudeAdapter options must be an object.')
    if (options.model !== undefined && (typeof options.model !== 'string' || options.model.trim() === '')) {
      throw new ConfigurationError('ClaudeAdapter option `model` must be a non-empty string.')
    }
    this.#model = options.model ?? DEFAULT_CLAUDE_MODEL
    this.#maxOutputTokens =
      positiveInteger(options.maxOutputTokens, 'maxOutputTokens') ?? DEFAULT_CLAUDE_MAX_OUTPUT_TOKENS
    this.#idleTimeoutMs =
      positiveInteger(options.idleTimeoutMs, 'idleTimeoutMs') ?? DEFAULT_CLAUDE_IDLE_TIMEOUT_MS
    if (options.client !== undefined) {
      if (
        typeof options.client !== 'object' ||
        options.client === null ||
        typeof options.client.messages?.create !== 'function'
      ) {
        throw new ConfigurationError(
          'ClaudeAdapter option `client` must be an Anthropic client from @anthropic-ai/sdk.',
        )
      }
      this.#client = options.client
      const key = (options.client as { apiKey?: unknown }).apiKey
      this.#secrets = typeof key === 'string' && key !== '' ? [key] : []
      return
    }
    const apiKey = options.apiKey ?? process.env.ANTHROPIC_API_KEY
    if (typeof apiKey !== 'string' || apiKey.trim() === '') {
      throw new ConfigurationError(
        'No Anthropic API key: set ANTHROPIC_API_KEY, or pass `apiKey` or `client` to the Claude adapter.',
      )
    }
    if (
      options.baseURL !== undefined &&
      (typeof options.baseURL !== 'string' || !/^https?:\/\//i.test(options.baseURL))
    ) {
      throw new ConfigurationError('ClaudeAdapter option `baseURL` must be an http(s) URL.')
    }
    this.#secrets = [apiKey]
    this.#client = new Anthropic({
      apiKey,
      maxRetries: 0,
      // A library stays quiet: the SDK logs (e.g. a malformed frame) only when ANTHROPIC_LOG asks for it.
      ...(process.env.ANTHROPIC_LOG === undefined ? { logLevel: 'off' as const } : {}),
      ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
    })
  }

  /** Returns `'claude'`, the provider name on every {@link AdapterError} this adapter throws. */
  getName(): string {
    return CLAUDE_PROVIDER
  }

  /**
   * Streams one Messages API response for `prompt` after `options.history`.
   *
   * @throws {AdapterError} for every failure of the request (kinds per `mapClaudeError`), `aborted`
   *   when `options.signal` aborts, `timeout` after `idleTimeoutMs` of silence, `network` for a
   *   stream cut before `message_stop`.
   * @throws {ValidationError} for options or content the Messages API cannot take.
   */
  async *stream(
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
  ): AsyncGenerator<AdapterMessage, void, undefined> {
    const signal = options.signal
    if (signal?.aborted)
      throw mapClaudeError(signal.reason, { stopCause: { type: 'aborted', reason: signal.reason } })
    const { body, headers } = this.#buildRequest(prompt, options)

    const controller = new AbortController()
    let stopCause: ClaudeStopCause | undefined
    const stop = (cause: ClaudeStopCause): void => {
      if (stopCause !== undefined) return
      stopCause = cause
      controller.abort()
    }
    const onAbort = (): void => stop({ type: 'aborted', reason: signal?.reason })
    signal?.addEventListener('abort', onAbort, { once: true })
    let timer: ReturnType<typeof setTimeout> | undefined
    const idleTimeoutMs = this.#idleTimeoutMs
    const arm = (): void => {
      clearTimeout(timer)
      timer = setTimeout(() => stop({ type: 'idle-timeout', idleTimeoutMs }), idleTimeoutMs)
    }
    let excerpt = ''
    const context = (): Parameters<typeof mapClaudeError>[1] => ({
      secrets: this.#secrets,
      stopCause,
      excerpt,
    })

    arm()
    try {
      let response: Response
      try {
        response = await this.#client.messages
          .create(body as unknown as MessageCreateParamsStreaming, {
            signal: controller.signal,
            maxRetries: 0,
            headers,
          })
          .asResponse()
      } catch (error) {
        throw mapClaudeError(error, context())
      }
      const decoder = new TextDecoder()
      const watched = watchBody(response, (chunk) => {
        arm()
        excerpt = (excerpt + decoder.decode(chunk, { stream: true })).slice(-EXCERPT_LENGTH)
      })
      const events = Stream.fromSSEResponse<ClaudeStreamEvent>(watched, controller, this.#client)
      let delivered = false
      try {
        for await (const message of mapClaudeStream(events)) {
          if (stopCause !== undefined) break
          yield message
          if (message.type === 'message') delivered = true
        }
      } catch (error) {
        throw mapClaudeError(error, context())
      }
      // Stopped (abort, idle timeout) before the response was complete: report why it ended.
      if (stopCause !== undefined && !delivered) throw mapClaudeError(undefined, context())
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      // Releases the connection after an early `break`, an error or a stall (a no-op once complete).
      controller.abort()
    }
  }

  #buildRequest(
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
  ): { body: Record<string, unknown>; headers: Record<string, string> } {
    if (typeof prompt !== 'string' && !Array.isArray(prompt))
      throw new ValidationError('The prompt must be a string or an array of content blocks.')
    const { headers, ...extra } = claudeOptions(options.providerOptions)
    const { system, messages } = convertToClaudeMessages({
      history: options.history ?? [],
      prompt,
      systemPrompt: options.systemPrompt,
    })
    const model = typeof options.model === 'string' && options.model !== '' ? options.model : this.#model
    const maxTokens =
      positiveInteger(options.maxOutputTokens, 'maxOutputTokens', ValidationError) ?? this.#maxOutputTokens
    const body: Record<string, unknown> = { model, max_tokens: maxTokens, messages }
    if (system !== undefined) body.system = system
    if (options.tools !== undefined && options.tools.length > 0) body.tools = options.tools.map(toClaudeTool)
    if (options.temperature !== undefined) body.temperature = options.temperature
    Object.assign(body, extra)
    body.stream = true
    // A thinking budget must stay below max_tokens: grow max_tokens by the budget when it would not.
    const thinking = body.thinking as { type?: unknown; budget_tokens?: unknown } | undefined
    if (
      thinking?.type === 'enabled' &&
      typeof thinking.budget_tokens === 'number' &&
      thinking.budget_tokens >= (body.max_tokens as number)
    ) {
      body.max_tokens = (body.max_tokens as number) + thinking.budget_tokens
    }
    return { body, headers: headers ?? {} }
  }
}

/** Creates a {@link ClaudeAdapter}; the factory `createAgent` calls for its default adapter. */
export function createClaudeAdapter(options: ClaudeAdapterOptions = {}): ClaudeAdapter {
  return new ClaudeAdapter(options)
}

function toClaudeTool(tool: ToolDefinition): Record<string, unknown> {
  if (typeof tool?.name !== 'string' || tool.name === '')
    throw new ValidationError('Every tool needs a non-empty name.')
  const schema = tool.inputSchema ?? { type: 'object', properties: {} }
  return { name: tool.name, description: tool.description ?? '', input_schema: schema }
}

function claudeOptions(providerOptions: Record<string, unknown> | undefined): ClaudeProviderOptions {
  const value = providerOptions?.[CLAUDE_PROVIDER]
  if (value === undefined) return {}
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError('providerOptions.claude must be an object of Messages API request fields.')
  }
  for (const field of Object.keys(value)) {
    if (RESERVED_BODY_FIELDS.has(field)) {
      throw new ValidationError(
        `providerOptions.claude.${field} cannot be set: the adapter sends it (use the send options instead).`,
      )
    }
  }
  const { headers } = value as { headers?: unknown }
  if (
    headers !== undefined &&
    (typeof headers !== 'object' ||
      headers === null ||
      Object.values(headers).some((v) => typeof v !== 'string'))
  ) {
    throw new ValidationError('providerOptions.claude.headers must map header names to strings.')
  }
  return value as ClaudeProviderOptions
}

function positiveInteger(
  value: unknown,
  name: string,
  ErrorClass: typeof ConfigurationError | typeof ValidationError = ConfigurationError,
): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new ErrorClass(`${name} must be a positive integer, got ${String(value)}.`)
  }
  return value
}

/** The same response with a body that calls `onChunk` for every chunk read (to reset the idle timer). */
function watchBody(response: Response, onChunk: (chunk: Uint8Array) => void): Response {
  if (response.body === null) return response
  const watched = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        onChunk(chunk)
        controller.enqueue(chunk)
      },
    }),
  )
  return new Response(watched, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  })
}
