/**
 * The shapes of stored fields, shared by the persisters' input checks (`validateMessage`,
 * `checkMessage`, `validateSessionData`) and by the kernel where it takes in what an adapter or a
 * tool produced, so the kernel never hands a persister a value the persister must refuse.
 *
 * Each check returns the first problem as text (`undefined` when there is none), so the caller
 * chooses the error: a `ValidationError` for input, an `AdapterError` for an adapter's output.
 */
import type { StopReason } from '../contracts/messages.js'

export const STOP_REASONS: ReadonlySet<unknown> = new Set<StopReason>([
  'end_turn',
  'max_tokens',
  'tool_use',
  'content_filter',
  'aborted',
  'error',
  'other',
])

/** Nesting of `tool_result` content checked before a value counts as malformed (JSON has no cycles). */
const MAX_RESULT_DEPTH = 32

const REQUIRED_COUNTS = ['inputTokens', 'outputTokens', 'totalTokens'] as const
const OPTIONAL_COUNTS = ['cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens'] as const

/**
 * `YYYY-MM-DDTHH:mm:ss`, an optional fraction, and `Z`: UTC as `Date#toISOString()` writes it
 * (years 0000–9999, or ±YYYYYY beyond). An offset such as `+02:00` is refused: stores order and
 * prune timestamps as text, which is only the order of time when every timestamp is in UTC.
 */
const UTC_TIMESTAMP = /^(\d{4}|[+-]\d{6})-(\d\d)-(\d\d)T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?Z$/

/** Whether `value` is an ISO-8601 UTC timestamp of a real calendar day (no `2026-02-30`). */
export function isUtcTimestamp(value: unknown): boolean {
  if (typeof value !== 'string') return false
  const match = UTC_TIMESTAMP.exec(value)
  if (match === null) return false
  const year = Number(match[1])
  const month = Number(match[2])
  const day = Number(match[3])
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false
  // Six-digit years can leave the range of a Date (±275760): the timestamp must still be an instant.
  return (match[1] as string).length === 4 || !Number.isNaN(Date.parse(value))
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

/** The message of a timestamp that {@link isUtcTimestamp} refused. */
export function timestampProblem(what: string): string {
  return `${what} must be an ISO-8601 UTC timestamp as Date#toISOString() writes it ('2026-01-31T12:00:00.000Z').`
}

/** Whether `value` is an object with plain data (not `null`, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A token count: a finite number, not negative. */
export const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0

/**
 * The problem with a {@link TokenUsage}, if any: an object whose `inputTokens`, `outputTokens` and
 * `totalTokens` (and the optional parts, when present) are finite non-negative numbers.
 */
export function usageProblem(value: unknown, what: string): string | undefined {
  if (!isRecord(value))
    return `${what} must be a TokenUsage object { inputTokens, outputTokens, totalTokens }.`
  for (const key of REQUIRED_COUNTS) {
    if (!isCount(value[key])) return `${what}.${key} must be a non-negative number.`
  }
  for (const key of OPTIONAL_COUNTS) {
    if (value[key] !== undefined && !isCount(value[key]))
      return `${what}.${key} must be a non-negative number.`
  }
  return undefined
}

/**
 * The problem with message content, if any: a string, or an array of content blocks, each an
 * object with a string `type`. The five block types of `ContentBlock` must have their fields
 * (`text` of a text or thinking block, `mediaType` of an image, `id` and `name` of a tool call,
 * `toolUseId` and content of a tool result) with the right types; a block of another type is kept
 * as it is (a newer adapter's block round-trips). `providerMetadata` is an object when present.
 */
export function contentProblem(content: unknown, what: string, depth = 0): string | undefined {
  if (typeof content === 'string') return undefined
  if (!Array.isArray(content)) return `${what} must be a string or an array of content blocks.`
  for (let index = 0; index < content.length; index++) {
    const problem = blockProblem(content[index], depth)
    if (problem !== undefined) return `${what}[${index}]${problem}`
  }
  return undefined
}

/** The problem with one block, as a suffix of its path (`.text must be a string.`). */
function blockProblem(block: unknown, depth: number): string | undefined {
  if (!isRecord(block)) return ' must be a content block object { type, … }.'
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? metadataProblem(block) : '.text must be a string.'
    case 'thinking':
      if (typeof block.text !== 'string') return '.text must be a string.'
      if (block.signature !== undefined && typeof block.signature !== 'string')
        return '.signature must be a string.'
      return metadataProblem(block)
    case 'image':
      if (typeof block.mediaType !== 'string') return '.mediaType must be a string.'
      if (block.data !== undefined && typeof block.data !== 'string') return '.data must be a base64 string.'
      if (block.url !== undefined && typeof block.url !== 'string') return '.url must be a string.'
      return metadataProblem(block)
    case 'tool_use':
      if (typeof block.id !== 'string') return '.id must be a string.'
      if (typeof block.name !== 'string') return '.name must be a string.'
      return metadataProblem(block)
    case 'tool_result': {
      if (typeof block.toolUseId !== 'string') return '.toolUseId must be a string.'
      if (block.isError !== undefined && typeof block.isError !== 'boolean')
        return '.isError must be a boolean.'
      if (depth >= MAX_RESULT_DEPTH) return '.content nests tool results too deeply.'
      const inner = contentProblem(block.content, '.content', depth + 1)
      return inner ?? metadataProblem(block)
    }
    default:
      return typeof block.type === 'string' && block.type.length > 0
        ? metadataProblem(block)
        : '.type must be a non-empty string.'
  }
}

function metadataProblem(block: Record<string, unknown>): string | undefined {
  const metadata = block.providerMetadata
  return metadata === undefined || isRecord(metadata)
    ? undefined
    : '.providerMetadata must be an object keyed by provider name.'
}
