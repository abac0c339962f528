import type { AdapterStreamOptions, ContentBlock, ToolDefinition } from '@agentx/core'
import { ConfigurationError, rejectUnknownOptions, ValidationError } from '@agentx/core'
import { DEFAULT_IDLE_TIMEOUT_MS, invalidOption, readBaseUrl, readEnv } from '@agentx/core/provider'
import { readIdleTimeoutMs, readPositiveInteger, readProviderOptions } from '@agentx/core/provider'
import { checkSendOptions, conflictingOutputOption, readStringOption } from '@agentx/core/provider'
import { ServerSentEventAdapter, unsupportedOption } from '@agentx/core/provider'
import type { OpenedEventStream, ProviderIdentity } from '@agentx/core/provider'
import { Anthropic } from '@anthropic-ai/sdk'
import type { MessageCreateParamsStreaming } from '@anthropic-ai/sdk/resources/messages'
import { VERSION as ANTHROPIC_SDK_VERSION } from '@anthropic-ai/sdk/version'
import { toClaudeOutputFormat } from './claude-output-format.js'
import { convertToClaudeMessages } from './convert-to-claude-messages.js'
import { claudeIdentity, mapClaudeError } from './map-claude-error.js'
import { ClaudeStreamMapper } from './map-claude-stream.js'

/** The model used when neither the session nor {@link ClaudeAdapterOptions.model} names one. */
export const DEFAULT_CLAUDE_MODEL = 'claude-sonnet-5-5'
/** `max_tokens` when neither the send nor {@link ClaudeAdapterOptions.maxOutputTokens} sets it. */
export const DEFAULT_CLAUDE_MAX_OUTPUT_TOKENS = 8192
/** How long a stream may stay silent before it fails with kind `timeout`. */
export const DEFAULT_CLAUDE_IDLE_TIMEOUT_MS: number = DEFAULT_IDLE_TIMEOUT_MS

/**
 * The first Messages API version that removed `temperature`, `top_p` and `top_k` (HTTP 400 if
 * sent). `@anthropic-ai/sdk` 1.x sends it by default.
 */
export const CLAUDE_API_VERSION_WITHOUT_SAMPLING = '2026-10-21'
/** The version `@anthropic-ai/sdk` 0.x sends, the last one that takes `temperature`. */
const CLAUDE_API_VERSION_WITH_SAMPLING = '2023-06-01'

/** Request fields the adapter owns; `providerOptions.claude` cannot set them. */
const RESERVED_BODY_FIELDS = ['model', 'messages', 'stream']
/** Sampling fields that API version {@link CLAUDE_API_VERSION_WITHOUT_SAMPLING} and later reject. */
const SAMPLING_FIELDS = ['temperature', 'top_p', 'top_k']

/** Options of {@link ClaudeAdapter}. */
export interface ClaudeAdapterOptions {
  /** The Anthropic API key. Default is `process.env.ANTHROPIC_API_KEY`. Never logged or put in an error. */
  apiKey?: string | undefined
  /**
   * The API origin, without `/v1` (the SDK adds it): a proxy, a gateway, a test server. Default is
   * `process.env.ANTHROPIC_BASE_URL`, else `https://api.anthropic.com`.
   */
  baseURL?: string | undefined
  /**
   * The Messages API version, sent as the `anthropic-version` header. Default is the version the
   * installed `@anthropic-ai/sdk` sends (`2026-10-21` for 1.x, `2023-06-01` for 0.x). Versions from
   * `2026-10-21` on reject `temperature`, `top_p` and `top_k`; the adapter refuses them before the
   * request instead (pass `'2023-06-01'` to use them).
   */
  apiVersion?: string
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
   * long, from sending the request to the end of the stream; the time the caller holds an event
   * does not count. `Infinity` disables it. Default is `60_000` ms.
   */
  idleTimeoutMs?: number
}

/**
 * Claude-specific per-request options, passed as `providerOptions: { claude: { … } }`.
 *
 * Every field except `headers` is a Messages API body field sent as is (snake_case, as the API
 * names it): `thinking`, `tool_choice`, `stop_sequences`, `metadata`, `service_tier`,
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
 * The `AgentAdapter` for Claude, through the official `@anthropic-ai/sdk` Messages API.
 *
 * The SDK builds, authenticates and sends each request and maps HTTP errors; the adapter reads the
 * raw streaming response itself (`.asResponse()`) with the shared server-sent-event reader of
 * `@agentx/core/provider`, which is faster than the SDK's own stream and keeps abort, idle timeout
 * and error behaviour identical to every other adapter.
 *
 * Streams text, extended thinking (signatures kept so the next request sends them back) and tool
 * calls (parallel ones included), reports usage with cache tokens, and maps every failure to an
 * {@link AdapterError} kind. Structured output (`options.output`) is sent as
 * `output_config.format`, its schema adapted by {@link toClaudeOutputFormat}. It never retries on its own (`maxRetries: 0`): the kernel's retry
 * policy is the only one. Constructing it performs no I/O.
 *
 * @example
 * const agent = createAgent({ model: 'claude-sonnet-5-5' }, { adapter: new ClaudeAdapter() })
 */
