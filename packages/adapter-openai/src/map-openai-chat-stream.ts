import type { AdapterMessage, ContentBlock, StopReason, TokenUsage } from '@agentx/core'
import { incompleteStreamError, parseJsonFrame, parseToolInput } from '@agentx/core/provider'
import type { ProviderIdentity, ServerSentEventMapper } from '@agentx/core/provider'
import { keepRawStopReason } from './keep-raw-stop-reason.js'
import { mapOpenAIStreamError, type OpenAIErrorBody } from './map-openai-error.js'
import { mapOpenAIUsage } from './map-openai-usage.js'

interface ToolCallState {
  id: string
  name: string
  arguments: string
}

/**
 * The Chat Completions stream protocol (OpenAI and every compatible server), for one response:
 * `text-delta` for `delta.content` (and refusals), `thinking-delta` for
 * `delta.reasoning_content` / `delta.reasoning` (what DeepSeek, vLLM, Ollama and OpenRouter
 * stream), tool calls assembled from their fragments by `index` (a new `id` at a used index
 * starts a new call, as some servers send), then at `data: [DONE]` the tool calls, `usage` (from
 * whichever chunk carried it, usually the trailing `choices: []` one) and exactly one `message`.
 *
 * A chunk with an `error` key throws its mapped error; a body that ends before `data: [DONE]`
 * throws a retryable `network` error (rule A-ERR-006). Made by {@link OpenAIAdapter} per request
 * and driven by `streamServerSentEvents` from `@agentx/core/provider`.
 */
export class OpenAIChatStreamMapper implements ServerSentEventMapper {
  complete = false
  readonly #provider: ProviderIdentity
  #text = ''
  #thinking = ''
  /** The delta field the reasoning came in, so that it goes back in the same one. */
  #reasoningField: 'reasoning_content' | 'reasoning' | undefined
  /** Whether the model refused (`delta.refusal`): the reply then stops with `content_filter`. */
  #refused = false
  readonly #calls: ToolCallState[] = []
  readonly #byIndex = new Map<number, ToolCallState>()
  #finishReason: string | undefined
  #usage: TokenUsage | undefined

  constructor(provider: ProviderIdentity) {
    this.#provider = provider
  }

  onEvent(_event: string | undefined, data: string, output: AdapterMessage[]): void {
    if (data === '[DONE]' || data.trim() === '[DONE]') {
      this.#finish(output)
      return
    }
    const chunk = parseJsonFrame(this.#provider, data)
    if (chunk.error !== undefined && chunk.error !== null) {
      const body =
        typeof chunk.error === 'object' ? (chunk.error as OpenAIErrorBody) : { message: String(chunk.error) }
      throw mapOpenAIStreamError(this.#provider, body)
    }
    const usage = mapOpenAIUsage(chunk.usage)
    if (usage) this.#usage = usage
    const choices = chunk.choices
    if (!Array.isArray(choices) || choices.length === 0) return
    const choice = (choices as Array<Record<string, unknown>>).find(
      (candidate) => (candidate.index ?? 0) === 0,
    )
    if (!choice) return
    const delta = (choice.delta as Record<string, unknown> | null | undefined) ?? {}
    const reasoning = firstString(delta.reasoning_content, delta.reasoning)
    if (reasoning !== undefined) {
      this.#reasoningField ??= typeof delta.reasoning_content === 'string' ? 'reasoning_content' : 'reasoning'
      this.#thinking += reasoning
      output.push({ type: 'thinking-delta', text: reasoning })
    }
    const refusal = delta.refusal
    if (typeof refusal === 'string' && refusal !== '') this.#refused = true
    const content = firstString(delta.content, refusal)
    if (content !== undefined) {
      this.#text += content
      output.push({ type: 'text-delta', text: content })
    }
    if (Array.isArray(delta.tool_calls)) this.#onToolCalls(delta.tool_calls as Array<Record<string, unknown>>)
    if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '')
      this.#finishReason = choice.finish_reason
  }

  onEnd(): void {
    throw incompleteStreamError(this.#provider, 'data: [DONE]')
  }

  #onToolCalls(fragments: Array<Record<string, unknown>>): void {
    const calls = this.#calls
    for (const fragment of fragments) {
      const id = typeof fragment.id === 'string' && fragment.id !== '' ? fragment.id : undefined
      // Without an index (some servers), a fragment continues the last call unless it brings a new id.
      const index =
        typeof fragment.index === 'number'
          ? fragment.index
          : id === undefined || calls.at(-1)?.id === id
            ? Math.max(0, calls.length - 1)
            : calls.length
      const fn = (fragment.function as Record<string, unknown> | undefined) ?? {}
      let call = this.#byIndex.get(index)
      if (!call || (id !== undefined && call.id !== id && call.id !== '')) {
        call = { id: id ?? '', name: '', arguments: '' }
        calls.push(call)
        this.#byIndex.set(index, call)
      }
      if (id !== undefined && call.id === '') call.id = id
      if (typeof fn.name === 'string' && fn.name !== '' && call.name === '') call.name = fn.name
      if (typeof fn.arguments === 'string') call.arguments += fn.arguments
    }
  }

  #finish(output: AdapterMessage[]): void {
    this.complete = true
    const blocks: ContentBlock[] = []
    if (this.#thinking !== '')
      blocks.push({
        type: 'thinking',
        text: this.#thinking,
        providerMetadata: { openai: { reasoningField: this.#reasoningField ?? 'reasoning_content' } },
      })
    if (this.#text !== '') blocks.push({ type: 'text', text: this.#text })
    for (const [position, call] of this.#calls.entries()) {
      const id = call.id === '' ? `call_${position}` : call.id
      const parsed = parseToolInput(call.arguments)
      output.push({ type: 'tool-call', id, name: call.name, input: structuredClone(parsed.input) })
      blocks.push({
        type: 'tool_use',
        id,
        name: call.name,
        input: parsed.input,
        ...(parsed.ok ? {} : { providerMetadata: { openai: { rawArguments: call.arguments } } }),
      })
    }
    if (this.#usage) output.push({ type: 'usage', usage: this.#usage })
    const stopped = stopReasonOf(this.#finishReason, this.#calls.length > 0)
    // A refusal ends with `stop`: told apart as the Responses API and Claude tell it.
    const stopReason = stopped === 'end_turn' && this.#refused ? 'content_filter' : stopped
    if (stopReason === 'other' && this.#finishReason !== undefined)
      keepRawStopReason(blocks, this.#finishReason)
    output.push({ type: 'message', content: blocks, stopReason })
  }
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
