import type { AdapterMessage, ContentBlock, StopReason, TokenUsage } from '@agentx/core'
import { incompleteStreamError, parseJsonFrame, parseToolInput } from '@agentx/core/provider'
import type { ProviderIdentity, ServerSentEventMapper } from '@agentx/core/provider'
import { keepRawStopReason } from './keep-raw-stop-reason.js'
import { mapOpenAIStreamError, type OpenAIErrorBody } from './map-openai-error.js'
import { mapOpenAIUsage } from './map-openai-usage.js'

interface OutputItem {
  id: string
  type: string
  outputIndex: number
  text: string
  textStreamed: boolean
  refusal: boolean
  thinking: string
  thinkingStreamed: boolean
  summaryIndex: number
  signature: string | undefined
  callId: string
  name: string
  arguments: string
  argumentsDone: boolean
  emitted: boolean
  input: unknown
  rawArguments: string | undefined
}

type Json = Record<string, unknown>

/**
 * The Responses API stream protocol, for one response: `text-delta` for output text (and
 * refusals), `thinking-delta` for reasoning summaries and reasoning text, one `tool-call` per
 * function call once its arguments are complete, then at `response.completed` /
 * `response.incomplete` the `usage`, `session` (the response id, unless `emitSession` is off) and
 * exactly one `message` (rule A-STR-005).
 *
 * `response.failed` and `error` events throw their mapped error; a body that ends before a
 * terminal event throws a retryable `network` error (rule A-ERR-006). Content blocks carry
 * `providerMetadata.openai = { responseId, itemId }`, which lets the adapter find where a resumed
 * conversation stands. Unknown event types are ignored. Made by {@link OpenAIAdapter} per request
 * and driven by `streamServerSentEvents` from `@agentx/core/provider`.
 */
export class OpenAIResponsesStreamMapper implements ServerSentEventMapper {
  complete = false
  readonly #provider: ProviderIdentity
  readonly #emitSession: boolean
  readonly #items = new Map<string, OutputItem>()
  readonly #byIndex = new Map<number, OutputItem>()
  #responseId: string | undefined

  /** `emitSession: false` leaves out the `session` event (a response OpenAI does not store). */
  constructor(provider: ProviderIdentity, options: { emitSession?: boolean } = {}) {
    this.#provider = provider
    this.#emitSession = options.emitSession !== false
  }

