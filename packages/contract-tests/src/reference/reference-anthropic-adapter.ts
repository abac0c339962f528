import {
  AdapterError,
  type AdapterMessage,
  type AdapterStreamOptions,
  type AgentAdapter,
  type ContentBlock,
  isAdapterError,
  type StopReason,
  type TokenUsage,
} from '@agentx/core'
import { convertToAnthropicMessages } from './convert-to-anthropic-messages.js'
import { mapAnthropicHttpError, mapAnthropicStreamError, redact } from './map-anthropic-error.js'
import { parseServerSentEvents, type ServerSentEvent } from './parse-server-sent-events.js'

/**
 * Deliberate defects, for the kit's meta-test only: each broken variant of the reference adapter
 * turns on one. A real adapter has none of these.
 */
export interface ReferenceAdapterDefects {
  /** Never looks at `options.signal`. */
  readonly ignoresAbort?: boolean
  /** Sends the request before looking at an already-aborted signal. */
  readonly sendsWhenAborted?: boolean
  /** Leaves the response body unread and the connection open when iteration stops early. */
  readonly leavesConnectionOpen?: boolean
  /** Treats a stream that ends without `message_stop` as a success. */
  readonly fabricatesFinish?: boolean
  /** Has no idle timeout. */
  readonly noIdleTimeout?: boolean
  /** Retries once by itself after a retryable failure. */
  readonly retriesItself?: boolean
  /** Reads the whole body before parsing it. */
  readonly buffersBody?: boolean
  /** Splits frames on `\n\n` only and decodes each chunk on its own (no CRLF, no split UTF-8). */
  readonly naiveSse?: boolean
  /** Sends only the prompt, no history. */
  readonly dropsHistory?: boolean
  /** Sends no system prompt. */
  readonly dropsSystemPrompt?: boolean
  /** Sends no tools. */
  readonly dropsTools?: boolean
  /** Drops image blocks from what it sends. */
  readonly dropsImages?: boolean
  /** Drops thinking blocks from the history it sends. */
  readonly dropsThinking?: boolean
  /** Probes the server from the constructor. */
  readonly probesOnConstruction?: boolean
  /** Appends argument fragments to the latest tool call instead of the one the frame names. */
  readonly mixesToolFragments?: boolean
  /** Keeps the blocks being assembled on the instance, shared by concurrent streams. */
  readonly sharesStreamState?: boolean
  /** Reports thinking as text. */
  readonly thinkingAsText?: boolean
  /** Leaves invalid tool arguments to `JSON.parse`, whose SyntaxError escapes. */
  readonly throwsSyntaxError?: boolean
  /** Parses stream frames with a bare `JSON.parse` (a malformed frame escapes as SyntaxError). */
  readonly rawFrameErrors?: boolean
  /** Reports input tokens without the cached parts. */
  readonly excludesCacheFromInput?: boolean
  /** Reads usage only from `message_start`. */
  readonly ignoresTrailingUsage?: boolean
  /** Stop reasons it does not know throw. */
  readonly rejectsUnknownStop?: boolean
  /** Links the abort signal only once the response headers arrived. */
  readonly abortsOnlyBody?: boolean
  /** Sends history tool calls without any tool definition when the call offers no tools. */
  readonly leavesHistoryToolsUndeclared?: boolean
  /** Sends no structured-output field, whatever `options.output` asks. */
  readonly ignoresOutput?: boolean
  /** Keeps the last `options.output` and sends it again with calls that have none. */
  readonly keepsOutput?: boolean
  /** Asks for any JSON object (`{ type: 'object' }`) instead of the schema given. */
  readonly loosensOutputSchema?: boolean
}

/** Options of {@link ReferenceAnthropicAdapter}. */
export interface ReferenceAnthropicAdapterOptions {
  readonly apiKey: string
  /** Server origin; the adapter posts to `${baseURL}/v1/messages`. */
  readonly baseURL: string
  /** Fail with kind `timeout` after this long without a byte. Default is 60000. */
  readonly idleTimeoutMs?: number
  /** `max_tokens` when the call gives no `maxOutputTokens`. Default is 4096. */
  readonly maxTokens?: number
  /** For the meta-test only. Default is none. */
  readonly defects?: ReferenceAdapterDefects
}

