import { AdapterError, ConfigurationError } from '@agentx/core'
import type {
  AdapterMessage,
  AdapterStreamOptions,
  AgentAdapter,
  AnyMessage,
  ContentBlock,
  Logger,
} from '@agentx/core'
import OpenAI from 'openai'
import { convertToOpenAIChatMessages } from './convert-to-openai-chat-messages.js'
import { convertToOpenAIResponsesInput } from './convert-to-openai-responses-input.js'
import { mapOpenAIChatStream } from './map-openai-chat-stream.js'
import { isUnknownPreviousResponse, mapOpenAIError } from './map-openai-error.js'
import type { OpenAIErrorContext } from './map-openai-error.js'
import { mapOpenAIResponsesStream } from './map-openai-responses-stream.js'
import type { OpenAIAdapterOptions, OpenAIApi } from './openai-adapter-options.js'
import { readServerSentEvents } from './read-server-sent-events.js'
import type { ServerSentEvent } from './read-server-sent-events.js'
import { StreamWatchdog } from './stream-watchdog.js'

const PROVIDER = 'openai'
const DEFAULT_IDLE_TIMEOUT_MS = 60_000
const OPENAI_HOST = 'api.openai.com'
/** How long to wait for the end of a body whose terminal event has arrived. */
const DRAIN_GRACE_MS = 1_000
/** Body fields the adapter owns; `providerOptions.openai` cannot replace them. */
const OWNED_FIELDS = new Set(['model', 'input', 'messages', 'stream', 'previous_response_id'])

/**
 * The AgentX adapter for OpenAI: the Responses API (default) or Chat Completions, the latter for
 * OpenAI and every compatible server (local model servers, gateways), through the official
 * `openai` SDK.
 *
 * Construct one per application and pass it as `deps.adapter` to `createAgent`; the session calls
 * {@link OpenAIAdapter.stream} once per model request. Constructing performs no I/O (rule
 * A-REQ-001). The adapter never retries (the SDK's retries are off), honours `signal` and the idle
 * timeout, and reports every failure as an `AdapterError` whose text never contains the API key.
 *
 * With `api: 'responses'` the response id is reported as the provider session id; when the next
 * request brings it back as `resume`, only the messages after that response are sent, with
 * `previous_response_id`; if OpenAI no longer knows the id, the whole history is replayed
 * (rules A-REQ-009, A-REQ-010).
 *
 * `providerOptions.openai` is merged into the request body as raw API fields (`reasoning`,
 * `store`, `tool_choice`, `parallel_tool_calls`, `service_tier`, …), except the fields the adapter
 * owns (`model`, `input`, `messages`, `stream`, `previous_response_id`).
 */
export class OpenAIAdapter implements AgentAdapter {
  readonly specificationVersion = 'v1' as const
  /** The wire protocol this adapter speaks. */
  readonly api: OpenAIApi
  readonly #client: OpenAI
  readonly #model: string | undefined
  readonly #idleTimeoutMs: number
  readonly #secrets: string[]
  readonly #logger: Logger | undefined
  readonly #isOpenAI: boolean

  constructor(options: OpenAIAdapterOptions = {}) {
    const api = options.api ?? 'responses'
    if (api !== 'responses' && api !== 'chat') {
      throw new ConfigurationError(
        `OpenAIAdapter: api must be 'responses' or 'chat', got ${JSON.stringify(api)}.`,
      )
    }
    const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS
    if (typeof idleTimeoutMs !== 'number' || Number.isNaN(idleTimeoutMs) || idleTimeoutMs <= 0) {
      throw new ConfigurationError(
        `OpenAIAdapter: idleTimeoutMs must be a positive number of milliseconds (or Infinity), got ${String(idleTimeoutMs)}.`,
      )
    }
    if (options.model !== undefined && (typeof options.model !== 'string' || options.model === '')) {
      throw new ConfigurationError('OpenAIAdapter: model must be a non-empty string when given.')
    }
    this.api = api
    this.#idleTimeoutMs = idleTimeoutMs
    this.#model = options.model
    this.#logger = options.logger
    if (options.client) {
      this.#client = options.client
      const key = (options.client as { apiKey?: unknown }).apiKey
      this.#secrets = typeof key === 'string' && key !== '' ? [key] : []
    } else {
      const { client, apiKey } = buildClient(options)
      this.#client = client
      this.#secrets = apiKey === undefined ? [] : [apiKey]
    }
    this.#isOpenAI = hostOf(this.#client.baseURL) === OPENAI_HOST
  }

  /** Returns `'openai'`, the `provider` of every error this adapter throws. */
  getName(): string {
    return PROVIDER
  }

  /** Streams one model response for `prompt` after `options.history`. */
  stream(prompt: string | ContentBlock[], options: AdapterStreamOptions): AsyncIterable<AdapterMessage> {
    return this.#stream(prompt, options)
  }

