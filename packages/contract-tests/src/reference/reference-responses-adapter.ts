import {
  AdapterError,
  type AdapterMessage,
  type AdapterStreamOptions,
  type AgentAdapter,
  type AnyMessage,
  type ContentBlock,
  isRetryableStatus,
  adapterErrorKindFromStatus,
} from '@agentx/core'
import { redact } from './map-anthropic-error.js'
import { parseServerSentEvents } from './parse-server-sent-events.js'

/** Deliberate defects, for the kit's meta-test only. */
export interface ReferenceResponsesDefects {
  /** Never yields the `session` event. */
  readonly hidesSessionId?: boolean
  /** Sends the whole history even with `resume`. */
  readonly replaysWithResume?: boolean
  /** Gives up when the provider no longer knows the `resume` id. */
  readonly noResumeFallback?: boolean
}

/** Options of {@link ReferenceResponsesAdapter}. */
export interface ReferenceResponsesAdapterOptions {
  readonly apiKey: string
  /** Base URL including `/v1`; the adapter posts to `${baseURL}/responses`. */
  readonly baseURL: string
  /** Default is 60000. */
  readonly idleTimeoutMs?: number
  /** For the meta-test only. Default is none. */
  readonly defects?: ReferenceResponsesDefects
}

type Json = Record<string, unknown>

function text(content: string | ContentBlock[]): string {
  return typeof content === 'string'
    ? content
    : content.map((block) => (block.type === 'text' ? block.text : '')).join('')
}

function inputOf(history: readonly AnyMessage[], prompt: string | ContentBlock[]): Json[] {
  const items = history
    .filter((message) => message.type === 'user' || message.type === 'agent')
    .map((message) =>
      message.type === 'agent'
        ? { role: 'assistant', content: [{ type: 'output_text', text: text(message.content) }] }
        : { role: 'user', content: [{ type: 'input_text', text: text(message.content) }] },
    )
  return [...items, { role: 'user', content: [{ type: 'input_text', text: text(prompt) }] }]
}

/**
 * A minimal, text-only, `fetch`-based adapter for the OpenAI Responses API: the kit's reference
 * for the rules about stateful providers (A-REQ-008 to A-REQ-010), which a stateless protocol
 * cannot exercise. It reports `response.id` as the session id, sends only the new input with
 * `previous_response_id` on `resume`, and replays the history when the provider no longer knows
 * that id. Everything else the rules ask for is shown by `ReferenceAnthropicAdapter`.
 */
export class ReferenceResponsesAdapter implements AgentAdapter {
  readonly specificationVersion = 'v1' as const
  readonly #options: ReferenceResponsesAdapterOptions

  constructor(options: ReferenceResponsesAdapterOptions) {
    this.#options = options
  }

  getName(): string {
    return 'openai-responses-reference'
  }

  async *stream(
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
  ): AsyncGenerator<AdapterMessage> {
    const defects = this.#options.defects ?? {}
    const signal = options.signal
    if (signal?.aborted)
      throw new AdapterError('The request was aborted.', { kind: 'aborted', provider: this.getName() })
    const controller = new AbortController()
    const onAbort = (): void => controller.abort()
    signal?.addEventListener('abort', onAbort, { once: true })
    let timedOut = false
    let timer: NodeJS.Timeout | undefined
    const arm = (): void => {
      clearTimeout(timer)
      timer = setTimeout(() => {
        timedOut = true
        controller.abort()
      }, this.#options.idleTimeoutMs ?? 60_000)
    }
    let completed = false
    try {
      arm()
      let resume = options.resume
      let response = await this.#post(prompt, options, resume, defects, controller.signal)
      if (response.status === 400 && resume !== undefined && !defects.noResumeFallback) {
        const body = await response.text()
        if (body.includes('previous_response_not_found')) {
          resume = undefined
          response = await this.#post(prompt, options, resume, defects, controller.signal)
        } else response = new Response(body, { status: response.status, headers: response.headers })
      }
      if (!response.ok || !response.body) {
        const body = redact(await response.text(), this.#options.apiKey)
        const kind = adapterErrorKindFromStatus(response.status)
        throw new AdapterError(`OpenAI Responses error ${response.status}: ${body.slice(0, 200)}`, {
          kind,
          provider: this.getName(),
          status: response.status,
          retryable: isRetryableStatus(response.status),
        })
      }
      let output = ''
      let finished = false
      for await (const frame of parseServerSentEvents(response.body, arm)) {
        const data = JSON.parse(frame.data) as Json
        if (data.type === 'response.created') {
          const id = (data.response as Json | undefined)?.id
          if (typeof id === 'string' && !defects.hidesSessionId) yield { type: 'session', sessionId: id }
        } else if (data.type === 'response.output_text.delta' && typeof data.delta === 'string') {
          output += data.delta
          yield { type: 'text-delta', text: data.delta }
        } else if (data.type === 'response.completed' || data.type === 'response.incomplete') {
          finished = true
        }
      }
      if (!finished)
        throw new AdapterError('The stream ended before response.completed.', {
          kind: 'network',
          provider: this.getName(),
        })
      completed = true
      yield { type: 'message', content: [{ type: 'text', text: output }], stopReason: 'end_turn' }
    } catch (error) {
      if (error instanceof AdapterError) throw error
      if (timedOut)
        throw new AdapterError('No data for too long.', { kind: 'timeout', provider: this.getName() })
      if (signal?.aborted)
        throw new AdapterError('The request was aborted.', { kind: 'aborted', provider: this.getName() })
      throw new AdapterError('Network error.', { kind: 'network', provider: this.getName() })
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      if (!completed) controller.abort()
    }
  }

  #post(
    prompt: string | ContentBlock[],
    options: AdapterStreamOptions,
    resume: string | undefined,
    defects: ReferenceResponsesDefects,
    signal: AbortSignal,
  ): Promise<Response> {
    const stateful = resume !== undefined && !defects.replaysWithResume
    const body: Json = {
      model: options.model,
      stream: true,
      store: true,
      input: inputOf(stateful ? [] : options.history, prompt),
    }
    if (resume !== undefined) body.previous_response_id = resume
    if (options.systemPrompt !== undefined) body.instructions = options.systemPrompt
    return fetch(`${this.#options.baseURL}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.#options.apiKey}` },
      body: JSON.stringify(body),
      signal,
    })
  }
}
