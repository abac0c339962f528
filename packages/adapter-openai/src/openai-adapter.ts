import { AdapterError, ConfigurationError, rejectUnknownOptions } from '@agentx/core'
import type { AdapterStreamOptions, AnyMessage, ContentBlock, Logger } from '@agentx/core'
import { invalidOption, readBaseUrl, readEnv, readIdleTimeoutMs } from '@agentx/core/provider'
import { readProviderOptions, readStringOption, ServerSentEventAdapter } from '@agentx/core/provider'
import { checkSendOptions, conflictingOutputOption } from '@agentx/core/provider'
import type { OpenedEventStream, ProviderIdentity } from '@agentx/core/provider'
import OpenAI from 'openai'
import { convertToOpenAIChatMessages } from './convert-to-openai-chat-messages.js'
import { convertToOpenAIResponsesInput } from './convert-to-openai-responses-input.js'
import { OpenAIChatStreamMapper } from './map-openai-chat-stream.js'
import {
  isUnknownPreviousResponse,
  mapOpenAIError,
  OPENAI_PROVIDER,
  openAIIdentity,
} from './map-openai-error.js'
import { OpenAIResponsesStreamMapper } from './map-openai-responses-stream.js'
import type { OpenAIAdapterOptions, OpenAIApi } from './openai-adapter-options.js'
import { toOpenAIJsonSchemaFormat } from './openai-output-format.js'

const OPENAI_HOST = 'api.openai.com'
/** Body fields the adapter owns; `providerOptions.openai` cannot replace them. */
const OWNED_FIELDS = ['model', 'input', 'messages', 'stream', 'previous_response_id']
/** The function names both OpenAI APIs accept. */
const OPENAI_TOOL_NAME = { pattern: /^[a-zA-Z0-9_-]{1,64}$/, description: '1–64 letters, digits, _ or -' }

/** The options {@link OpenAIAdapter} knows (the compiler checks the list is whole); any other key is refused. */
const OPTION_KEYS = Object.keys({
  apiKey: true,
  baseURL: true,
  apiVersion: true,
  model: true,
  api: true,
  client: true,
  idleTimeoutMs: true,
  organization: true,
  project: true,
  headers: true,
  logger: true,
} satisfies Record<keyof OpenAIAdapterOptions, true>)

/**
 * The AgentX adapter for OpenAI: the Responses API (default) or Chat Completions, for OpenAI
 * itself and for every compatible server or gateway (local model servers, LiteLLM, OpenRouter,
 * Azure OpenAI …), through the official `openai` SDK.
 *
 * The API is chosen by `api` alone, never by the base URL: the Responses API works through a
 * gateway as well (`baseURL` plus the default `api: 'responses'`). The SDK builds, authenticates
 * and sends each request and maps HTTP errors; the adapter reads the raw streaming response with
 * the shared server-sent-event reader of `@agentx/core/provider`, so abort, idle timeout and
 * error behaviour are those of every other adapter.
 *
 * Construct one per application and pass it as `deps.adapter` to `createAgent`; the session calls
 * {@link OpenAIAdapter.stream} once per model request. Constructing performs no I/O (rule
 * A-REQ-001). The adapter never retries (the SDK's retries are off) and reports every failure as
 * an `AdapterError` whose text never contains the API key.
 *
 * With `api: 'responses'` the response id is reported as the provider session id; when the next
 * request brings it back as `resume`, only the messages after that response are sent, with
 * `previous_response_id`; if OpenAI no longer knows the id, the whole history is replayed
 * (rules A-REQ-009, A-REQ-010).
 *
 * `providerOptions.openai` is merged into the request body as raw API fields (`reasoning`,
 * `store`, `tool_choice`, `parallel_tool_calls`, `service_tier`, …), except the fields the adapter
 * owns (`model`, `input`, `messages`, `stream`, `previous_response_id`), which are refused.
 *
 * Structured output (`options.output`) is sent as Responses `text.format` or Chat Completions
 * `response_format`, both `json_schema` with the output's name, strict only when the schema
 * qualifies (see {@link toOpenAIJsonSchemaFormat}).
 */