interface BlockState {
  type: 'text' | 'thinking' | 'tool_use' | 'other'
  text: string
  signature?: string
  id?: string
  name?: string
  json: string
}

interface StreamState {
  blocks: Map<number, BlockState>
  order: number[]
}

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: 'end_turn',
  stop_sequence: 'end_turn',
  max_tokens: 'max_tokens',
  model_context_window_exceeded: 'max_tokens',
  tool_use: 'tool_use',
  refusal: 'content_filter',
}

type Json = Record<string, unknown>

/**
 * A small, correct, `fetch`-based {@link AgentAdapter} for the Anthropic Messages API: the kit's
 * reference adapter, which passes every adapter rule (see the meta-test). It is a readable
 * example of what the rules ask for: streamed SSE parsing, abort and `break` that release the
 * connection, an idle timeout, typed errors without the key, no retries of its own.
 */
export class ReferenceAnthropicAdapter implements AgentAdapter {
  readonly specificationVersion = 'v1' as const
  readonly #options: ReferenceAnthropicAdapterOptions
  readonly #defects: ReferenceAdapterDefects
  readonly #shared: StreamState = { blocks: new Map(), order: [] }
  /** The `keepsOutput` defect's memory. */
  #lastOutput: AdapterStreamOptions['output']

  constructor(options: ReferenceAnthropicAdapterOptions) {
    this.#options = options
    this.#defects = options.defects ?? {}
    if (this.#defects.probesOnConstruction)
      void fetch(`${options.baseURL}/v1/messages`, { method: 'HEAD' }).catch(() => undefined)
  }

  getName(): string {
    return 'claude'
  }

  async *stream(
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
  ): AsyncGenerator<AdapterMessage> {
    const attempts = this.#defects.retriesItself ? 2 : 1
    for (let attempt = 1; ; attempt += 1) {
      try {
        yield* this.#streamOnce(prompt, options)
        return
      } catch (error) {
        if (attempt >= attempts || !isAdapterError(error) || !error.retryable) throw error
      }
    }
  }

  async *#streamOnce(
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
  ): AsyncGenerator<AdapterMessage> {
    const defects = this.#defects
    const signal = defects.ignoresAbort ? undefined : options.signal
    if (signal?.aborted && !defects.sendsWhenAborted) throw this.#aborted(signal.reason)
    const controller = new AbortController()
    const onAbort = (): void => controller.abort()
    if (!defects.abortsOnlyBody) signal?.addEventListener('abort', onAbort, { once: true })
    const idleTimeoutMs = this.#options.idleTimeoutMs ?? 60_000
    let timedOut = false
    let idleTimer: NodeJS.Timeout | undefined
    const arm = (): void => {
      if (defects.noIdleTimeout) return
      clearTimeout(idleTimer)
      idleTimer = setTimeout(() => {
        timedOut = true
        controller.abort()
      }, idleTimeoutMs)
    }
    const failure = (error: unknown): AdapterError => {
      if (isAdapterError(error)) return error
      if (timedOut) {
        return new AdapterError(`No data from Anthropic for ${idleTimeoutMs} ms; gave up.`, {
          kind: 'timeout',
          provider: this.getName(),
        })
      }
      if (signal?.aborted) return this.#aborted(signal.reason)
      const text = redact(
        error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        this.#options.apiKey,
      )
      return new AdapterError(`Network error while streaming from Anthropic: ${text}`, {
        kind: 'network',
        provider: this.getName(),
        cause: new Error(text),
      })
    }
    let completed = false
    try {
      arm()
      let response: Response
      try {
        response = await fetch(`${this.#options.baseURL}/v1/messages`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'text/event-stream',
            authorization: `Bearer ${this.#options.apiKey}`,
            'anthropic-version': '2026-10-21',
          },
          body: JSON.stringify(this.#body(prompt, options)),
          signal: controller.signal,
        })
      } catch (error) {
        throw failure(error)
      }
      if (defects.abortsOnlyBody) signal?.addEventListener('abort', onAbort, { once: true })
      if (signal?.aborted) throw this.#aborted(signal.reason)
      if (!response.ok) {
        const text = await response.text().catch(() => '')
        throw mapAnthropicHttpError(
          response.status,
          response.headers,
          text,
          this.getName(),
          this.#options.apiKey,
        )
      }
      if (!response.body) throw failure(new Error('the response has no body'))
      const body = defects.leavesConnectionOpen ? detached(response.body) : response.body
      const state: StreamState = defects.sharesStreamState ? this.#shared : { blocks: new Map(), order: [] }
      if (defects.sharesStreamState) {
        state.blocks.clear()
        state.order.length = 0
      }
      const usage: Json = {}
      let stopReason: string | undefined
      let stopped = false
      const frames = defects.buffersBody
        ? bufferedEvents(response, arm)
        : defects.naiveSse
          ? naiveEvents(body, arm)
          : parseServerSentEvents(body, arm)
      try {
        for await (const frame of frames) {
          // Frames already read may still be queued in the parser: yield nothing after an abort.
          if (signal?.aborted) throw this.#aborted(signal.reason)
          if (frame.event === 'ping') continue
          if (frame.event === 'error')
            throw mapAnthropicStreamError(frame.data, this.getName(), this.#options.apiKey)
          const data = this.#parseFrame(frame)
          if (frame.event === 'message_start') {
            Object.assign(usage, ((data.message as Json | undefined)?.usage as Json | undefined) ?? {})
          } else if (frame.event === 'content_block_start') {
            const index = Number(data.index)
            const block = (data.content_block ?? {}) as Json
            const type =
              block.type === 'text' || block.type === 'thinking' || block.type === 'tool_use'
                ? block.type
                : 'other'
            const entry: BlockState = { type, text: '', json: '' }
            if (type === 'tool_use') {
              entry.id = String(block.id)
              entry.name = String(block.name)
            }
            state.blocks.set(index, entry)
            state.order.push(index)
          } else if (frame.event === 'content_block_delta') {
            const delta = (data.delta ?? {}) as Json
            const index =
              defects.mixesToolFragments && delta.type === 'input_json_delta'
                ? (state.order.at(-1) ?? 0)
                : Number(data.index)
            const block = state.blocks.get(index)
            if (!block) continue
            if (delta.type === 'text_delta' && typeof delta.text === 'string') {
              block.text += delta.text
              yield { type: 'text-delta', text: delta.text }
            } else if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') {
              block.text += delta.thinking
              yield { type: defects.thinkingAsText ? 'text-delta' : 'thinking-delta', text: delta.thinking }
            } else if (delta.type === 'signature_delta' && typeof delta.signature === 'string') {
              block.signature = (block.signature ?? '') + delta.signature
            } else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
              block.json += delta.partial_json
            }
          } else if (frame.event === 'content_block_stop') {
            const block = state.blocks.get(Number(data.index))
            if (block?.type === 'tool_use') {
              yield {
                type: 'tool-call',
                id: block.id ?? '',
                name: block.name ?? '',
                input: this.#toolInput(block.json),
              }
            }
          } else if (frame.event === 'message_delta') {
            const delta = (data.delta ?? {}) as Json
            if (typeof delta.stop_reason === 'string') stopReason = delta.stop_reason
            if (!defects.ignoresTrailingUsage) Object.assign(usage, (data.usage as Json | undefined) ?? {})
          } else if (frame.event === 'message_stop') {
            stopped = true
          }
        }
      } catch (error) {
        if (error instanceof SyntaxError && (defects.rawFrameErrors || defects.throwsSyntaxError)) throw error
        throw failure(error)
      }
      if (!stopped && !defects.fabricatesFinish) {
        throw new AdapterError('The Anthropic stream ended before message_stop (connection cut?).', {
          kind: 'network',
          provider: this.getName(),
        })
      }
      const content = this.#content(state)
      const mapped = stopReason === undefined ? 'end_turn' : STOP_REASONS[stopReason]
      if (mapped === undefined && defects.rejectsUnknownStop)
        throw new Error(`unknown stop reason ${stopReason}`)
      const last = content.at(-1)
      if (mapped === undefined && last) last.providerMetadata = { claude: { stopReason } }
      completed = true
      yield { type: 'message', content, stopReason: mapped ?? 'other' }
      const tokens = this.#usage(usage)
      if (tokens) yield { type: 'usage', usage: tokens }
    } finally {
      clearTimeout(idleTimer)
      signal?.removeEventListener('abort', onAbort)
      // Releases the connection when iteration stopped early (break, abort, error).
      if (!completed && !defects.leavesConnectionOpen) controller.abort()
    }
  }

  #aborted(reason: unknown): AdapterError {
    return new AdapterError('The request was aborted.', {
      kind: 'aborted',
      provider: this.getName(),
      cause: reason,
    })
  }

  #parseFrame(frame: ServerSentEvent): Json {
    if (this.#defects.rawFrameErrors) return JSON.parse(frame.data) as Json
    try {
      return JSON.parse(frame.data) as Json
    } catch (error) {
      throw new AdapterError(`Anthropic sent a malformed ${frame.event} frame.`, {
        kind: 'server',
        provider: this.getName(),
        retryable: false,
        cause: new Error(
          `invalid JSON in the ${frame.event} frame: ${JSON.stringify(frame.data.slice(0, 120))}`,
          { cause: error },
        ),
      })
    }
  }

  #toolInput(json: string): unknown {
    if (json.trim() === '') return {}
    if (this.#defects.throwsSyntaxError) return JSON.parse(json)
    try {
      return JSON.parse(json)
    } catch {
      // Keep the model's raw text: the tool reports the problem and nothing is lost.
      return json
    }
  }

  #content(state: StreamState): ContentBlock[] {
    const content: ContentBlock[] = []
    for (const index of [...state.blocks.keys()].sort((a, b) => a - b)) {
      const block = state.blocks.get(index) as BlockState
      if (block.type === 'text') content.push({ type: 'text', text: block.text })
      else if (block.type === 'thinking') {
        if (this.#defects.thinkingAsText) content.push({ type: 'text', text: block.text })
        else
          content.push({
            type: 'thinking',
            text: block.text,
            ...(block.signature ? { signature: block.signature } : {}),
          })
      } else if (block.type === 'tool_use') {
        content.push({
          type: 'tool_use',
          id: block.id ?? '',
          name: block.name ?? '',
          input: this.#toolInput(block.json),
        })
      }
    }
    return content
  }

  #usage(raw: Json): TokenUsage | undefined {
    if (typeof raw.input_tokens !== 'number' && typeof raw.output_tokens !== 'number') return undefined
    const read = (key: string): number | undefined =>
      typeof raw[key] === 'number' ? (raw[key] as number) : undefined
    const cacheRead = read('cache_read_input_tokens')
    const cacheWrite = read('cache_creation_input_tokens')
    const inputTokens =
      (read('input_tokens') ?? 0) +
      (this.#defects.excludesCacheFromInput ? 0 : (cacheRead ?? 0) + (cacheWrite ?? 0))
    const outputTokens = read('output_tokens') ?? 0
    const usage: TokenUsage = { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }
    if (cacheRead !== undefined) usage.cacheReadTokens = cacheRead
    if (cacheWrite !== undefined) usage.cacheWriteTokens = cacheWrite
    const thinking = (raw.output_tokens_details as Json | undefined)?.thinking_tokens
    if (typeof thinking === 'number') usage.reasoningTokens = thinking
    return usage
  }

  #body(prompt: string | ContentBlock[], options: AdapterStreamOptions): Json {
    const defects = this.#defects
    let history = defects.dropsHistory ? [] : options.history
    if (defects.dropsThinking) {
      history = history.map((message) =>
        typeof message.content === 'string'
          ? message
          : { ...message, content: message.content.filter((block) => block.type !== 'thinking') },
      )
    }
    let messages = convertToAnthropicMessages(history, prompt)
    if (defects.dropsImages) {
      messages = messages.map((message) => ({
        ...message,
        content: message.content.filter((block) => block.type !== 'image'),
      }))
    }
    const body: Json = {
      model: options.model,
      max_tokens: options.maxOutputTokens ?? this.#options.maxTokens ?? 4096,
      stream: true,
      messages,
    }
    if (options.systemPrompt !== undefined && !defects.dropsSystemPrompt) body.system = options.systemPrompt
    if (options.tools && options.tools.length > 0 && !defects.dropsTools) {
      body.tools = options.tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        input_schema: tool.inputSchema,
      }))
    } else if (!defects.leavesHistoryToolsUndeclared) {
      // The Messages API refuses tool blocks in a request that defines no tools (A-REQ-013): the
      // tools the history used are declared, and none may be called.
      const used = new Set<string>()
      for (const message of messages)
        for (const block of message.content) if (block.type === 'tool_use') used.add(String(block.name))
      if (used.size > 0) {
        body.tools = [...used].map((name) => ({ name, input_schema: { type: 'object' } }))
        body.tool_choice = { type: 'none' }
      }
    }
    if (defects.keepsOutput) this.#lastOutput = options.output ?? this.#lastOutput
    const output = defects.keepsOutput ? this.#lastOutput : options.output
    if (output !== undefined && !defects.ignoresOutput) {
      // Structured output (A-REQ-011): Claude's constrained decoding wants every object closed.
      const schema = defects.loosensOutputSchema ? { type: 'object' } : output.schema
      body.output_config = { format: { type: 'json_schema', schema: closeObjects(schema) } }
    }
    return body
  }
}

