import type { AdapterMessage, AdapterStreamOptions, AgentAdapter } from '../contracts/agent-adapter.js'
import type { AnyMessage, ContentBlock, StopReason, TokenUsage } from '../contracts/messages.js'
import { isAdapterError } from '../errors/adapter-error.js'
import type { AgentError } from '../errors/agent-error.js'
import { backoffDelay, type RetryOptions } from '../retry/retry-options.js'
import { sleep } from '../util/abort.js'
import type { EventStream } from '../util/event-stream.js'
import type { Logger } from '../util/logger.js'
import { addUsage } from '../util/token-usage.js'
import { PartialResponse } from './checkpoint.js'
import type { SessionEvent } from './session-events.js'

/** What one model request needs from the session that makes it. */
export interface ModelRequestContext {
  sessionId: string
  adapter: AgentAdapter
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
  /** Keeps what a failed or aborted response streamed. */
  keepPartial(message: AnyMessage): void
  /** Turns anything caught into the error the send fails with. */
  toError(caught: unknown): AgentError
}

/** What a model response produced: its agent message (not yet persisted) and its usage. */
export interface ResponseOutcome {
  message: AnyMessage
  usage: TokenUsage | undefined
}

interface Final {
  content: ContentBlock[]
  stopReason: StopReason | undefined
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
        if (!partial.isEmpty)
          context.keepPartial(
            partial.toMessage(context.sessionId, partial.content(), aborted ? 'aborted' : 'error'),
          )
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
  const state: { usage: TokenUsage | undefined; finished: boolean } = { usage: undefined, finished: false }
  let final: Final | undefined
  try {
    // One abort race per request, not per chunk: a stuck adapter cannot hold up an abort, and the
    // loop itself awaits the adapter directly.
    final = await raceAbort(consume(context, iterator, partial, state), signal)
  } finally {
    if (!state.finished) void Promise.resolve(iterator.return?.()).catch(() => undefined)
  }
  if (signal.aborted) throw context.toError(signal.reason)

  let content = final?.content ? structuredClone(final.content) : partial.content()
  if (partial.toolCalls.length > 0) {
    const known = new Set<string>()
    for (const block of content) if (block.type === 'tool_use') known.add(block.id)
    const missing = partial.toolCalls.filter((call) => !known.has(call.id))
    if (missing.length > 0) content = [...content, ...missing]
  }
  const stopReason = final?.stopReason ?? (partial.toolCalls.length > 0 ? 'tool_use' : 'end_turn')
  const message = partial.toMessage(context.sessionId, content, stopReason)
  if (state.usage) message.usage = state.usage
  return { message, usage: state.usage }
}

/**
 * The per-event loop: the hot path. Allocates nothing per event beyond what the event carries, and
 * is written as promise callbacks rather than an `async` loop: resuming an async function per event
 * cost about a tenth of the whole per-event time.
 */
function consume(
  context: ModelRequestContext,
  iterator: AsyncIterator<AdapterMessage>,
  partial: PartialResponse,
  state: { usage: TokenUsage | undefined; finished: boolean },
): Promise<Final | undefined> {
  const { signal, emit, sink, checkpointIntervalMs } = context
  let final: Final | undefined
  // The clock is read only when a timer says a checkpoint may be due (slow streams) or every 256
  // events (bursts that never yield to the timer): no clock call per event.
  let count = 0
  const clock = new CheckpointClock(checkpointIntervalMs)
  return new Promise<Final | undefined>((resolve, reject) => {
    const fail = (error: unknown): void => {
      clock.stop()
      reject(error)
    }
    const pull = (): void => {
      try {
        iterator.next().then(onNext, fail)
      } catch (error) {
        fail(error)
      }
    }
    const afterCheckpoint = (): void => {
      clock.restart()
      if (sink?.full) waitForConsumer(context, sink, partial).then(pull, fail)
      else pull()
    }
    const onNext = (next: IteratorResult<AdapterMessage>): void => {
      // Aborted while waiting: the request already settled; touch nothing.
      if (signal.aborted) {
        clock.stop()
        resolve(undefined)
        return
      }
      if (next.done === true) {
        state.finished = true
        clock.stop()
        resolve(final)
        return
      }
      try {
        final = handle(context, next.value, partial, state) ?? final
      } catch (error) {
        fail(error)
        return
      }
      if (
        final === undefined &&
        (clock.maybeDue || (++count & 255) === 0) &&
        partial.checkpointDue(checkpointIntervalMs)
      ) {
        context.saveCheckpoint(partial.checkpoint(context.sessionId)).then(afterCheckpoint, fail)
      } else if (sink?.full) {
        waitForConsumer(context, sink, partial).then(pull, fail)
      } else {
        pull()
      }
    }
    pull()
  })

  /** Takes in one adapter event; returns the final content when it is the `message` event. */
  function handle(
    context: ModelRequestContext,
    event: AdapterMessage,
    partial: PartialResponse,
    state: { usage: TokenUsage | undefined },
  ): Final | undefined {
    partial.yielded = true
    const providerSessionId = context.extractSessionId(event)
    if (providerSessionId !== undefined) context.onProviderSessionId(providerSessionId)
    switch (event.type) {
      case 'text-delta':
        partial.text.append(event.text)
        // The adapter's event has the session event's shape: shown as is, no copy per chunk.
        emit(event)
        return undefined
      case 'thinking-delta':
        partial.thinking.append(event.text)
        emit(event)
        return undefined
      case 'tool-call':
        partial.toolCalls.push({ type: 'tool_use', id: event.id, name: event.name, input: event.input })
        emit({ type: 'tool-call', id: event.id, name: event.name, input: event.input })
        return undefined
      case 'usage':
        state.usage = state.usage ? addUsage(state.usage, event.usage) : { ...event.usage }
        context.onUsage(event.usage)
        emit({ type: 'usage', usage: event.usage })
        return undefined
      case 'message':
        return { content: event.content, stopReason: event.stopReason }
      default:
        return undefined
    }
  }
}

/** A flag raised by a timer once per checkpoint interval, so the hot loop need not read the clock. */
class CheckpointClock {
  maybeDue: boolean
  readonly #intervalMs: number
  #timer: ReturnType<typeof setTimeout> | undefined

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs
    this.maybeDue = intervalMs === 0
    this.restart()
  }

  restart(): void {
    if (this.#intervalMs <= 0) return
    this.maybeDue = false
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => {
      this.maybeDue = true
    }, this.#intervalMs)
    this.#timer.unref?.()
  }

  stop(): void {
    clearTimeout(this.#timer)
  }
}

/**
 * Backpressure: waits until the `stream()` consumer has caught up. Checkpoints keep their schedule
 * meanwhile, so a slow consumer never widens what a crash could lose.
 */
async function waitForConsumer(
  context: ModelRequestContext,
  sink: EventStream<SessionEvent>,
  partial: PartialResponse,
): Promise<void> {
  for (;;) {
    const ms = partial.msUntilCheckpoint(context.checkpointIntervalMs)
    if (ms === undefined) return sink.drained()
    let timer: ReturnType<typeof setTimeout> | undefined
    const drained = await Promise.race([
      sink.drained().then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), ms)
      }),
    ])
    clearTimeout(timer)
    if (drained || context.signal.aborted) return
    await context.saveCheckpoint(partial.checkpoint(context.sessionId))
  }
}

/** Settles with `promise`, or rejects as soon as `signal` aborts. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined)
    return Promise.reject(signal.reason)
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}
