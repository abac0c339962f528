import { randomUUID } from 'node:crypto'
import type { AdapterMessage, ContentBlock, TextBlock, ThinkingBlock } from '@agentx/core'
import { incompleteStreamError, parseJsonFrame, parseToolInput } from '@agentx/core/provider'
import type { ProviderIdentity, ServerSentEventMapper } from '@agentx/core/provider'
import type { GenerateContentResponse, GenerateContentResponseUsageMetadata, Part } from '@google/genai'
import type { GeminiProviderMetadata } from './gemini-provider-metadata.js'
import { mapGeminiStreamError } from './map-gemini-error.js'
import { mapGeminiFinishReason } from './map-gemini-finish-reason.js'
import { mapGeminiUsage } from './map-gemini-usage.js'

type OpenBlock = { kind: 'text'; block: TextBlock } | { kind: 'thinking'; block: ThinkingBlock }

/** One `GenerateContentResponse` as the wire carries it (the SDK's class adds only getters). */
export type GeminiChunk = Pick<
  GenerateContentResponse,
  'candidates' | 'usageMetadata' | 'promptFeedback' | 'responseId'
>

/**
 * The `streamGenerateContent?alt=sse` protocol, for one response: each `data:` frame is a
 * `GenerateContentResponse` as the wire carries it. Text parts become `text-delta`s, `thought`
 * parts `thinking-delta`s, each `functionCall` part a `tool-call` (Gemini sends them whole; one
 * without an `id` gets a stable id made from the response id and its position, marked
 * `syntheticId` in `providerMetadata.gemini`). Every `thoughtSignature` is kept on its block.
 *
 * Gemini has no terminal event: the response ends with the body, after a chunk with a
 * `finishReason` (or a blocked prompt). Then `usage` (the last cumulative `usageMetadata`,
 * reported once) and exactly one `message` are pushed. A body that ends before a finish reason
 * throws a retryable `network` error, never a success; a `{"error": …}` frame (`data:`-framed or
 * bare, as Gemini writes it mid-stream) throws its mapped error. Made by {@link GeminiAdapter} per request and driven by `streamServerSentEvents` from
 * `@agentx/core/provider`.
 */
export class GeminiStreamMapper implements ServerSentEventMapper {
  complete = false
  /** Gemini also writes a mid-stream error as a bare `{"error": …}` object, without `data:`. */
  readonly unframedJson = true
  readonly #provider: ProviderIdentity
  readonly #content: ContentBlock[] = []
  #open: OpenBlock | undefined
  #responseId: string | undefined
  #fallbackId: string | undefined
  #toolCallCount = 0
  #usageMetadata: GenerateContentResponseUsageMetadata | undefined
  #finishReason: string | undefined

  constructor(provider: ProviderIdentity) {
    this.#provider = provider
  }