/**
 * A copy of a JSON Schema with `additionalProperties: false` on every object schema that does not
 * set it, as Claude's structured output requires. (`ClaudeAdapter` also moves the constraints
 * Claude cannot enforce into descriptions; the reference keeps to the minimum.)
 */
function closeObjects(schema: unknown): Json {
  const close = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(close)
    if (typeof node !== 'object' || node === null) return node
    const copy: Json = {}
    for (const [key, value] of Object.entries(node as Json)) {
      copy[key] =
        key === 'properties' || key === '$defs' || key === 'definitions'
          ? Object.fromEntries(Object.entries(value as Json).map(([name, item]) => [name, close(item)]))
          : key === 'items' || key === 'anyOf' || key === 'allOf' || key === 'oneOf'
            ? close(value)
            : value
    }
    if ((copy.type === 'object' || copy.properties !== undefined) && copy.additionalProperties === undefined)
      copy.additionalProperties = false
    return copy
  }
  return close(schema) as Json
}

/** A view of `body` whose cancel() leaves the source open (the `leavesConnectionOpen` defect). */
function detached(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const chunk = await reader.read()
      if (chunk.done) controller.close()
      else controller.enqueue(chunk.value)
    },
    cancel() {
      // the defect: nothing releases the source
    },
  })
}

/** Reads the whole body, then parses it (the `buffersBody` defect). */
async function* bufferedEvents(response: Response, onChunk: () => void): AsyncGenerator<ServerSentEvent> {
  const text = await response.text()
  onChunk()
  yield* parseServerSentEvents(new Blob([text]).stream(), onChunk)
}

/** Splits on `\n\n` and decodes each chunk alone (the `naiveSse` defect). */
async function* naiveEvents(
  body: ReadableStream<Uint8Array>,
  onChunk: () => void,
): AsyncGenerator<ServerSentEvent> {
  let buffer = ''
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    onChunk()
    buffer += new TextDecoder().decode(chunk)
    let end = buffer.indexOf('\n\n')
    while (end !== -1) {
      const raw = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      let event = 'message'
      const data: string[] = []
      for (const line of raw.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7)
        else if (line.startsWith('data: ')) data.push(line.slice(6))
      }
      if (data.length > 0) yield { event, data: data.join('\n') }
      end = buffer.indexOf('\n\n')
    }
  }
}
