import type { TokenUsage } from '@agentx/core'
import type { GenerateContentResponseUsageMetadata } from '@google/genai'

/**
 * Converts Gemini `usageMetadata` into a {@link TokenUsage}: input is `promptTokenCount` (plus
 * `toolUsePromptTokenCount`), with `cachedContentTokenCount` as `cacheReadTokens`; output is
 * `candidatesTokenCount + thoughtsTokenCount`, with the thoughts as `reasoningTokens`. Returns
 * `undefined` when Gemini reported no token counts (rule A-USG-02).
 */
export function mapGeminiUsage(
  metadata: GenerateContentResponseUsageMetadata | undefined,
): TokenUsage | undefined {
  if (metadata === undefined) return undefined
  const {
    promptTokenCount,
    toolUsePromptTokenCount,
    candidatesTokenCount,
    thoughtsTokenCount,
    cachedContentTokenCount,
  } = metadata
  if (
    promptTokenCount === undefined &&
    candidatesTokenCount === undefined &&
    thoughtsTokenCount === undefined
  ) {
    return undefined
  }
  const inputTokens = (promptTokenCount ?? 0) + (toolUsePromptTokenCount ?? 0)
  const outputTokens = (candidatesTokenCount ?? 0) + (thoughtsTokenCount ?? 0)
  const usage: TokenUsage = { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }
  if (cachedContentTokenCount !== undefined) usage.cacheReadTokens = cachedContentTokenCount
  if (thoughtsTokenCount !== undefined) usage.reasoningTokens = thoughtsTokenCount
  return usage
}
