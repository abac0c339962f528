import { randomUUID } from 'node:crypto'
import {
  AdapterError,
  type AdapterMessage,
  type ContentBlock,
  type TextBlock,
  type ThinkingBlock,
} from '@agentx/core'
import type { GenerateContentResponse, GenerateContentResponseUsageMetadata, Part } from '@google/genai'
import type { GeminiProviderMetadata } from './gemini-provider-metadata.js'
import { GEMINI_PROVIDER } from './map-gemini-error.js'
import { mapGeminiFinishReason } from './map-gemini-finish-reason.js'
import { mapGeminiUsage } from './map-gemini-usage.js'

type OpenBlock = { kind: 'text'; block: TextBlock } | { kind: 'thinking'; block: ThinkingBlock }

/**
 * Turns the chunks of `generateContentStream` into {@link AdapterMessage}s.
 *
 * Text parts become `text-delta`s, `thought` parts `thinking-delta`s, each `functionCall` part a
 * `tool-call` (Gemini sends them whole; one without an `id` gets a stable id made from the
 * response id and its position, marked `syntheticId` in `providerMetadata.gemini`). Every
 * `thoughtSignature` is kept on its block. When the stream ends, `usage` (the last cumulative
 * `usageMetadata`, reported once) and then exactly one `message` are yielded. A stream that ends
 * before a `finishReason` (or a blocked prompt) throws a retryable `network` {@link AdapterError},
 * never a success (rule A-ERR-03); an error after the finish reason is ignored, the response being
 * complete.
 *
 * Called by `GeminiAdapter`; exported for custom adapters built on the same SDK.
 */
export async function* mapGeminiStream(
  chunks: AsyncIterable<GenerateContentResponse>,
): AsyncGenerator<AdapterMessage> {
  const content: ContentBlock[] = []
  let open: OpenBlock | undefined
  let responseId: string | undefined
  let fallbackId: string | undefined
  let toolCallCount = 0
  let usageMetadata: GenerateContentResponseUsageMetadata | undefined
  let finishReason: string | undefined

  const nextToolCallId = (): string => {
    if (responseId === undefined && fallbackId === undefined) fallbackId = randomUUID()
    const base = responseId ?? fallbackId
    return `gemini-call-${base}-${toolCallCount}`
  }

  function* onPart(part: Part): Generator<AdapterMessage> {
    const signature = part.thoughtSignature
    if (part.functionCall) {
      open = undefined
      const call = part.functionCall
      const metadata: GeminiProviderMetadata = {}
      let id = call.id
      if (id === undefined || id === '') {
        id = nextToolCallId()
        metadata.syntheticId = true
      }
      toolCallCount++
      if (signature !== undefined) metadata.thoughtSignature = signature
      const name = call.name ?? ''
      const input = toInput(call.args)
      const block: ContentBlock = { type: 'tool_use', id, name, input: structuredClone(input) }
      if (Object.keys(metadata).length > 0) block.providerMetadata = { gemini: metadata }
      content.push(block)
      yield { type: 'tool-call', id, name, input }
      return
    }
    if (part.inlineData?.data !== undefined) {
      open = undefined
      const image: ContentBlock = {
        type: 'image',
        mediaType: part.inlineData.mimeType ?? 'application/octet-stream',
        data: part.inlineData.data,
      }
      if (signature !== undefined) image.providerMetadata = { gemini: { thoughtSignature: signature } }
      content.push(image)
      return
    }
    if (typeof part.text !== 'string' && signature === undefined) return
    const text = part.text ?? ''
    if (part.thought === true) {
      if (open?.kind !== 'thinking' || open.block.signature !== undefined) {
        open = { kind: 'thinking', block: { type: 'thinking', text: '' } }
        content.push(open.block)
      }
      open.block.text += text
      if (signature !== undefined) open.block.signature = signature
      if (text !== '') yield { type: 'thinking-delta', text }
      return
    }
    if (open?.kind !== 'text' || open.block.providerMetadata !== undefined) {
      // A signature closes its text block: later text starts a new part, as Gemini sent it.
      if (text === '' && signature === undefined) return
      open = { kind: 'text', block: { type: 'text', text: '' } }
      content.push(open.block)
    }
    open.block.text += text
    if (signature !== undefined) open.block.providerMetadata = { gemini: { thoughtSignature: signature } }
    if (text !== '') yield { type: 'text-delta', text }
  }

  try {
    for await (const chunk of chunks) {
      if (typeof chunk.responseId === 'string' && chunk.responseId !== '') responseId ??= chunk.responseId
      if (chunk.usageMetadata) usageMetadata = chunk.usageMetadata
      const candidates = chunk.candidates ?? []
      const candidate = candidates.find((entry) => (entry.index ?? 0) === 0) ?? candidates[0]
      if (candidate === undefined && chunk.promptFeedback?.blockReason !== undefined) {
        finishReason ??= 'SAFETY'
      }
      for (const part of candidate?.content?.parts ?? []) yield* onPart(part)
      if (candidate?.finishReason !== undefined && candidate.finishReason !== 'FINISH_REASON_UNSPECIFIED') {
        finishReason = candidate.finishReason
      }
    }
  } catch (error) {
    // The response was complete; a connection that breaks afterwards does not undo it.
    if (finishReason === undefined || (error as { name?: unknown })?.name === 'ApiError') throw error
  }

  if (finishReason === undefined) {
    throw new AdapterError('The Gemini stream ended before a finish reason; the response is incomplete.', {
      kind: 'network',
      provider: GEMINI_PROVIDER,
    })
  }
  const usage = mapGeminiUsage(usageMetadata)
  if (usage) yield { type: 'usage', usage }
  const hasToolCalls = content.some((block) => block.type === 'tool_use')
  const last = content[content.length - 1]
  if (last !== undefined && finishReason !== 'STOP' && finishReason !== 'MAX_TOKENS') {
    // Several Gemini reasons share one StopReason (or none fits): keep Gemini's own word (rule A-FIN-005).
    const gemini = (last.providerMetadata?.gemini ?? {}) as GeminiProviderMetadata
    last.providerMetadata = { ...last.providerMetadata, gemini: { ...gemini, finishReason } }
  }
  yield { type: 'message', content, stopReason: mapGeminiFinishReason(finishReason, hasToolCalls) }
}

/** Gemini sends `args` as an object; a string (never valid per the API) is parsed when it can be, else kept raw. */
function toInput(args: unknown): unknown {
  if (args === undefined || args === null) return {}
  if (typeof args === 'string') {
    if (args.trim() === '') return {}
    try {
      return JSON.parse(args)
    } catch {
      return args
    }
  }
  return args
}
