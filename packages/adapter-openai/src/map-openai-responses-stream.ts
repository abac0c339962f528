import type { AdapterMessage, ContentBlock, StopReason, TokenUsage } from '@agentx/core'
import { keepRawStopReason } from './keep-raw-stop-reason.js'
import { mapOpenAIStreamError } from './map-openai-error.js'
import type { OpenAIErrorBody } from './map-openai-error.js'
import { mapOpenAIUsage } from './map-openai-usage.js'
import type { OpenAIStreamContext } from './openai-stream-context.js'
import { parseEventData, truncatedStreamError } from './openai-stream-context.js'
import { parseToolArguments } from './parse-tool-arguments.js'
import type { ServerSentEvent } from './read-server-sent-events.js'

/** Options of {@link mapOpenAIResponsesStream}. */
export interface OpenAIResponsesStreamOptions extends OpenAIStreamContext {
  /** Whether to report the response id as the provider session id. Default is `true`. */
  emitSession?: boolean
  /** Called once the terminal event arrived (before the final events are yielded). */
  onTerminal?: () => void
}

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

/**
 * Turns the server-sent events of a streamed Responses API call into {@link AdapterMessage}s:
 * `text-delta` for output text (and refusals), `thinking-delta` for reasoning summaries and
 * reasoning text, one `tool-call` per function call once its arguments are complete, then
 * `usage`, `session` (the response id) and exactly one `message` (rule A-STR-005).
 *
 * The stream must end with `response.completed` or `response.incomplete`; `response.failed` and
 * `error` events throw a mapped error, and a stream that stops before a terminal event throws a
 * retryable `network` error (rule A-ERR-006). Content blocks carry
 * `providerMetadata.openai = { responseId, itemId }`, which lets the adapter find where a
 * resumed conversation stands. Unknown event types are ignored.
 */
