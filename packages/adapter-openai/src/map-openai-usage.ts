import type { TokenUsage } from '@agentx/core'

/**
 * Turns an OpenAI usage object, of the Responses API (`input_tokens`, `output_tokens`) or of Chat
 * Completions (`prompt_tokens`, `completion_tokens`), into a core {@link TokenUsage}.
 *
 * OpenAI's input count already includes cached tokens and its output count already includes
 * reasoning tokens, which is exactly what DESIGN section 4 asks, so they are taken as they are;
 * `totalTokens` is their sum. Detail counts are reported only when the provider sent them.
 * Returns `undefined` when there is no usage (rule A-USG-002: absent, never 0).
 */
export function mapOpenAIUsage(raw: unknown): TokenUsage | undefined {
  if (raw === null || typeof raw !== 'object') return undefined
  const usage = raw as Record<string, unknown>
  const input = numberOr(usage.input_tokens, usage.prompt_tokens)
  const output = numberOr(usage.output_tokens, usage.completion_tokens)
  if (input === undefined && output === undefined) return undefined
  const inputDetails = objectOr(usage.input_tokens_details, usage.prompt_tokens_details)
  const outputDetails = objectOr(usage.output_tokens_details, usage.completion_tokens_details)
  const result: TokenUsage = { inputTokens: input ?? 0, outputTokens: output ?? 0, totalTokens: 0 }
  const cacheRead = numberOr(inputDetails?.cached_tokens)
  const cacheWrite = numberOr(inputDetails?.cache_write_tokens, inputDetails?.cache_creation_tokens)
  const reasoning = numberOr(outputDetails?.reasoning_tokens)
  if (cacheRead !== undefined) result.cacheReadTokens = cacheRead
  if (cacheWrite !== undefined) result.cacheWriteTokens = cacheWrite
  if (reasoning !== undefined) result.reasoningTokens = reasoning
  result.totalTokens = result.inputTokens + result.outputTokens
  return result
}

function numberOr(...values: unknown[]): number | undefined {
  for (const value of values) if (typeof value === 'number' && Number.isFinite(value)) return value
  return undefined
}

function objectOr(...values: unknown[]): Record<string, unknown> | undefined {
  for (const value of values)
    if (value !== null && typeof value === 'object') return value as Record<string, unknown>
  return undefined
}