  onEvent(_event: string | undefined, data: string, output: AdapterMessage[]): void {
    const chunk = parseJsonFrame(this.#provider, data)
    if (chunk.error !== undefined && chunk.error !== null)
      throw mapGeminiStreamError(this.#provider, chunk.error)
    this.onChunk(chunk as GeminiChunk, output)
  }

  /** Handles one parsed chunk (what `onEvent` does after parsing; usable with SDK chunks too). */
  onChunk(chunk: GeminiChunk, output: AdapterMessage[]): void {
    if (typeof chunk.responseId === 'string' && chunk.responseId !== '') this.#responseId ??= chunk.responseId
    if (chunk.usageMetadata) this.#usageMetadata = chunk.usageMetadata
    const candidates = chunk.candidates ?? []
    const candidate = candidates.find((entry) => (entry.index ?? 0) === 0) ?? candidates[0]
    if (candidate === undefined && chunk.promptFeedback?.blockReason !== undefined)
      this.#finishReason ??= 'SAFETY'
    const parts = candidate?.content?.parts
    if (parts !== undefined) for (const part of parts) this.#onPart(part, output)
    if (candidate?.finishReason !== undefined && candidate.finishReason !== 'FINISH_REASON_UNSPECIFIED')
      this.#finishReason = candidate.finishReason
  }

  onEnd(output: AdapterMessage[]): void {
    const finishReason = this.#finishReason
    if (finishReason === undefined) throw incompleteStreamError(this.#provider, 'a finish reason')
    this.complete = true
    const content = this.#content
    const usage = mapGeminiUsage(this.#usageMetadata)
    if (usage) output.push({ type: 'usage', usage })
    const hasToolCalls = content.some((block) => block.type === 'tool_use')
    const last = content[content.length - 1]
    if (last !== undefined && finishReason !== 'STOP' && finishReason !== 'MAX_TOKENS') {
      // Several Gemini reasons share one StopReason (or none fits): keep Gemini's own word (rule A-FIN-005).
      const gemini = (last.providerMetadata?.gemini ?? {}) as GeminiProviderMetadata
      last.providerMetadata = { ...last.providerMetadata, gemini: { ...gemini, finishReason } }
    }
    output.push({ type: 'message', content, stopReason: mapGeminiFinishReason(finishReason, hasToolCalls) })
  }

  #onPart(part: Part, output: AdapterMessage[]): void {
    const signature = part.thoughtSignature
    if (part.functionCall) {
      this.#open = undefined
      const call = part.functionCall
      const metadata: GeminiProviderMetadata = {}
      let id = call.id
      if (id === undefined || id === '') {
        id = this.#nextToolCallId()
        metadata.syntheticId = true
      }
      this.#toolCallCount++
      if (signature !== undefined) metadata.thoughtSignature = signature
      const name = call.name ?? ''
      const input = toInput(call.args)
      const block: ContentBlock = { type: 'tool_use', id, name, input: structuredClone(input) }
      if (Object.keys(metadata).length > 0) block.providerMetadata = { gemini: metadata }
      this.#content.push(block)
      output.push({ type: 'tool-call', id, name, input })
      return
    }
    if (part.inlineData?.data !== undefined) {
      this.#open = undefined
      const image: ContentBlock = {
        type: 'image',
        mediaType: part.inlineData.mimeType ?? 'application/octet-stream',
        data: part.inlineData.data,
      }
      if (signature !== undefined) image.providerMetadata = { gemini: { thoughtSignature: signature } }
      this.#content.push(image)
      return
    }
    if (typeof part.text !== 'string' && signature === undefined) return
    const text = part.text ?? ''
    let open = this.#open
    if (part.thought === true) {
      if (open?.kind !== 'thinking' || open.block.signature !== undefined) {
        open = { kind: 'thinking', block: { type: 'thinking', text: '' } }
        this.#open = open
        this.#content.push(open.block)
      }
      open.block.text += text
      if (signature !== undefined) open.block.signature = signature
      if (text !== '') output.push({ type: 'thinking-delta', text })
      return
    }
    if (open?.kind !== 'text' || open.block.providerMetadata !== undefined) {
      // A signature closes its text block: later text starts a new part, as Gemini sent it.
      if (text === '' && signature === undefined) return
      open = { kind: 'text', block: { type: 'text', text: '' } }
      this.#open = open
      this.#content.push(open.block)
    }
    open.block.text += text
    if (signature !== undefined) open.block.providerMetadata = { gemini: { thoughtSignature: signature } }
    if (text !== '') output.push({ type: 'text-delta', text })
  }

  #nextToolCallId(): string {
    if (this.#responseId === undefined && this.#fallbackId === undefined) this.#fallbackId = randomUUID()
    return `gemini-call-${this.#responseId ?? this.#fallbackId}-${this.#toolCallCount}`
  }
}

/** Gemini sends `args` as an object; a string (never valid per the API) is parsed when it can be, else kept raw. */
function toInput(args: unknown): unknown {
  if (args === undefined || args === null) return {}
  if (typeof args === 'string') return parseToolInput(args).input
  return args
}
