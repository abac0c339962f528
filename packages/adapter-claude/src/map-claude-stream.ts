import type { AdapterMessage, ContentBlock, StopReason, TokenUsage } from '@agentx/core'
import { AdapterError } from '@agentx/core'
import { CLAUDE_PROVIDER } from './map-claude-error.js'

/** One parsed Messages API stream event (`message_start`, `content_block_delta` …), as the SDK yields it. */
export type ClaudeStreamEvent = { type: string } & Record<string, unknown>

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

/**
 * Turns a Messages API event stream into {@link AdapterMessage}s: `text-delta` and
 * `thinking-delta` as they arrive, one `tool-call` per `tool_use` block once its `input_json_delta`
 * fragments are complete (parallel calls kept apart by block index), then at `message_stop` one
 * `usage` (from `message_start` plus the cumulative `message_delta`; `inputTokens` = input + cache
 * read + cache creation) and one `message` with every block in wire order.
 *
 * A stream that ends before `message_stop` throws a retryable `network` {@link AdapterError}: a
 * truncated response is never a success. Events after `message_stop`, and errors while draining
 * them, are ignored. Unknown event and block types are ignored. Called by {@link ClaudeAdapter}.
 */
export async function* mapClaudeStream(
  events: AsyncIterable<ClaudeStreamEvent>,
): AsyncGenerator<AdapterMessage, void, undefined> {
  const blocks = new Map<number, BlockState>()
  const metadata: ClaudeResponseMetadata = {}
  const usage: RawUsage = {}
  let rawStopReason: string | undefined
  let started = false
  let completed = false
  try {
    for await (const event of events) {
      if (completed) continue
      switch (event.type) {
        case 'message_start': {
          started = true
          const message = asRecord(event.message)
          if (typeof message.id === 'string') metadata.messageId = message.id
          if (typeof message.model === 'string') metadata.model = message.model
          mergeUsage(usage, message.usage)
          break
        }
        case 'content_block_start': {
          const index = asIndex(event.index)
          const block = asRecord(event.content_block)
          const state = startBlock(block)
          blocks.set(index, state)
          if (state.kind === 'text' && state.text !== '') yield { type: 'text-delta', text: state.text }
          if (state.kind === 'thinking' && state.text !== '')
            yield { type: 'thinking-delta', text: state.text }
          break
        }
        case 'content_block_delta': {
          const index = asIndex(event.index)
          const delta = asRecord(event.delta)
          let state = blocks.get(index)
          if (state === undefined) {
            // A delta without its start: infer the block from the delta so nothing is lost.
            state = startBlock({
              type: delta.type === 'thinking_delta' || delta.type === 'signature_delta' ? 'thinking' : 'text',
            })
            blocks.set(index, state)
          }
          const text = applyDelta(state, delta)
          if (text !== undefined && text !== '') {
            yield state.kind === 'thinking' ? { type: 'thinking-delta', text } : { type: 'text-delta', text }
          }
          break
        }
        case 'content_block_stop': {
          const state = blocks.get(asIndex(event.index))
          if (state?.kind === 'tool' && !state.done) {
            finishTool(state)
            yield { type: 'tool-call', id: state.id, name: state.name, input: structuredClone(state.input) }
          }
          break
        }
        case 'message_delta': {
          const delta = asRecord(event.delta)
          if (typeof delta.stop_reason === 'string') rawStopReason = delta.stop_reason
          if (typeof delta.stop_sequence === 'string') metadata.stopSequence = delta.stop_sequence
          if (delta.stop_details !== undefined && delta.stop_details !== null)
            metadata.stopDetails = delta.stop_details
          mergeUsage(usage, event.usage)
          break
        }
        case 'message_stop': {
          completed = true
          // Tool blocks whose stop never came are still complete calls once the message is.
          for (const state of blocks.values()) {
            if (state.kind === 'tool' && !state.done) {
              finishTool(state)
              yield { type: 'tool-call', id: state.id, name: state.name, input: structuredClone(state.input) }
            }
          }
          const tokenUsage = toTokenUsage(usage)
          if (tokenUsage) yield { type: 'usage', usage: tokenUsage }
          if (rawStopReason !== undefined) metadata.stopReason = rawStopReason
          const message: ClaudeMessageEvent = {
            type: 'message',
            content: toContent(blocks),
            stopReason: mapClaudeStopReason(rawStopReason),
            providerMetadata: { claude: { ...metadata } },
          }
          yield message
          break
        }
        default:
          // `ping` and event types newer than this adapter.
          break
      }
    }
  } catch (error) {
    if (completed) return
    throw error
  }
  if (!completed) {
    throw new AdapterError(
      started
        ? 'The Claude stream ended before message_stop: the response is incomplete.'
        : 'The Claude stream ended before any event arrived.',
      { kind: 'network', provider: CLAUDE_PROVIDER, retryable: true },
    )
  }
}

function startBlock(block: Record<string, unknown>): BlockState {
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

/** Applies a delta to its block; returns the text to stream, if any. */
function applyDelta(state: BlockState, delta: Record<string, unknown>): string | undefined {
  switch (delta.type) {
    case 'text_delta':
      if (state.kind !== 'text' || typeof delta.text !== 'string') return undefined
      state.text += delta.text
      return delta.text
    case 'thinking_delta':
      if (state.kind !== 'thinking' || typeof delta.thinking !== 'string') return undefined
      state.text += delta.thinking
      return delta.thinking
    case 'signature_delta':
      if (state.kind === 'thinking' && typeof delta.signature === 'string') state.signature += delta.signature
      return undefined
    case 'input_json_delta':
      if (state.kind === 'tool' && typeof delta.partial_json === 'string') {
        state.json += delta.partial_json
        state.fragments++
      }
      return undefined
    case 'citations_delta':
      if (state.kind === 'text' && delta.citation !== undefined) state.citations.push(delta.citation)
      return undefined
    default:
      return undefined
  }
}

/**
 * Parses the assembled arguments. Empty arguments are `{}`; arguments that are not valid JSON are
 * kept as the raw text (the tool sees exactly what the model wrote), never a thrown SyntaxError.
 */
function finishTool(state: Extract<BlockState, { kind: 'tool' }>): void {
  state.done = true
  const json = state.json.trim()
  if (json === '') {
    // No fragments: the input the start carried is the whole input (`{}` for a call without arguments).
    const start = state.startInput
    state.input =
      state.fragments === 0 && typeof start === 'object' && start !== null ? structuredClone(start) : {}
    return
  }
  try {
    state.input = JSON.parse(json)
  } catch {
    state.input = state.json
  }
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

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {}
}

function asIndex(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) ? value : 0
}
