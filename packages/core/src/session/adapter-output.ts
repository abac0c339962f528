import type { ContentBlock, StopReason, TokenUsage } from '../contracts/messages.js'
import { AdapterError } from '../errors/adapter-error.js'
import { contentProblem, isCount, isRecord, STOP_REASONS, usageProblem } from '../persistence/shapes.js'
import type { ModelRequestContext } from './model-request.js'

/**
 * Where the kernel takes in what an adapter produced, so that a faulty adapter can never make the
 * kernel store something a persister must refuse (which would fail every later write of the
 * session) or poison the history that the next request sends back.
 *
 * A malformed reply (content blocks without their fields, a tool call without an id) fails the
 * request with a non-retryable {@link AdapterError}; the text streamed so far is kept as usual.
 * Malformed bookkeeping (a usage with a missing or non-numeric count, an unknown stop reason) is
 * repaired with a warning: the reply itself is fine and is not thrown away for it.
 */

/** The error of an adapter that broke the event protocol. */
export function malformedOutput(context: ModelRequestContext, detail: string): AdapterError {
  return new AdapterError(`The adapter sent a malformed event: ${detail}`, {
    kind: 'unknown',
    provider: context.adapter.getName(),
    retryable: false,
  })
}

/** Checks the content of the adapter's final `message` event. */
export function checkReplyContent(context: ModelRequestContext, content: string | ContentBlock[]): void {
  const problem = contentProblem(content, 'message.content')
  if (problem !== undefined) throw malformedOutput(context, problem)
}

/**
 * The usage of a `usage` event, repaired where it is malformed: a count that is missing, negative
 * or not a finite number counts `0` (`totalTokens`: input plus output); an optional part that is
 * malformed is left out. `undefined` (the event is ignored) when it is not an object at all.
 */
export function usageFromAdapter(context: ModelRequestContext, usage: unknown): TokenUsage | undefined {
  const problem = usageProblem(usage, 'usage')
  if (problem === undefined) return usage as TokenUsage
  context.logger?.warn('agentx: the adapter reported a malformed usage; repaired', {
    sessionId: context.sessionId,
    provider: context.adapter.getName(),
    problem,
  })
  if (!isRecord(usage)) return undefined
  const inputTokens = isCount(usage.inputTokens) ? usage.inputTokens : 0
  const outputTokens = isCount(usage.outputTokens) ? usage.outputTokens : 0
  const repaired: TokenUsage = {
    inputTokens,
    outputTokens,
    totalTokens: isCount(usage.totalTokens) ? usage.totalTokens : inputTokens + outputTokens,
  }
  for (const key of ['cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens'] as const) {
    const value = usage[key]
    if (isCount(value)) repaired[key] = value
  }
  return repaired
}

/** The stop reason of the final `message` event; one outside DESIGN's list is stored as `'other'`. */
export function stopReasonFromAdapter(
  context: ModelRequestContext,
  stopReason: unknown,
): StopReason | undefined {
  if (stopReason === undefined || stopReason === null) return undefined
  if (STOP_REASONS.has(stopReason)) return stopReason as StopReason
  context.logger?.warn("agentx: the adapter sent an unknown stop reason; stored as 'other'", {
    sessionId: context.sessionId,
    provider: context.adapter.getName(),
  })
  return 'other'
}