export class ClaudeAdapter extends ServerSentEventAdapter {
  readonly #client: Anthropic
  readonly #identity: ProviderIdentity
  readonly #model: string
  readonly #maxOutputTokens: number
  readonly #apiVersion: string | undefined
  readonly #effectiveApiVersion: string

  /**
   * @throws {ConfigurationError} when there is no API key (neither `apiKey`, `ANTHROPIC_API_KEY`
   *   nor `client`).
   * @throws {ValidationError} when an option has a value that can never work (naming it).
   */
  constructor(options: ClaudeAdapterOptions = {}) {
    const settings = readClaudeSettings(options)
    super({
      provider: settings.identity,
      idleTimeoutMs: settings.idleTimeoutMs,
      mapError: (error) => mapClaudeError(error, { secrets: settings.identity.secrets ?? [] }),
    })
    this.#client = settings.client
    this.#identity = settings.identity
    this.#model = settings.model
    this.#maxOutputTokens = settings.maxOutputTokens
    this.#apiVersion = settings.apiVersion
    this.#effectiveApiVersion = settings.apiVersion ?? sdkDefaultApiVersion()
  }

  /** The model of a request that names none: `options.model`, else {@link DEFAULT_CLAUDE_MODEL}. */
  get defaultModel(): string {
    return this.#model
  }

  /**
   * Refuses, before the kernel stores anything, every option value {@link ClaudeAdapter.stream}
   * would refuse: it builds the request body of a one-word prompt with these options.
   *
   * @throws {ValidationError} naming the option.
   */
  checkOptions(options: AdapterStreamOptions): void {
    this.#buildRequest('.', { ...options, history: [] })
  }