  onEvent(event: string | undefined, data: string, output: AdapterMessage[]): void {
    if (data === '[DONE]') return
    const frame = parseJsonFrame(this.#provider, data)
    const type = typeof frame.type === 'string' ? frame.type : event
    switch (type) {
      case 'response.output_text.delta':
      case 'response.refusal.delta': {
        const delta = typeof frame.delta === 'string' ? frame.delta : ''
        if (delta === '') break
        const item = this.#itemFor(frame, 'message')
        item.text += delta
        item.textStreamed = true
        if (type === 'response.refusal.delta') item.refusal = true
        output.push({ type: 'text-delta', text: delta })
        break
      }
      case 'response.created':
      case 'response.in_progress':
      case 'response.queued': {
        const id = (frame.response as { id?: unknown } | undefined)?.id
        if (typeof id === 'string' && id !== '') this.#responseId = id
        break
      }
      case 'response.output_item.added': {
        const raw = frame.item as Json | undefined
        if (raw)
          this.#addItem(raw, typeof frame.output_index === 'number' ? frame.output_index : this.#items.size)
        break
      }
      case 'response.reasoning_summary_part.added': {
        const item = this.#itemFor(frame, 'reasoning')
        const index = typeof frame.summary_index === 'number' ? frame.summary_index : 0
        if (index > item.summaryIndex) {
          item.summaryIndex = index
          if (item.thinking !== '') {
            item.thinking += '\n\n'
            output.push({ type: 'thinking-delta', text: '\n\n' })
          }
        }
        break
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta': {
        const delta = typeof frame.delta === 'string' ? frame.delta : ''
        if (delta === '') break
        const item = this.#itemFor(frame, 'reasoning')
        item.thinking += delta
        item.thinkingStreamed = true
        output.push({ type: 'thinking-delta', text: delta })
        break
      }
      case 'response.function_call_arguments.delta': {
        const item = this.#itemFor(frame, 'function_call')
        if (!item.argumentsDone && typeof frame.delta === 'string') item.arguments += frame.delta
        break
      }
      case 'response.function_call_arguments.done': {
        const item = this.#itemFor(frame, 'function_call')
        if (typeof frame.arguments === 'string') {
          item.arguments = frame.arguments
          item.argumentsDone = true
        }
        break
      }
      case 'response.output_item.done': {
        const raw = frame.item as Json | undefined
        if (!raw) break
        const item =
          this.#items.get(typeof raw.id === 'string' ? raw.id : '') ??
          this.#addItem(raw, numberOr(frame.output_index, this.#items.size))
        completeItem(item, raw, output)
        break
      }
      case 'response.completed':
      case 'response.incomplete':
        this.#finish((frame.response as Json | undefined) ?? {}, output)
        break
      case 'response.failed': {
        const response = (frame.response as Json | undefined) ?? {}
        const error = (response.error as OpenAIErrorBody | null | undefined) ?? {
          message: 'The response failed.',
        }
        throw mapOpenAIStreamError(this.#provider, error)
      }
      case 'error': {
        const nested = frame.error
        const body =
          nested !== null && typeof nested === 'object'
            ? (nested as OpenAIErrorBody)
            : (frame as OpenAIErrorBody)
        throw mapOpenAIStreamError(this.#provider, body)
      }
      default:
        break
    }
  }

  onEnd(): void {
    throw incompleteStreamError(this.#provider, 'response.completed')
  }

  /** The item an event names; a delta for an item never announced (a lenient compatible server) creates it. */
  #itemFor(frame: Json, type: string): OutputItem {
    const id = typeof frame.item_id === 'string' ? frame.item_id : undefined
    const found = id === undefined ? undefined : this.#items.get(id)
    if (found) return found
    const index = typeof frame.output_index === 'number' ? frame.output_index : undefined
    const byPosition = index === undefined ? undefined : this.#byIndex.get(index)
    if (byPosition) return byPosition
    return this.#addItem({ id, type }, index ?? this.#items.size)
  }

  #addItem(raw: Json, outputIndex: number): OutputItem {
    const id = typeof raw.id === 'string' && raw.id !== '' ? raw.id : `output_${outputIndex}`
    const existing = this.#items.get(id)
    if (existing) return existing
    const item: OutputItem = {
      id,
      type: typeof raw.type === 'string' ? raw.type : 'unknown',
      outputIndex,
      text: '',
      textStreamed: false,
      refusal: false,
      thinking: '',
      thinkingStreamed: false,
      summaryIndex: 0,
      signature: undefined,
      callId: typeof raw.call_id === 'string' ? raw.call_id : id,
      name: typeof raw.name === 'string' ? raw.name : '',
      arguments: typeof raw.arguments === 'string' ? raw.arguments : '',
      argumentsDone: false,
      emitted: false,
      input: undefined,
      rawArguments: undefined,
    }
    this.#items.set(id, item)
    this.#byIndex.set(outputIndex, item)
    return item
  }

  #finish(terminal: Json, output: AdapterMessage[]): void {
    this.complete = true
    if (typeof terminal.id === 'string' && terminal.id !== '') this.#responseId = terminal.id
    // Items the server reported only in the final response (no per-item events) still count.
    const reported = Array.isArray(terminal.output) ? (terminal.output as Json[]) : []
    for (const [index, raw] of reported.entries()) {
      if (raw === null || typeof raw !== 'object') continue
      const known = typeof raw.id === 'string' ? this.#items.get(raw.id) : undefined
      if (known?.emitted) continue
      completeItem(
        known ?? this.#addItem(raw, this.#byIndex.has(index) ? this.#items.size + index : index),
        raw,
        output,
      )
    }
    for (const item of this.#items.values()) if (!item.emitted) completeItem(item, undefined, output)

    const ordered = [...this.#items.values()].sort((a, b) => a.outputIndex - b.outputIndex)
    const content: ContentBlock[] = []
    for (const item of ordered) {
      const block = toBlock(item, this.#responseId)
      if (block) content.push(block)
    }
    const usage: TokenUsage | undefined = mapOpenAIUsage(terminal.usage)
    if (usage) output.push({ type: 'usage', usage })
    if (this.#responseId !== undefined && this.#emitSession)
      output.push({ type: 'session', sessionId: this.#responseId })
    const stopReason = stopReasonOf(terminal, ordered)
    if (stopReason === 'other') keepRawStopReason(content, rawStopReasonOf(terminal))
    output.push({ type: 'message', content, stopReason })
  }
}

/** Completes an output item once: text or reasoning not streamed before is streamed now; a function call is emitted. */
function completeItem(item: OutputItem, raw: Json | undefined, output: AdapterMessage[]): void {
  if (item.emitted) return
  item.emitted = true
  if (raw) {
    if (item.type === 'unknown' && typeof raw.type === 'string') item.type = raw.type
    if (typeof raw.name === 'string' && raw.name !== '') item.name = raw.name
    if (typeof raw.call_id === 'string' && raw.call_id !== '') item.callId = raw.call_id
    if (typeof raw.arguments === 'string' && raw.arguments !== '') item.arguments = raw.arguments
    if (typeof raw.encrypted_content === 'string' && raw.encrypted_content !== '')
      item.signature = raw.encrypted_content
  }
  if (item.type === 'message' && !item.textStreamed && raw) {
    const text = messageText(raw)
    if (text !== '') {
      item.text = text
      output.push({ type: 'text-delta', text })
    }
  }
  if (item.type === 'reasoning' && !item.thinkingStreamed && raw) {
    const text = reasoningText(raw)
    if (text !== '') {
      item.thinking = text
      output.push({ type: 'thinking-delta', text })
    }
  }
  if (item.type === 'function_call') {
    const parsed = parseToolInput(item.arguments)
    item.input = parsed.input
    if (!parsed.ok) item.rawArguments = item.arguments
    output.push({ type: 'tool-call', id: item.callId, name: item.name, input: structuredClone(parsed.input) })
  }
}

function toBlock(item: OutputItem, responseId: string | undefined): ContentBlock | undefined {
  const openai: Record<string, unknown> = { itemId: item.id }
  if (responseId !== undefined) openai.responseId = responseId
  const providerMetadata = { openai }
  if (item.type === 'message') {
    return item.text === '' ? undefined : { type: 'text', text: item.text, providerMetadata }
  }
  if (item.type === 'reasoning') {
    if (item.thinking === '' && item.signature === undefined) return undefined
    return {
      type: 'thinking',
      text: item.thinking,
      ...(item.signature === undefined ? {} : { signature: item.signature }),
      providerMetadata,
    }
  }
  if (item.type === 'function_call') {
    if (item.rawArguments !== undefined) openai.rawArguments = item.rawArguments
    return {
      type: 'tool_use',
      id: item.callId,
      name: item.name,
      input: structuredClone(item.input),
      providerMetadata,
    }
  }
  return undefined
}

function stopReasonOf(response: Record<string, unknown>, items: OutputItem[]): StopReason {
  const status = response.status
  if (status === 'incomplete') {
    const reason = (response.incomplete_details as { reason?: unknown } | null | undefined)?.reason
    if (reason === 'max_output_tokens') return 'max_tokens'
    if (reason === 'content_filter') return 'content_filter'
    return 'other'
  }
  if (status === 'cancelled') return 'aborted'
  if (status !== undefined && status !== 'completed') return 'other'
  if (items.some((item) => item.type === 'function_call')) return 'tool_use'
  if (items.some((item) => item.refusal)) return 'content_filter'
  return 'end_turn'
}

function rawStopReasonOf(response: Record<string, unknown>): string {
  const reason = (response.incomplete_details as { reason?: unknown } | null | undefined)?.reason
  return typeof reason === 'string' ? reason : String(response.status)
}

function messageText(raw: Record<string, unknown>): string {
  const parts = Array.isArray(raw.content) ? (raw.content as Array<Record<string, unknown>>) : []
  return parts
    .map((part) =>
      typeof part.text === 'string' ? part.text : typeof part.refusal === 'string' ? part.refusal : '',
    )
    .join('')
}

function reasoningText(raw: Record<string, unknown>): string {
  const summary = Array.isArray(raw.summary) ? (raw.summary as Array<Record<string, unknown>>) : []
  const text = summary.map((part) => (typeof part.text === 'string' ? part.text : '')).filter((t) => t !== '')
  if (text.length > 0) return text.join('\n\n')
  const content = Array.isArray(raw.content) ? (raw.content as Array<Record<string, unknown>>) : []
  return content.map((part) => (typeof part.text === 'string' ? part.text : '')).join('')
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback
}
