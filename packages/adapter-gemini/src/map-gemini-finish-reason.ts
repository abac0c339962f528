import type { StopReason } from '@agentx/core'

/** Gemini finish reasons that mean a safety or policy filter stopped the response. */
const CONTENT_FILTER_REASONS: ReadonlySet<string> = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
])

/** Finish reasons that mean the model produced an unusable tool call. */
const ERROR_REASONS: ReadonlySet<string> = new Set([
  'MALFORMED_FUNCTION_CALL',
  'UNEXPECTED_TOOL_CALL',
  'TOO_MANY_TOOL_CALLS',
  'MALFORMED_RESPONSE',
])

/**
 * Maps a Gemini `finishReason` onto core's {@link StopReason}: `STOP` → `end_turn` (or `tool_use`
 * when the response called tools), `MAX_TOKENS` → `max_tokens`, `SAFETY`, `RECITATION`,
 * `BLOCKLIST`, `PROHIBITED_CONTENT`, `SPII` and the image filters → `content_filter`, malformed or
 * unexpected tool calls → `error`, anything else → `other` (rule A-FIN-01).
 */
export function mapGeminiFinishReason(finishReason: string, hasToolCalls: boolean): StopReason {
  if (finishReason === 'STOP') return hasToolCalls ? 'tool_use' : 'end_turn'
  if (finishReason === 'MAX_TOKENS') return 'max_tokens'
  if (CONTENT_FILTER_REASONS.has(finishReason)) return 'content_filter'
  if (ERROR_REASONS.has(finishReason)) return 'error'
  return 'other'
}