  /** Sends one Messages API request through the SDK and hands its raw response to the shared reader. */
  protected override async openStream(
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
    signal: AbortSignal,
  ): Promise<OpenedEventStream> {
    const { body, headers } = this.#buildRequest(prompt, options)
    const response = await this.#client.messages
      .create(body as unknown as MessageCreateParamsStreaming, { signal, maxRetries: 0, headers })
      .asResponse()
    return { response, mapper: new ClaudeStreamMapper(this.#identity) }
  }

  #buildRequest(
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
  ): { body: Record<string, unknown>; headers: Record<string, string> } {
    if (typeof prompt !== 'string' && !Array.isArray(prompt))
      throw new ValidationError('The prompt must be a string or an array of content blocks.')
    const identity = this.#identity
    const { headers, ...extra } = readProviderOptions(
      identity,
      options.providerOptions,
      RESERVED_BODY_FIELDS,
    ) as ClaudeProviderOptions
    if (
      headers !== undefined &&
      (typeof headers !== 'object' ||
        headers === null ||
        Object.values(headers).some((v) => typeof v !== 'string'))
    ) {
      throw invalidOption(
        identity,
        'providerOptions.claude.headers',
        'an object of header names to strings',
        headers,
      )
    }
    checkSendOptions(identity, options, { toolName: CLAUDE_TOOL_NAME })
    this.#checkSampling(options.temperature, extra)
    const { system, messages } = convertToClaudeMessages({
      history: options.history ?? [],
      prompt,
      systemPrompt: options.systemPrompt,
    })
    const model = typeof options.model === 'string' && options.model !== '' ? options.model : this.#model
    const maxTokens = options.maxOutputTokens ?? this.#maxOutputTokens
    const body: Record<string, unknown> = { model, max_tokens: maxTokens, messages }
    if (system !== undefined) body.system = system
    if (options.tools !== undefined && options.tools.length > 0) body.tools = options.tools.map(toClaudeTool)
    if (options.temperature !== undefined) body.temperature = options.temperature
    Object.assign(body, extra)
    declareHistoryTools(body)
    leaveOutThinkingClaudeCannotContinue(body)
    if (options.output !== undefined) body.output_config = this.#outputConfig(options.output, extra)
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
    const requestHeaders: Record<string, string> = { ...headers }
    if (this.#apiVersion !== undefined) requestHeaders['anthropic-version'] = this.#apiVersion
    return { body, headers: requestHeaders }
  }

  /**
   * `output_config` with the structured output of the send as its `format`, keeping the other
   * fields `providerOptions.claude.output_config` sets (`effort`). A format set there as well, or
   * the beta `output_format`, is refused: the two would contradict each other.
   */
  #outputConfig(
    output: NonNullable<AdapterStreamOptions['output']>,
    extra: Record<string, unknown>,
  ): Record<string, unknown> {
    const config = extra.output_config
    if (config !== undefined && config !== null && (typeof config !== 'object' || Array.isArray(config)))
      throw invalidOption(this.#identity, 'providerOptions.claude.output_config', 'an object', config)
    const given = (config ?? {}) as Record<string, unknown>
    if (given.format !== undefined && given.format !== null)
      throw conflictingOutputOption(this.#identity, 'output_config.format')
    if (extra.output_format !== undefined) throw conflictingOutputOption(this.#identity, 'output_format')
    return { ...given, format: toClaudeOutputFormat(output, this.#identity) }
  }

  /** Refuses sampling fields that the API version in use rejects with HTTP 400, before the request. */
  #checkSampling(temperature: number | undefined, extra: Record<string, unknown>): void {
    if (this.#effectiveApiVersion < CLAUDE_API_VERSION_WITHOUT_SAMPLING) return
    const sent = [
      ...(temperature === undefined ? [] : ['temperature']),
      ...SAMPLING_FIELDS.filter((field) => extra[field] !== undefined).map(
        (field) => `providerOptions.claude.${field}`,
      ),
    ]
    const option = sent[0]
    if (option === undefined) return
    throw unsupportedOption(
      this.#identity,
      option,
      `Claude API version ${this.#effectiveApiVersion}${this.#apiVersion === undefined ? ` (the default of @anthropic-ai/sdk ${ANTHROPIC_SDK_VERSION})` : ''} removed temperature, top_p and top_k and answers HTTP 400. Leave it out, or create the adapter with apiVersion: '${CLAUDE_API_VERSION_WITH_SAMPLING}' to use it.`,
    )
  }
}

/** Creates a {@link ClaudeAdapter}; the factory `createAgent` calls for its default adapter. */
export function createClaudeAdapter(options: ClaudeAdapterOptions = {}): ClaudeAdapter {
  return new ClaudeAdapter(options)
}

/** The constructor options of {@link ClaudeAdapter}, checked and resolved (the client built). */
/** The options {@link ClaudeAdapter} knows (the compiler checks the list is whole); any other key is refused. */
const OPTION_KEYS = Object.keys({
  apiKey: true,
  baseURL: true,
  apiVersion: true,
  model: true,
  maxOutputTokens: true,
  client: true,
  idleTimeoutMs: true,
} satisfies Record<keyof ClaudeAdapterOptions, true>)

function readClaudeSettings(options: ClaudeAdapterOptions): {
  client: Anthropic
  identity: ProviderIdentity
  idleTimeoutMs: number
  model: string
  maxOutputTokens: number
  apiVersion: string | undefined
} {
  const unkeyed = claudeIdentity([])
  if (typeof options !== 'object' || options === null)
    throw invalidOption(unkeyed, 'options', 'an object', options)
  rejectUnknownOptions(options, OPTION_KEYS, 'ClaudeAdapter')
  const common = {
    idleTimeoutMs: readIdleTimeoutMs(unkeyed, options.idleTimeoutMs),
    model: readStringOption(unkeyed, 'model', options.model) ?? DEFAULT_CLAUDE_MODEL,
    maxOutputTokens:
      readPositiveInteger(unkeyed, 'maxOutputTokens', options.maxOutputTokens) ??
      DEFAULT_CLAUDE_MAX_OUTPUT_TOKENS,
    apiVersion: readStringOption(unkeyed, 'apiVersion', options.apiVersion),
  }
  if (options.client !== undefined) {
    const client = options.client as unknown
    if (
      typeof client !== 'object' ||
      client === null ||
      typeof options.client.messages?.create !== 'function'
    )
      throw invalidOption(unkeyed, 'client', 'an Anthropic client from @anthropic-ai/sdk', client)
    const key = (options.client as { apiKey?: unknown }).apiKey
    return {
      ...common,
      client: options.client,
      identity: claudeIdentity(typeof key === 'string' && key !== '' ? [key] : []),
    }
  }
  const apiKey = options.apiKey ?? readEnv('ANTHROPIC_API_KEY')
  if (typeof apiKey !== 'string' || apiKey.trim() === '') {
    throw new ConfigurationError(
      'No Anthropic API key: set ANTHROPIC_API_KEY, or pass `apiKey` or `client` to the Claude adapter.',
    )
  }
  const identity = claudeIdentity([apiKey])
  const baseURL = readBaseUrl(identity, 'baseURL', options.baseURL, 'ANTHROPIC_BASE_URL')
  const client = new Anthropic({
    apiKey,
    maxRetries: 0,
    // A library stays quiet: the SDK logs only when ANTHROPIC_LOG asks for it.
    ...(readEnv('ANTHROPIC_LOG') === undefined ? { logLevel: 'off' as const } : {}),
    ...(baseURL === undefined ? {} : { baseURL }),
  })
  return { ...common, client, identity }
}

/** The `anthropic-version` the installed SDK sends: `2026-10-21` from 1.0 on, `2023-06-01` before. */
function sdkDefaultApiVersion(): string {
  const major = Number.parseInt(ANTHROPIC_SDK_VERSION, 10)
  return major >= 1 ? CLAUDE_API_VERSION_WITHOUT_SAMPLING : CLAUDE_API_VERSION_WITH_SAMPLING
}

/** The tool names the Messages API accepts. */
const CLAUDE_TOOL_NAME = { pattern: /^[a-zA-Z0-9_-]{1,128}$/, description: '1–128 letters, digits, _ or -' }

/** What a tool the history used but this request does not offer is declared as. */
const UNAVAILABLE_TOOL_DESCRIPTION = 'Not available in this part of the conversation. Do not call it.'

/**
 * The Messages API refuses a request whose history holds `tool_use` or `tool_result` blocks but
 * that defines no tools (HTTP 400). That happens when the profile answering now has no tools (a
 * handoff target, an agent whose tools were removed since, a structured-output step): the tools the
 * history used are then declared as unavailable, with `tool_choice: none` so the model cannot call
 * them. A `tool_choice` or `tools` set through `providerOptions.claude` is left as it is.
 */
function declareHistoryTools(body: Record<string, unknown>): void {
  if (Array.isArray(body.tools) && body.tools.length > 0) return
  const names = new Set<string>()
  for (const message of body.messages as Array<{ content: unknown }>) {
    if (!Array.isArray(message.content)) continue
    // Every `tool_result` sent follows its `tool_use` (the conversion drops orphans).
    for (const block of message.content as Array<{ type?: unknown; name?: unknown }>) {
      if (block.type !== 'tool_use') continue
      const name = String(block.name)
      names.add(CLAUDE_TOOL_NAME.pattern.test(name) ? name : 'unavailable_tool')
    }
  }
  if (names.size === 0) return
  body.tools = [...names].map((name) => ({
    name,
    description: UNAVAILABLE_TOOL_DESCRIPTION,
    input_schema: { type: 'object', properties: {} },
  }))
  body.tool_choice ??= { type: 'none' }
}

/**
 * With thinking on, the Messages API refuses (HTTP 400) tool results that answer an assistant turn
 * not starting with a thinking block: the turn must carry the reasoning that led to its calls.
 * A turn written by another provider (a handoff to this profile in the middle of a send) or whose
 * thinking was not kept has none. Thinking is then left off for this request only: Claude answers
 * the results without it, and the next user message turns it on again.
 */
function leaveOutThinkingClaudeCannotContinue(body: Record<string, unknown>): void {
  const thinking = body.thinking as { type?: unknown } | undefined | null
  if (thinking === undefined || thinking === null || thinking.type === 'disabled') return
  const messages = body.messages as Array<{ role: string; content: Array<{ type?: unknown }> }>
  const last = messages[messages.length - 1]
  if (last?.role !== 'user' || !last.content.some((block) => block.type === 'tool_result')) return
  const turn = messages[messages.length - 2]
  const first = turn?.role === 'assistant' ? turn.content[0]?.type : undefined
  if (first === 'thinking' || first === 'redacted_thinking') return
  delete body.thinking
}

function toClaudeTool(tool: ToolDefinition): Record<string, unknown> {
  if (typeof tool?.name !== 'string' || tool.name === '')
    throw new ValidationError('Every tool needs a non-empty name.')
  const schema = tool.inputSchema ?? { type: 'object', properties: {} }
  return { name: tool.name, description: tool.description ?? '', input_schema: schema }
}