  async *#stream(
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
  ): AsyncGenerator<AdapterMessage> {
    const watchdog = new StreamWatchdog(options.signal, this.#idleTimeoutMs)
    const errorContext = (): OpenAIErrorContext => ({
      provider: PROVIDER,
      secrets: this.#secrets,
      stopped: watchdog.reason,
      abortReason: watchdog.callerReason,
      idleTimeoutMs: this.#idleTimeoutMs,
    })
    let source: ServerSentEventSource | undefined
    try {
      if (watchdog.reason === 'aborted') throw new Error('aborted before the request')
      const model = options.model || this.#model
      if (!model) {
        throw new AdapterError(
          'No model given: set the session model, send options.model or OpenAIAdapter({ model }).',
          {
            kind: 'invalid_request',
            provider: PROVIDER,
          },
        )
      }
      const extra = readProviderOptions(options.providerOptions)
      const response =
        this.api === 'responses'
          ? await this.#openResponses(model, prompt, options, extra, watchdog)
          : await this.#openChat(model, prompt, options, extra, watchdog)
      source = new ServerSentEventSource(readServerSentEvents(response, () => watchdog.touch()))
      const context = { error: errorContext() }
      const mapped =
        this.api === 'responses'
          ? mapOpenAIResponsesStream(source, { ...context, emitSession: extra.store !== false })
          : mapOpenAIChatStream(source, context)
      for await (const message of mapped) {
        if (watchdog.reason !== undefined) break
        yield message
      }
      if (watchdog.reason !== undefined) throw new Error('stopped')
      watchdog.shorten(DRAIN_GRACE_MS)
      await source.drain()
    } catch (error) {
      throw mapOpenAIError(error, errorContext())
    } finally {
      watchdog.dispose()
      await source?.close()
    }
  }

  async #openResponses(
    model: string,
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
    extra: Record<string, unknown>,
    watchdog: StreamWatchdog,
  ): Promise<ReadableStream<Uint8Array>> {
    const body: Record<string, unknown> = { ...withoutOwned(extra), model, stream: true }
    if (options.systemPrompt !== undefined && options.systemPrompt !== '')
      body.instructions = options.systemPrompt
    if (options.tools && options.tools.length > 0) {
      body.tools = options.tools.map((tool) => ({
        type: 'function',
        name: tool.name,
        description: tool.description,
        parameters: tool.inputSchema,
        strict: false,
      }))
    }
    if (options.maxOutputTokens !== undefined) body.max_output_tokens = options.maxOutputTokens
    if (options.temperature !== undefined) body.temperature = options.temperature
    if (extra.conversation !== undefined && extra.conversation !== null) {
      // A Conversations API conversation holds the history and excludes previous_response_id.
      const since = options.resume ? messagesAfterResponse(options.history, options.resume) : []
      const input = convertToOpenAIResponsesInput(since, prompt, { pairToolCalls: false })
      return await this.#post('/responses', { ...body, input }, watchdog)
    }
    const resume = extra.store === false ? undefined : options.resume
    if (resume !== undefined && resume !== '') {
      const input = convertToOpenAIResponsesInput(messagesAfterResponse(options.history, resume), prompt, {
        pairToolCalls: false,
      })
      try {
        return await this.#post('/responses', { ...body, input, previous_response_id: resume }, watchdog)
      } catch (error) {
        if (watchdog.reason !== undefined || !isUnknownPreviousResponse(error)) throw error
        this.#logger?.warn(
          'agentx: OpenAI no longer knows the previous response; replaying the conversation',
          {
            previousResponseId: resume,
            messages: options.history.length,
          },
        )
      }
    }
    const input = convertToOpenAIResponsesInput(options.history, prompt, { pairToolCalls: true })
    return await this.#post('/responses', { ...body, input }, watchdog)
  }

  async #openChat(
    model: string,
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
    extra: Record<string, unknown>,
    watchdog: StreamWatchdog,
  ): Promise<ReadableStream<Uint8Array>> {
    const streamOptions = extra.stream_options
    const body: Record<string, unknown> = {
      ...withoutOwned(extra),
      model,
      messages: convertToOpenAIChatMessages(options.systemPrompt, options.history, prompt),
      stream: true,
      stream_options:
        streamOptions === null
          ? undefined
          : { include_usage: true, ...(typeof streamOptions === 'object' ? streamOptions : {}) },
    }
    if (body.stream_options === undefined) delete body.stream_options
    if (options.tools && options.tools.length > 0) {
      body.tools = options.tools.map((tool) => ({
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
      }))
    }
    if (options.maxOutputTokens !== undefined) {
      // OpenAI deprecated max_tokens (reasoning models reject it); compatible servers mostly know only max_tokens.
      body[this.#isOpenAI ? 'max_completion_tokens' : 'max_tokens'] = options.maxOutputTokens
    }
    if (options.temperature !== undefined) body.temperature = options.temperature
    return await this.#post('/chat/completions', body, watchdog)
  }

  /** Sends a streaming POST through the SDK (auth, headers, error classes) and returns the raw body. */
  async #post(
    path: string,
    body: Record<string, unknown>,
    watchdog: StreamWatchdog,
  ): Promise<ReadableStream<Uint8Array>> {
    const response = await this.#client
      .post(path, { body, stream: true, signal: watchdog.signal, maxRetries: 0 })
      .asResponse()
    watchdog.touch()
    const type = response.headers.get('content-type') ?? ''
    if (response.body === null || /application\/json/i.test(type)) {
      const text = await response.text().catch(() => '')
      throw new AdapterError(
        `The server at ${this.#client.baseURL} answered without a stream (content-type ${type || 'none'}); it may not support streaming: ${text.slice(0, 200)}`,
        { kind: 'unknown', provider: PROVIDER, retryable: false, status: response.status },
      )
    }
    return response.body
  }
}

