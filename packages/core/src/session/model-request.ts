import type { AdapterMessage, AdapterStreamOptions, AgentAdapter } from '../contracts/agent-adapter.js'
import type { AnyMessage, ContentBlock, TokenUsage } from '../contracts/messages.js'
import { isAdapterError } from '../errors/adapter-error.js'
import type { AgentError } from '../errors/agent-error.js'
import { backoffDelay, type RetryOptions } from '../retry/retry-options.js'
import { raceAbort, sleep } from '../util/abort.js'
import type { EventStream } from '../util/event-stream.js'
import type { Logger } from '../util/logger.js'
import { checkReplyContent } from './adapter-output.js'
import { PartialResponse } from './checkpoint.js'
import { type Final, type ResponseState, readResponse } from './response-stream.js'
import type { SessionEvent } from './session-events.js'
import { markSignatures } from './foreign-thinking.js'
import { distinctToolId } from './tool-ids.js'

/** What one model request needs from the session that makes it. */
export interface ModelRequestContext {
  sessionId: string
  adapter: AgentAdapter
  /** The profile answering (with profiles): its name goes on checkpoints and kept partial replies. */
  agentName: string | undefined
  signal: AbortSignal
  retry: Required<RetryOptions>
  checkpointIntervalMs: number
  logger: Logger | undefined
  emit(event: SessionEvent): void
  /** The `stream()` consumer's buffer, when there is one: the request waits while it is full. */
  sink: EventStream<SessionEvent> | undefined
  /** Finds a provider session id in an adapter message (the session's protected hook). */
  extractSessionId(event: AdapterMessage): string | undefined
  onProviderSessionId(id: string): void
  onUsage(usage: TokenUsage): void
  /** Queues a checkpoint write (awaited in `sync` durability). */
  saveCheckpoint(message: AnyMessage): Promise<void>
  /** Keeps what a failed or aborted response streamed; in `sync` durability, resolves once it is shown. */
  keepPartial(message: AnyMessage): Promise<void> | undefined
  /** Turns anything caught into the error the send fails with. */
  toError(caught: unknown): AgentError
}

/** What a model response produced: its agent message (not yet persisted) and its usage. */
export interface ResponseOutcome {
  message: AnyMessage
  usage: TokenUsage | undefined
}

/**
 * One model request with the kernel's retry policy (DESIGN §7.3): a retryable error before the
 * first event is tried again with exponential backoff and jitter, honouring `retryAfterMs`
 * (events `retry` / `retries-exhausted`); after the first event an error keeps the partial reply
 * as `incomplete` and fails the send.
 */
export async function runModelRequest(
  context: ModelRequestContext,
  prompt: string | ContentBlock[],
  options: AdapterStreamOptions,
  seq: number,
  failed: { usage?: TokenUsage } = {},
): Promise<ResponseOutcome> {
  const { retry, signal, emit } = context
  for (let attempt = 0; ; attempt++) {
    const partial = new PartialResponse(seq)
    try {
      return await streamResponse(context, prompt, options, partial)
    } catch (caught) {
      const error = context.toError(caught)
      const aborted = isAdapterError(error) && error.kind === 'aborted'
      if (partial.yielded || aborted || !error.retryable) {
        // What the failed response reported it used: on its kept reply and, through `failed`, on
        // the step's `step-finish` event (the session's usage took it in as it arrived).
        if (partial.usage !== undefined) failed.usage = partial.usage
        let kept: Promise<void> | undefined
        if (!partial.isEmpty) {
          const message = partial.toMessage(
            context.sessionId,
            partial.content(),
            aborted ? 'aborted' : 'error',
          )
          if (partial.usage !== undefined) message.usage = partial.usage
          kept = context.keepPartial(message)
        }
        if (kept !== undefined) await kept
        throw error
      }
      const retryAfter = isAdapterError(error) ? error.retryAfterMs : undefined
      if (attempt >= retry.maxRetries || (retryAfter !== undefined && retryAfter > retry.maxDelayMs)) {
        if (retry.maxRetries > 0) emit({ type: 'retries-exhausted', error })
        throw error
      }
      const delayMs = retryAfter ?? backoffDelay(attempt + 1, retry)
      emit({ type: 'retry', attempt: attempt + 1, delayMs, error })
      context.logger?.warn('agentx: retrying a failed model request', {
        sessionId: context.sessionId,
        attempt: attempt + 1,
        delayMs,
      })
      await sleep(delayMs, signal).catch(() => undefined)
      if (signal.aborted) throw context.toError(signal.reason)
    }
  }
}

async function streamResponse(
  context: ModelRequestContext,
  prompt: string | ContentBlock[],
  options: AdapterStreamOptions,
  partial: PartialResponse,
): Promise<ResponseOutcome> {
  const { signal } = context
  if (signal.aborted) throw context.toError(signal.reason)
  const iterator = context.adapter.stream(prompt, options)[Symbol.asyncIterator]()
  const state: ResponseState = { finished: false }
  let final: Final | undefined
  try {
    // One abort race per request, not per chunk: a stuck adapter cannot hold up an abort, and the
    // loop itself awaits the adapter directly.
    final = await raceAbort(readResponse(context, iterator, partial, state), signal)
  } finally {
    if (!state.finished) void Promise.resolve(iterator.return?.()).catch(() => undefined)
  }
  if (signal.aborted) throw context.toError(signal.reason)

  if (final?.content) checkReplyContent(context, final.content)
  let content = final?.content ? structuredClone(final.content) : partial.content()
  const taken = new Set<string>()
  for (const block of content) if (block.type === 'tool_use') block.id = distinctToolId(block.id, taken)
  markSignatures(content, context.adapter.getName())
  if (partial.toolCalls.length > 0) {
    const known = new Set<string>()
    for (const block of content) if (block.type === 'tool_use') known.add(block.id)
    const missing = partial.toolCalls.filter((call) => !known.has(call.id))
    if (missing.length > 0) content = [...content, ...missing]
  }
  const stopReason = final?.stopReason ?? (partial.toolCalls.length > 0 ? 'tool_use' : 'end_turn')
  const message = partial.toMessage(context.sessionId, content, stopReason)
  if (partial.usage) message.usage = partial.usage
  return { message, usage: partial.usage }
}