export class OpenAIAdapter extends ServerSentEventAdapter {
  /** The wire protocol this adapter speaks. */
  readonly api: OpenAIApi
  readonly #client: OpenAI
  readonly #identity: ProviderIdentity
  readonly #model: string | undefined
  readonly #apiVersion: string | undefined
  readonly #logger: Logger | undefined
  readonly #isOpenAI: boolean

  /**
   * @throws {ConfigurationError} when OpenAI itself is addressed without an API key, or for an
   * unknown option (naming the closest one: `baseUrl` → `baseURL`).
   * @throws {ValidationError} when an option has a value that can never work (naming it).
   */
  constructor(options: OpenAIAdapterOptions = {}) {
    rejectUnknownOptions(options, OPTION_KEYS, 'OpenAIAdapter')
    const unkeyed = openAIIdentity([])
    const api = options.api ?? 'responses'
    if (api !== 'responses' && api !== 'chat')
      throw invalidOption(unkeyed, 'api', "'responses' or 'chat'", api)
    const idleTimeoutMs = readIdleTimeoutMs(unkeyed, options.idleTimeoutMs)
    const { client, identity } = resolveClient(options, unkeyed)
    super({ provider: identity, idleTimeoutMs, mapError: (error) => mapOpenAIError(error, identity) })
    this.api = api
    this.#client = client
    this.#identity = identity
    this.#model = readStringOption(unkeyed, 'model', options.model)
    this.#apiVersion = readStringOption(
      unkeyed,
      'apiVersion',
      options.apiVersion ?? readEnv('OPENAI_API_VERSION'),
    )
    this.#logger = options.logger
    this.#isOpenAI = hostOf(client.baseURL) === OPENAI_HOST
  }

  /** The model of a request that names none: `options.model` (OpenAI has no default; absent then). */
  get defaultModel(): string | undefined {
    return this.#model
  }

  /** Sends one request of the configured API through the SDK and hands its raw response to the shared reader. */
  protected override async openStream(
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
    signal: AbortSignal,
  ): Promise<OpenedEventStream> {
    const model = options.model || this.#model
    if (!model) {
      throw new AdapterError(
        'No model given: set the session model, send options.model or OpenAIAdapter({ model }).',
        { kind: 'invalid_request', provider: OPENAI_PROVIDER },
      )
    }
    checkSendOptions(this.#identity, options, { toolName: OPENAI_TOOL_NAME })
    const extra = readProviderOptions(this.#identity, options.providerOptions, OWNED_FIELDS)
    if (this.api === 'chat') {
      const response = await this.#post(
        '/chat/completions',
        this.#chatBody(model, prompt, options, extra),
        signal,
      )
      return { response, mapper: new OpenAIChatStreamMapper(this.#identity) }
    }
    const response = await this.#openResponses(model, prompt, options, extra, signal)
    return {
      response,
      mapper: new OpenAIResponsesStreamMapper(this.#identity, { emitSession: extra.store !== false }),
    }
  }

  /**
   * Refuses, before the kernel stores anything, every option value {@link OpenAIAdapter.stream}
   * would refuse (reserved or conflicting `providerOptions` fields, bad option types): it builds
   * the request body of the configured API with these options and no history.
   *
   * @throws {ValidationError} naming the option.
   */
  checkOptions(options: AdapterStreamOptions): void {
    checkSendOptions(this.#identity, options, { toolName: OPENAI_TOOL_NAME })
    const extra = readProviderOptions(this.#identity, options.providerOptions, OWNED_FIELDS)
    const model = options.model || this.#model || 'unset'
    const empty = { ...options, history: [] }
    if (this.api === 'chat') this.#chatBody(model, '.', empty, extra)
    else this.#responsesBody(model, empty, extra)
  }

  async #openResponses(
    model: string,
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
    extra: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Response> {
    const body = this.#responsesBody(model, options, extra)
    if (extra.conversation !== undefined && extra.conversation !== null) {
      // A Conversations API conversation holds the history and excludes previous_response_id.
      const since = options.resume ? messagesAfterResponse(options.history, options.resume) : []
      const input = convertToOpenAIResponsesInput(since, prompt, { pairToolCalls: false })
      return await this.#post('/responses', { ...body, input }, signal)
    }
    const resume = extra.store === false ? undefined : options.resume
    if (resume !== undefined && resume !== '') {
      const input = convertToOpenAIResponsesInput(messagesAfterResponse(options.history, resume), prompt, {
        pairToolCalls: false,
      })
      try {
        return await this.#post('/responses', { ...body, input, previous_response_id: resume }, signal)
      } catch (error) {
        if (signal.aborted || !isUnknownPreviousResponse(error)) throw error
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
    return await this.#post('/responses', { ...body, input }, signal)
  }

  /** The Responses API request body without its input: validates the options it takes in. */
  #responsesBody(
    model: string,
    options: AdapterStreamOptions,
    extra: Record<string, unknown>,
  ): Record<string, unknown> {
    const body: Record<string, unknown> = { ...extra, model, stream: true }
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
    if (options.output !== undefined) {
      // Structured output is `text.format`; the other `text` fields (`verbosity`) stay.
      const text = extra.text
      if (text !== undefined && !isObject(text))
        throw invalidOption(this.#identity, 'providerOptions.openai.text', 'an object', text)
      if (text?.format !== undefined && text.format !== null)
        throw conflictingOutputOption(this.#identity, 'text.format')
      body.text = { ...text, format: { type: 'json_schema', ...toOpenAIJsonSchemaFormat(options.output) } }
    }
    return body
  }

  #chatBody(
    model: string,
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
    extra: Record<string, unknown>,
  ): Record<string, unknown> {
    const streamOptions = extra.stream_options
    const body: Record<string, unknown> = {
      ...extra,
      model,
      messages: convertToOpenAIChatMessages(options.systemPrompt, options.history, prompt),
      stream: true,
    }
    if (streamOptions === null) delete body.stream_options
    else
      body.stream_options = {
        include_usage: true,
        ...(typeof streamOptions === 'object' ? streamOptions : {}),
      }
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
    if (options.output !== undefined) {
      if (extra.response_format !== undefined && extra.response_format !== null)
        throw conflictingOutputOption(this.#identity, 'response_format')
      body.response_format = { type: 'json_schema', json_schema: toOpenAIJsonSchemaFormat(options.output) }
    }
    return body
  }

  /** Sends a streaming POST through the SDK (auth, headers, error classes) and returns the raw response. */
  #post(path: string, body: Record<string, unknown>, signal: AbortSignal): Promise<Response> {
    return this.#client
      .post(path, {
        body,
        stream: true,
        signal,
        maxRetries: 0,
        ...(this.#apiVersion === undefined ? {} : { query: { 'api-version': this.#apiVersion } }),
      })
      .asResponse()
  }
}

/** The placeholder key the SDK gets for a keyless local server; it is never sent. */
const NO_KEY = 'agentx-no-key'

/** The client of {@link OpenAIAdapter}: the one given, or one built from the options; and the identity with its key. */
function resolveClient(
  options: OpenAIAdapterOptions,
  unkeyed: ProviderIdentity,
): { client: OpenAI; identity: ProviderIdentity } {
  if (options.client) {
    const key = (options.client as { apiKey?: unknown }).apiKey
    const secrets = typeof key === 'string' && key !== '' && key !== NO_KEY ? [key] : []
    return { client: options.client, identity: openAIIdentity(secrets) }
  }
  const { client, apiKey } = buildClient(options, unkeyed)
  return { client, identity: openAIIdentity(apiKey === undefined ? [] : [apiKey]) }
}

function buildClient(
  options: OpenAIAdapterOptions,
  identity: ProviderIdentity,
): { client: OpenAI; apiKey: string | undefined } {
  const baseURL = readBaseUrl(identity, 'baseURL', options.baseURL, 'OPENAI_BASE_URL')
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
    apiKey: keyless ? NO_KEY : apiKey,
    maxRetries: 0,
    defaultHeaders: headers,
    // A library stays quiet: the SDK logs only when OPENAI_LOG asks for it.
    ...(readEnv('OPENAI_LOG') === undefined ? { logLevel: 'off' as const } : {}),
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

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname
  } catch {
    return undefined
  }
}
