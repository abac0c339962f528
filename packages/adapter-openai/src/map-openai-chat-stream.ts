import type { AdapterMessage, ContentBlock, StopReason, TokenUsage } from '@agentx/core'
import { keepRawStopReason } from './keep-raw-stop-reason.js'
import { mapOpenAIStreamError } from './map-openai-error.js'
import type { OpenAIErrorBody } from './map-openai-error.js'
import { mapOpenAIUsage } from './map-openai-usage.js'
import type { OpenAIStreamContext } from './openai-stream-context.js'
import { parseEventData, truncatedStreamError } from './openai-stream-context.js'
import { parseToolArguments } from './parse-tool-arguments.js'
import type { ServerSentEvent } from './read-server-sent-events.js'

/** Options of {@link mapOpenAIChatStream}. */
export interface OpenAIChatStreamOptions extends OpenAIStreamContext {
  /** Called once `data: [DONE]` arrived (before the final events are yielded). */
  onTerminal?: () => void
}

interface ToolCallState {
  id: string
  name: string
  arguments: string
}

/**
 * Turns the server-sent events of a streamed Chat Completions call (OpenAI or any compatible
 * server) into {@link AdapterMessage}s: `text-delta` for `delta.content` (and refusals),
 * `thinking-delta` for `delta.reasoning_content` / `delta.reasoning` (what DeepSeek, vLLM,
 * Ollama and OpenRouter stream), tool calls assembled from their fragments by `index` (a new `id`
 * at a used index starts a new call, as some servers send), then `usage` (from whichever chunk
 * carries it, usually the trailing `choices: []` one) and exactly one `message`.
 *
 * The stream must end with `data: [DONE]`; a stream cut before it throws a retryable `network`
 * error (rule A-ERR-006), a chunk with an `error` key throws a mapped error.
 */
export async function* mapOpenAIChatStream(
  events: AsyncIterable<ServerSentEvent>,
  options: OpenAIChatStreamOptions,
): AsyncGenerator<AdapterMessage, void, undefined> {
  let text = ''
  let thinking = ''
  const calls: ToolCallState[] = []
  const byIndex = new Map<number, ToolCallState>()
  let finishReason: string | undefined
  let usage: TokenUsage | undefined
  let done = false

  for await (const sse of events) {
    if (sse.data.trim() === '[DONE]') {
      done = true
      break
    }
    const chunk = parseEventData(sse, options)
    if (chunk.error !== undefined && chunk.error !== null) {
      const body =
        typeof chunk.error === 'object' ? (chunk.error as OpenAIErrorBody) : { message: String(chunk.error) }
      throw mapOpenAIStreamError(body, options.error)
    }
    const chunkUsage = mapOpenAIUsage(chunk.usage)
    if (chunkUsage) usage = chunkUsage
    const choices = Array.isArray(chunk.choices) ? (chunk.choices as Array<Record<string, unknown>>) : []
    const choice = choices.find((candidate) => (candidate.index ?? 0) === 0)
    if (!choice) continue
    const delta = (choice.delta as Record<string, unknown> | null | undefined) ?? {}
    const reasoning = firstString(delta.reasoning_content, delta.reasoning)
    if (reasoning) {
      thinking += reasoning
      yield { type: 'thinking-delta', text: reasoning }
    }
    const content = firstString(delta.content, delta.refusal)
    if (content) {
      text += content
      yield { type: 'text-delta', text: content }
    }
    if (Array.isArray(delta.tool_calls)) {
      for (const fragment of delta.tool_calls as Array<Record<string, unknown>>) {
        const id = typeof fragment.id === 'string' && fragment.id !== '' ? fragment.id : undefined
        // Without an index (some servers), a fragment continues the last call unless it brings a new id.
        const index =
          typeof fragment.index === 'number'
            ? fragment.index
            : id === undefined || calls.at(-1)?.id === id
              ? Math.max(0, calls.length - 1)
              : calls.length
        const fn = (fragment.function as Record<string, unknown> | undefined) ?? {}
        let call = byIndex.get(index)
        if (!call || (id !== undefined && call.id !== id && call.id !== '')) {
          call = { id: id ?? '', name: '', arguments: '' }
          calls.push(call)
          byIndex.set(index, call)
        }
        if (id !== undefined && call.id === '') call.id = id
        if (typeof fn.name === 'string' && fn.name !== '' && call.name === '') call.name = fn.name
        if (typeof fn.arguments === 'string') call.arguments += fn.arguments
      }
    }
    if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '')
      finishReason = choice.finish_reason
  }

  if (!done) throw truncatedStreamError('data: [DONE]', options)
  options.onTerminal?.()

  const blocks: ContentBlock[] = []
  if (thinking !== '') blocks.push({ type: 'thinking', text: thinking })
  if (text !== '') blocks.push({ type: 'text', text })
  for (const [position, call] of calls.entries()) {
    const id = call.id === '' ? `call_${position}` : call.id
    const parsed = parseToolArguments(call.arguments)
    yield { type: 'tool-call', id, name: call.name, input: structuredClone(parsed.input) }
    blocks.push({
      type: 'tool_use',
      id,
      name: call.name,
      input: parsed.input,
      ...(parsed.ok ? {} : { providerMetadata: { openai: { rawArguments: call.arguments } } }),
    })
  }
  if (usage) yield { type: 'usage', usage }
  const stopReason = stopReasonOf(finishReason, calls.length > 0)
  if (stopReason === 'other' && finishReason !== undefined) keepRawStopReason(blocks, finishReason)
  yield { type: 'message', content: blocks, stopReason }
}

function stopReasonOf(finishReason: string | undefined, hasToolCalls: boolean): StopReason {
  switch (finishReason) {
    case 'stop':
    case 'eos':
      return hasToolCalls ? 'tool_use' : 'end_turn'
    case 'length':
      return 'max_tokens'
    case 'tool_calls':
    case 'function_call':
      return 'tool_use'
    case 'content_filter':
      return 'content_filter'
    case undefined:
      return hasToolCalls ? 'tool_use' : 'end_turn'
    default:
      return 'other'
  }
}

function firstString(...values: unknown[]): string | undefined {
  for (const value of values) if (typeof value === 'string' && value !== '') return value
  return undefined
}
