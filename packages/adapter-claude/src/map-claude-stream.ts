import type { AdapterMessage, ContentBlock, StopReason, TokenUsage } from '@agentx/core'
import { incompleteStreamError, parseJsonFrame, parseToolInput } from '@agentx/core/provider'
import type { ProviderIdentity, ServerSentEventMapper } from '@agentx/core/provider'
import { mapClaudeStreamError } from './map-claude-error.js'

/**
 * Response-level data Claude reports that core's message event has no field for. Attached to the
 * `message` event as `providerMetadata.claude`; {@link ClaudeSession} stores it in the agent
 * message's `metadata.claude`.
 */
export interface ClaudeResponseMetadata {
  /** The response id (`msg_…`). */
  messageId?: string
  /** The model that answered (may be more specific than the one requested). */
  model?: string
  /** The raw `stop_reason`, kept because several map onto one core reason (or onto `other`). */
  stopReason?: string
  /** The stop sequence that ended the response, when one did. */
  stopSequence?: string
  /** `stop_details` (e.g. a refusal's category), as sent. */
  stopDetails?: unknown
}

/** The `message` event as this adapter yields it: core's, plus Claude's response metadata. */
export type ClaudeMessageEvent = Extract<AdapterMessage, { type: 'message' }> & {
  providerMetadata?: { claude: ClaudeResponseMetadata }
}

/** How Claude's stop reasons map onto core's. Unknown ones become `other` (raw value kept in metadata). */
const STOP_REASONS: Readonly<Record<string, StopReason>> = {
  end_turn: 'end_turn',
  stop_sequence: 'end_turn',
  max_tokens: 'max_tokens',
  model_context_window_exceeded: 'max_tokens',
  tool_use: 'tool_use',
  refusal: 'content_filter',
  pause_turn: 'other',
}

/** Maps a raw `stop_reason` onto core's {@link StopReason}. */
export function mapClaudeStopReason(raw: string | null | undefined): StopReason | undefined {
  if (raw === null || raw === undefined) return undefined
  return STOP_REASONS[raw] ?? 'other'
}

type BlockState =
  | { kind: 'text'; text: string; citations: unknown[] }
  | { kind: 'thinking'; text: string; signature: string }
  | { kind: 'redacted-thinking'; data: string }
  | {
      kind: 'tool'
      id: string
      name: string
      startInput: unknown
      json: string
      fragments: number
      input: unknown
      done: boolean
    }
  | { kind: 'other' }

interface RawUsage {
  input_tokens?: unknown
  output_tokens?: unknown
  cache_read_input_tokens?: unknown
  cache_creation_input_tokens?: unknown
  output_tokens_details?: { thinking_tokens?: unknown } | null
}

type Json = Record<string, unknown>

const TEXT_DELTA_HEAD = '{"type":"content_block_delta","index":'
const TEXT_DELTA_MIDDLE = ',"delta":{"type":"text_delta","text":"'

/**
 * The Messages API stream protocol, for one response: turns each server-sent event into
 * {@link AdapterMessage}s — `text-delta` and `thinking-delta` as they arrive, one `tool-call` per
 * `tool_use` block once its `input_json_delta` fragments are complete (parallel calls kept apart
 * by block index), then at `message_stop` one `usage` (from `message_start` plus the cumulative
 * `message_delta`; `inputTokens` = input + cache read + cache creation) and one `message` with
 * every block in wire order.
 *
 * An `error` event throws its mapped error (`overloaded_error` → `overloaded` …); a body that ends
 * before `message_stop` throws a retryable `network` error (never a success); `ping` and unknown
 * event and block types are ignored. Made by {@link ClaudeAdapter} for each request and driven by
 * `streamServerSentEvents` from `@agentx/core/provider`.
 */
export class ClaudeStreamMapper implements ServerSentEventMapper {
  complete = false
  readonly #provider: ProviderIdentity
  readonly #blocks = new Map<number, BlockState>()
  readonly #metadata: ClaudeResponseMetadata = {}
  readonly #usage: RawUsage = {}
  #rawStopReason: string | undefined

  constructor(provider: ProviderIdentity) {
    this.#provider = provider
  }