/**
 * Reads events for a mapper without letting the mapper close the connection when it stops at
 * the terminal event: the adapter reads the rest (normally nothing) so that the server finishes
 * its response before the connection is released.
 */
class ServerSentEventSource implements AsyncIterable<ServerSentEvent> {
  readonly #iterator: AsyncGenerator<ServerSentEvent, void, undefined>

  constructor(events: AsyncGenerator<ServerSentEvent, void, undefined>) {
    this.#iterator = events
  }

  [Symbol.asyncIterator](): AsyncIterator<ServerSentEvent> {
    return { next: () => this.#iterator.next() }
  }

  /** Reads to the end; a failure after the terminal event changes nothing and is ignored. */
  async drain(): Promise<void> {
    try {
      for (;;) if ((await this.#iterator.next()).done) return
    } catch {
      // The response was already complete.
    }
  }

  async close(): Promise<void> {
    await this.#iterator.return(undefined).catch(() => undefined)
  }
}

function buildClient(options: OpenAIAdapterOptions): { client: OpenAI; apiKey: string | undefined } {
  const baseURL = options.baseURL ?? readEnv('OPENAI_BASE_URL')
  if (baseURL !== undefined) {
    try {
      new URL(baseURL)
    } catch (error) {
      throw new ConfigurationError(`OpenAIAdapter: baseURL is not a valid URL: ${JSON.stringify(baseURL)}.`, {
        cause: error,
      })
    }
  }
  const apiKey = options.apiKey ?? readEnv('OPENAI_API_KEY')
  const keyless = apiKey === undefined || apiKey === ''
  if (keyless && (baseURL === undefined || hostOf(baseURL) === OPENAI_HOST)) {
    throw new ConfigurationError(
      'OpenAIAdapter: no API key. Set OPENAI_API_KEY or pass new OpenAIAdapter({ apiKey }); a key is optional only with a custom baseURL.',
    )
  }
  const headers: Record<string, string | null> = { ...options.headers }
  // The SDK insists on a key; a local server gets a placeholder that is never sent.
  if (keyless) headers.Authorization = null
  const organization = options.organization ?? readEnv('OPENAI_ORG_ID')
  const project = options.project ?? readEnv('OPENAI_PROJECT_ID')
  const client = new OpenAI({
    apiKey: keyless ? 'agentx-no-key' : apiKey,
    maxRetries: 0,
    defaultHeaders: headers,
    ...(baseURL === undefined ? {} : { baseURL }),
    ...(organization === undefined ? {} : { organization }),
    ...(project === undefined ? {} : { project }),
  })
  return { client, apiKey: keyless ? undefined : apiKey }
}

/** The messages after the agent message that the response `responseId` produced (none found: none). */
function messagesAfterResponse(history: readonly AnyMessage[], responseId: string): AnyMessage[] {
  for (let index = history.length - 1; index >= 0; index--) {
    const message = history[index]!
    if (message.type !== 'agent' || !Array.isArray(message.content)) continue
    const produced = message.content.some(
      (block) =>
        (block.providerMetadata?.openai as { responseId?: unknown } | undefined)?.responseId === responseId,
    )
    if (produced) return history.slice(index + 1)
  }
  return []
}

function readProviderOptions(providerOptions: Record<string, unknown> | undefined): Record<string, unknown> {
  const value = providerOptions?.openai
  if (value === undefined) return {}
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AdapterError('providerOptions.openai must be an object of request body fields.', {
      kind: 'invalid_request',
      provider: PROVIDER,
    })
  }
  return value as Record<string, unknown>
}

function withoutOwned(extra: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(extra).filter(([key]) => !OWNED_FIELDS.has(key)))
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname
  } catch {
    return undefined
  }
}

function readEnv(name: string): string | undefined {
  const value = typeof process === 'undefined' ? undefined : process.env[name]?.trim()
  return value === undefined || value === '' ? undefined : value
}
