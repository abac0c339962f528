import type { AdapterMessage } from '../contracts/agent-adapter.js'
import type { ContentBlock, StopReason } from '../contracts/messages.js'
import { cloneJson } from '../persistence/json-copy.js'
import { addUsage } from '../util/token-usage.js'
import { malformedOutput, stopReasonFromAdapter, usageFromAdapter } from './adapter-output.js'
import type { PartialResponse } from './checkpoint.js'
import type { ModelRequestContext } from './model-request.js'
import { deepFreeze } from './session-history.js'
import { distinctToolId } from './tool-ids.js'

/** The content and stop reason of the adapter's final `message` event. */
export interface Final {
  content: ContentBlock[]
  stopReason: StopReason | undefined
}

/** What the loop learns beyond the partial reply: whether the adapter finished. */
export interface ResponseState {
  finished: boolean
}

/**
 * Reads one model response from the adapter: the per-event hot path. Settles with the final
 * content (`undefined` when the adapter sent none, or when the request was aborted meanwhile).
 *
 * Allocates nothing per event beyond what the event carries, and is written as promise callbacks
 * rather than an `async` loop: resuming an async function per event cost about a tenth of the
 * whole per-event time.
 */
export function readResponse(
  context: ModelRequestContext,
  iterator: AsyncIterator<AdapterMessage>,
  partial: PartialResponse,
  state: ResponseState,
): Promise<Final | undefined> {
  const { signal, sink, checkpointIntervalMs } = context
  let final: Final | undefined
  // The clock is read only when a timer says a checkpoint may be due (slow streams) or every 256
  // events (bursts that never yield to the timer): no clock call per event.
  let count = 0
  const clock = new CheckpointClock(checkpointIntervalMs)
  return new Promise<Final | undefined>((resolveResponse, rejectResponse) => {
    // Settled once; an event the adapter yields after that (a failed checkpoint ended the
    // request while it was waiting) is ignored.
    let settled = false
    // Whether the loop is waiting for the adapter's next event or for the consumer (not for a write).
    let waiting = false
    const resolve = (value: Final | undefined): void => {
      if (settled) return
      settled = true
      clock.stop()
      signal.removeEventListener('abort', onAbort)
      resolveResponse(value)
    }
    const fail = (error: unknown): void => {
      if (settled) return
      settled = true
      clock.stop()
      signal.removeEventListener('abort', onAbort)
      rejectResponse(error)
    }
    // Aborted: the request settles at once (the caller's abort race reports it); an event that
    // arrives after that touches nothing. One listener per request, no check per event.
    const onAbort = (): void => resolve(undefined)
    const pull = (): void => {
      waiting = true
      try {
        iterator.next().then(onNext, fail)
      } catch (error) {
        fail(error)
      }
    }
    // Backpressure: the `stream()` consumer is behind, so the next event is asked for once it has
    // caught up. The clock's checkpoints go on meanwhile: a slow consumer never widens what a
    // crash could lose.
    const awaitConsumer = (drained: Promise<void>): void => {
      waiting = true
      drained.then(pull, fail)
    }
    const afterCheckpoint = (): void => {
      clock.restart()
      if (sink?.full) awaitConsumer(sink.drained())
      else pull()
    }
    // A provider that stalls mid-reply, or a consumer that lags: the text so far is saved when the
    // interval is up, not only when the next event arrives (which may be never, before a crash).
    clock.onDue = () => {
      if (!waiting || settled || final !== undefined) return
      const ms = partial.msUntilCheckpoint(checkpointIntervalMs)
      if (ms === undefined) return // nothing new since the last checkpoint: the next event decides
      if (ms > 0) {
        clock.restart(ms)
        return
      }
      context.saveCheckpoint(partial.checkpoint(context.sessionId)).then(() => {
        if (!settled) clock.restart()
      }, fail)
    }
    const onNext = (next: IteratorResult<AdapterMessage>): void => {
      waiting = false
      if (settled) return
      if (next.done === true) {
        state.finished = true
        resolve(final)
        return
      }
      try {
        final = handle(context, next.value, partial) ?? final
      } catch (error) {
        fail(error)
        return
      }
      // A listener aborted the send: nothing more is read or saved by this loop.
      if (settled) return
      if (
        final === undefined &&
        (clock.maybeDue || (++count & 255) === 0) &&
        partial.checkpointDue(checkpointIntervalMs)
      ) {
        context.saveCheckpoint(partial.checkpoint(context.sessionId)).then(afterCheckpoint, fail)
      } else if (sink?.full) {
        awaitConsumer(sink.drained())
      } else {
        pull()
      }
    }
    signal.addEventListener('abort', onAbort, { once: true })
    pull()
  })
}

/** Takes in one adapter event; returns the final content when it is the `message` event. */
function handle(
  context: ModelRequestContext,
  event: AdapterMessage,
  partial: PartialResponse,
): Final | undefined {
  partial.yielded = true
  const providerSessionId = context.extractSessionId(event)
  if (providerSessionId !== undefined) context.onProviderSessionId(providerSessionId)
  switch (event.type) {
    case 'text-delta':
      partial.text.append(event.text)
      // The adapter's event has the session event's shape: shown as is, no copy per chunk.
      context.emit(event)
      return undefined
    case 'thinking-delta':
      partial.thinking.append(event.text)
      context.emit(event)
      return undefined
    case 'tool-call': {
      if (typeof event.id !== 'string' || typeof event.name !== 'string') {
        throw malformedOutput(context, 'a tool-call event needs a string id and name.')
      }
      // Shown and kept as a frozen copy: a listener that changes the event's input (to redact it)
      // changes neither the adapter's object (which its final message may share) nor what is stored.
      const input = copyInput(context, event.input)
      const id = distinctToolId(event.id, partial.toolIds)
      partial.toolCalls.push({ type: 'tool_use', id, name: event.name, input })
      context.emit({ type: 'tool-call', id, name: event.name, input })
      return undefined
    }
    case 'usage': {
      const usage = usageFromAdapter(context, event.usage)
      if (usage === undefined) return undefined
      partial.usage = partial.usage ? addUsage(partial.usage, usage) : { ...usage }
      context.onUsage(usage)
      context.emit({ type: 'usage', usage })
      return undefined
    }
    case 'message':
      return { content: event.content, stopReason: stopReasonFromAdapter(context, event.stopReason) }
    default:
      return undefined
  }
}

/** A frozen JSON copy of a tool call's input; input JSON cannot hold is the adapter's malformed output. */
function copyInput(context: ModelRequestContext, input: unknown): unknown {
  if (input === undefined) return undefined
  try {
    return deepFreeze(cloneJson(input, 'input'))
  } catch (error) {
    throw malformedOutput(context, `a tool-call event's ${(error as Error).message}`)
  }
}

/**
 * A flag raised by a timer once per checkpoint interval, so the hot loop need not read the clock;
 * {@link CheckpointClock.onDue} runs when it is raised.
 */
class CheckpointClock {
  maybeDue: boolean
  onDue: (() => void) | undefined
  readonly #intervalMs: number
  #timer: ReturnType<typeof setTimeout> | undefined

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs
    this.maybeDue = intervalMs === 0
    this.restart()
  }

  /** Lowers the flag and raises it again in `ms` (default: one interval). */
  restart(ms: number = this.#intervalMs): void {
    if (this.#intervalMs <= 0) return
    this.maybeDue = false
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => {
      this.maybeDue = true
      this.onDue?.()
    }, ms)
    this.#timer.unref?.()
  }

  stop(): void {
    clearTimeout(this.#timer)
  }
}