  onEvent(event: string | undefined, data: string, output: AdapterMessage[]): void {
    if (event === 'ping') return
    if (event === 'content_block_delta' && this.#onTextDelta(data, output)) return
    const frame = parseJsonFrame(this.#provider, data)
    switch (typeof frame.type === 'string' ? frame.type : event) {
      case 'content_block_delta':
        this.#onDelta(frame, output)
        break
      case 'message_start': {
        const message = asRecord(frame.message)
        if (typeof message.id === 'string') this.#metadata.messageId = message.id
        if (typeof message.model === 'string') this.#metadata.model = message.model
        mergeUsage(this.#usage, message.usage)
        break
      }
      case 'content_block_start': {
        const state = startBlock(asRecord(frame.content_block))
        this.#blocks.set(asIndex(frame.index), state)
        if (state.kind === 'text' && state.text !== '') output.push({ type: 'text-delta', text: state.text })
        if (state.kind === 'thinking' && state.text !== '')
          output.push({ type: 'thinking-delta', text: state.text })
        break
      }
      case 'content_block_stop': {
        const state = this.#blocks.get(asIndex(frame.index))
        if (state?.kind === 'tool' && !state.done) output.push(finishTool(state))
        break
      }
      case 'message_delta': {
        const delta = asRecord(frame.delta)
        if (typeof delta.stop_reason === 'string') this.#rawStopReason = delta.stop_reason
        if (typeof delta.stop_sequence === 'string') this.#metadata.stopSequence = delta.stop_sequence
        if (delta.stop_details !== undefined && delta.stop_details !== null)
          this.#metadata.stopDetails = delta.stop_details
        mergeUsage(this.#usage, frame.usage)
        break
      }
      case 'message_stop':
        this.#finish(output)
        break
      case 'error':
        throw mapClaudeStreamError(this.#provider, asRecord(frame.error), frame)
      default:
        // Event types newer than this adapter.
        break
    }
  }

  onEnd(): void {
    throw incompleteStreamError(this.#provider, 'message_stop')
  }

  /**
   * The frame that is nearly all of a stream, read without `JSON.parse`:
   * `{"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"…"}}` exactly as
   * the API serialises it, with text free of escapes (so the raw characters are the text). Any
   * other shape returns `false` and takes the general path.
   */
  #onTextDelta(data: string, output: AdapterMessage[]): boolean {
    if (!data.startsWith(TEXT_DELTA_HEAD) || !data.endsWith('"}}')) return false
    let at = TEXT_DELTA_HEAD.length
    const digitsStart = at
    while (at < data.length && data.charCodeAt(at) >= 48 && data.charCodeAt(at) <= 57) at++
    if (at === digitsStart || at - digitsStart > 9 || !data.startsWith(TEXT_DELTA_MIDDLE, at)) return false
    const textStart = at + TEXT_DELTA_MIDDLE.length
    const textEnd = data.length - 3
    if (textEnd <= textStart) return false
    const text = data.slice(textStart, textEnd)
    // A quote or backslash means escapes (or a different shape): leave it to JSON.parse.
    if (text.includes('"') || text.includes('\\')) return false
    const state = this.#blocks.get(Number(data.slice(digitsStart, at)))
    if (state?.kind !== 'text') return false
    state.text += text
    output.push({ type: 'text-delta', text })
    return true
  }

  #onDelta(frame: Json, output: AdapterMessage[]): void {
    const index = asIndex(frame.index)
    const delta = asRecord(frame.delta)
    let state = this.#blocks.get(index)
    if (state === undefined) {
      // A delta without its start: infer the block from the delta so that nothing is lost.
      state = startBlock({
        type: delta.type === 'thinking_delta' || delta.type === 'signature_delta' ? 'thinking' : 'text',
      })
      this.#blocks.set(index, state)
    }
    switch (delta.type) {
      case 'text_delta':
        if (state.kind === 'text' && typeof delta.text === 'string' && delta.text !== '') {
          state.text += delta.text
          output.push({ type: 'text-delta', text: delta.text })
        }
        break
      case 'thinking_delta':
        if (state.kind === 'thinking' && typeof delta.thinking === 'string' && delta.thinking !== '') {
          state.text += delta.thinking
          output.push({ type: 'thinking-delta', text: delta.thinking })
        }
        break
      case 'signature_delta':
        if (state.kind === 'thinking' && typeof delta.signature === 'string')
          state.signature += delta.signature
        break
      case 'input_json_delta':
        if (state.kind === 'tool' && typeof delta.partial_json === 'string') {
          state.json += delta.partial_json
          state.fragments++
        }
        break
      case 'citations_delta':
        if (state.kind === 'text' && delta.citation !== undefined) state.citations.push(delta.citation)
        break
      default:
        break
    }
  }

  #finish(output: AdapterMessage[]): void {
    this.complete = true
    // Tool blocks whose stop never came are still complete calls once the message is.
    for (const state of this.#blocks.values()) {
      if (state.kind === 'tool' && !state.done) output.push(finishTool(state))
    }
    const usage = toTokenUsage(this.#usage)
    if (usage) output.push({ type: 'usage', usage })
    if (this.#rawStopReason !== undefined) this.#metadata.stopReason = this.#rawStopReason
    const message: ClaudeMessageEvent = {
      type: 'message',
      content: toContent(this.#blocks),
      stopReason: mapClaudeStopReason(this.#rawStopReason),
      providerMetadata: { claude: { ...this.#metadata } },
    }
    output.push(message)
  }
}

function startBlock(block: Json): BlockState {
  switch (block.type) {
    case 'text':
      return {
        kind: 'text',
        text: typeof block.text === 'string' ? block.text : '',
        citations: Array.isArray(block.citations) ? [...block.citations] : [],
      }
    case 'thinking':
      return {
        kind: 'thinking',
        text: typeof block.thinking === 'string' ? block.thinking : '',
        signature: typeof block.signature === 'string' ? block.signature : '',
      }
    case 'redacted_thinking':
      return { kind: 'redacted-thinking', data: typeof block.data === 'string' ? block.data : '' }
    case 'tool_use':
      return {
        kind: 'tool',
        id: typeof block.id === 'string' ? block.id : '',
        name: typeof block.name === 'string' ? block.name : '',
        // The start carries `input: {}`; the real input arrives as JSON fragments.
        startInput: block.input,
        json: '',
        fragments: 0,
        input: undefined,
        done: false,
      }
    default:
      return { kind: 'other' }
  }
}

/**
 * Completes a tool call. Empty arguments are `{}` (or the input the start carried); arguments that
 * are not valid JSON are kept as the raw text (the tool sees exactly what the model wrote).
 */
function finishTool(state: Extract<BlockState, { kind: 'tool' }>): AdapterMessage {
  state.done = true
  const start = state.startInput
  if (state.json.trim() === '' && state.fragments === 0 && typeof start === 'object' && start !== null)
    state.input = structuredClone(start)
  else state.input = parseToolInput(state.json).input
  return { type: 'tool-call', id: state.id, name: state.name, input: structuredClone(state.input) }
}

function toContent(blocks: Map<number, BlockState>): ContentBlock[] {
  const content: ContentBlock[] = []
  for (const [, state] of [...blocks.entries()].sort(([a], [b]) => a - b)) {
    switch (state.kind) {
      case 'text': {
        const block: ContentBlock = { type: 'text', text: state.text }
        if (state.citations.length > 0)
          block.providerMetadata = { claude: { citations: structuredClone(state.citations) } }
        content.push(block)
        break
      }
      case 'thinking': {
        const block: ContentBlock = { type: 'thinking', text: state.text }
        if (state.signature !== '') block.signature = state.signature
        content.push(block)
        break
      }
      case 'redacted-thinking':
        content.push({
          type: 'thinking',
          text: '',
          providerMetadata: { claude: { redactedData: state.data } },
        })
        break
      case 'tool':
        content.push({
          type: 'tool_use',
          id: state.id,
          name: state.name,
          input: structuredClone(state.input),
        })
        break
      default:
        break
    }
  }
  return content
}

function mergeUsage(target: RawUsage, source: unknown): void {
  if (typeof source !== 'object' || source === null) return
  const record = source as RawUsage
  // message_delta usage is cumulative: a field it carries replaces the message_start value.
  for (const key of [
    'input_tokens',
    'output_tokens',
    'cache_read_input_tokens',
    'cache_creation_input_tokens',
  ] as const) {
    if (isCount(record[key])) target[key] = record[key]
  }
  if (record.output_tokens_details && isCount(record.output_tokens_details.thinking_tokens)) {
    target.output_tokens_details = { thinking_tokens: record.output_tokens_details.thinking_tokens }
  }
}

/** Core's usage from Claude's: input counts cache reads and writes too. Absent when Claude sent none. */
function toTokenUsage(usage: RawUsage): TokenUsage | undefined {
  if (!isCount(usage.input_tokens) && !isCount(usage.output_tokens)) return undefined
  const input = isCount(usage.input_tokens) ? usage.input_tokens : 0
  const output = isCount(usage.output_tokens) ? usage.output_tokens : 0
  const cacheRead = isCount(usage.cache_read_input_tokens) ? usage.cache_read_input_tokens : undefined
  const cacheWrite = isCount(usage.cache_creation_input_tokens)
    ? usage.cache_creation_input_tokens
    : undefined
  const inputTokens = input + (cacheRead ?? 0) + (cacheWrite ?? 0)
  const result: TokenUsage = { inputTokens, outputTokens: output, totalTokens: inputTokens + output }
  if (cacheRead !== undefined) result.cacheReadTokens = cacheRead
  if (cacheWrite !== undefined) result.cacheWriteTokens = cacheWrite
  const thinking = usage.output_tokens_details?.thinking_tokens
  if (isCount(thinking)) result.reasoningTokens = thinking
  return result
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0
}

function asRecord(value: unknown): Json {
  return typeof value === 'object' && value !== null ? (value as Json) : {}
}

function asIndex(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) ? value : 0
}