export async function* mapOpenAIResponsesStream(
  events: AsyncIterable<ServerSentEvent>,
  options: OpenAIResponsesStreamOptions,
): AsyncGenerator<AdapterMessage, void, undefined> {
  const items = new Map<string, OutputItem>()
  const byIndex = new Map<number, OutputItem>()
  let responseId: string | undefined
  let terminal: Record<string, unknown> | undefined

  // A delta for an item that was never announced (a lenient compatible server) creates it.
  const itemFor = (event: Record<string, unknown>, type: string): OutputItem => {
    const id = typeof event.item_id === 'string' ? event.item_id : undefined
    const found = id === undefined ? undefined : items.get(id)
    if (found) return found
    const index = typeof event.output_index === 'number' ? event.output_index : undefined
    const byPosition = index === undefined ? undefined : byIndex.get(index)
    if (byPosition) return byPosition
    return addItem({ id, type }, index ?? items.size)
  }
  const addItem = (raw: Record<string, unknown>, outputIndex: number): OutputItem => {
    const id = typeof raw.id === 'string' && raw.id !== '' ? raw.id : `output_${outputIndex}`
    const existing = items.get(id)
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
    items.set(id, item)
    byIndex.set(outputIndex, item)
    return item
  }

  for await (const sse of events) {
    if (sse.data === '[DONE]') continue
    const event = parseEventData(sse, options)
    const type = typeof event.type === 'string' ? event.type : sse.event
    switch (type) {
      case 'response.created':
      case 'response.in_progress':
      case 'response.queued': {
        const id = (event.response as { id?: unknown } | undefined)?.id
        if (typeof id === 'string' && id !== '') responseId = id
        break
      }
      case 'response.output_item.added': {
        const raw = event.item as Record<string, unknown> | undefined
        if (raw) addItem(raw, typeof event.output_index === 'number' ? event.output_index : items.size)
        break
      }
      case 'response.output_text.delta':
      case 'response.refusal.delta': {
        const item = itemFor(event, 'message')
        const delta = typeof event.delta === 'string' ? event.delta : ''
        if (delta === '') break
        item.text += delta
        item.textStreamed = true
        if (type === 'response.refusal.delta') item.refusal = true
        yield { type: 'text-delta', text: delta }
        break
      }
      case 'response.reasoning_summary_part.added': {
        const item = itemFor(event, 'reasoning')
        const index = typeof event.summary_index === 'number' ? event.summary_index : 0
        if (index > item.summaryIndex) {
          item.summaryIndex = index
          if (item.thinking !== '') {
            item.thinking += '\n\n'
            yield { type: 'thinking-delta', text: '\n\n' }
          }
        }
        break
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta': {
        const item = itemFor(event, 'reasoning')
        const delta = typeof event.delta === 'string' ? event.delta : ''
        if (delta === '') break
        item.thinking += delta
        item.thinkingStreamed = true
        yield { type: 'thinking-delta', text: delta }
        break
      }
      case 'response.function_call_arguments.delta': {
        const item = itemFor(event, 'function_call')
        if (!item.argumentsDone && typeof event.delta === 'string') item.arguments += event.delta
        break
      }
      case 'response.function_call_arguments.done': {
        const item = itemFor(event, 'function_call')
        if (typeof event.arguments === 'string') {
          item.arguments = event.arguments
          item.argumentsDone = true
        }
        break
      }
      case 'response.output_item.done': {
        const raw = event.item as Record<string, unknown> | undefined
        if (!raw) break
        const item =
          items.get(typeof raw.id === 'string' ? raw.id : '') ??
          addItem(raw, numberOr(event.output_index, items.size))
        yield* completeItem(item, raw)
        break
      }
      case 'response.completed':
      case 'response.incomplete':
        terminal = (event.response as Record<string, unknown> | undefined) ?? {}
        break
      case 'response.failed': {
        const response = (event.response as Record<string, unknown> | undefined) ?? {}
        const error = (response.error as OpenAIErrorBody | null | undefined) ?? {
          message: 'The response failed.',
        }
        throw mapOpenAIStreamError(error, options.error)
      }
      case 'error': {
        const nested = event.error
        const body =
          nested !== null && typeof nested === 'object'
            ? (nested as OpenAIErrorBody)
            : (event as OpenAIErrorBody)
        throw mapOpenAIStreamError(body, options.error)
      }
      default:
        break
    }
    if (terminal) break
  }

  if (!terminal) throw truncatedStreamError('response.completed', options)
  options.onTerminal?.()
  if (typeof terminal.id === 'string' && terminal.id !== '') responseId = terminal.id

  // Items the server reported only in the final response (no per-item events) still count.
  const output = Array.isArray(terminal.output) ? (terminal.output as Record<string, unknown>[]) : []
  for (const [index, raw] of output.entries()) {
    if (raw === null || typeof raw !== 'object') continue
    const known = typeof raw.id === 'string' ? items.get(raw.id) : undefined
    if (known?.emitted) continue
    yield* completeItem(known ?? addItem(raw, byIndex.has(index) ? items.size + index : index), raw)
  }
  for (const item of items.values()) if (!item.emitted) yield* completeItem(item, undefined)

  const ordered = [...items.values()].sort((a, b) => a.outputIndex - b.outputIndex)
  const content: ContentBlock[] = []
  for (const item of ordered) {
    const block = toBlock(item, responseId)
    if (block) content.push(block)
  }
  const usage: TokenUsage | undefined = mapOpenAIUsage(terminal.usage)
  if (usage) yield { type: 'usage', usage }
  if (responseId !== undefined && options.emitSession !== false)
    yield { type: 'session', sessionId: responseId }
  const stopReason = stopReasonOf(terminal, ordered)
  if (stopReason === 'other') keepRawStopReason(content, rawStopReasonOf(terminal))
  yield { type: 'message', content, stopReason }

  function* completeItem(
    item: OutputItem,
    raw: Record<string, unknown> | undefined,
  ): Generator<AdapterMessage> {
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
        yield { type: 'text-delta', text }
      }
    }
    if (item.type === 'reasoning' && !item.thinkingStreamed && raw) {
      const text = reasoningText(raw)
      if (text !== '') {
        item.thinking = text
        yield { type: 'thinking-delta', text }
      }
    }
    if (item.type === 'function_call') {
      const parsed = parseToolArguments(item.arguments)
      item.input = parsed.input
      if (!parsed.ok) item.rawArguments = item.arguments
      yield { type: 'tool-call', id: item.callId, name: item.name, input: structuredClone(parsed.input) }
    }
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
