import type { AgentAdapter } from '../contracts/agent-adapter.js'
import type { AgentError } from '../errors/agent-error.js'
import { describe, isPlainObject, rejectUnknownKeys } from './validate-input.js'

/**
 * When and how a session compacts its conversation (DESIGN §10.4): `AgentConfig.compaction` or
 * `createSession({ compaction })`.
 *
 * Before a model request whose input would pass `thresholdTokens`, the kernel asks a model to
 * summarise everything older than the last `keepRecentMessages` messages (and the previous
 * summary), persists the summary as a `system` message with `compaction: { throughSeq }`, and
 * from then on sends the model the system prompt, that summary and only the messages after
 * `throughSeq`. Nothing is deleted.
 */
export interface CompactionOptions {
  /**
   * Compact before a model request whose input would pass this many tokens: the last response's
   * `usage.inputTokens` plus an estimate ({@link estimateTokens}) of what came after it, or an
   * estimate of the whole request when no response since the last compaction reported usage.
   * Pick it well below the model's context window: the estimate can be off by ±50 %.
   */
  thresholdTokens: number
  /**
   * How many of the latest messages stay verbatim (the request's prompt counts as one). The
   * kept tail grows when it would start with tool results (a tool call is never separated from
   * its result) or with a reply whose user message would be summarised (a question stays with
   * its answer). Default is `8`.
   */
  keepRecentMessages?: number
  /** The adapter that writes the summary (a cheaper model). Default is the session's adapter. */
  adapter?: AgentAdapter
  /**
   * The model of the summary request. Default is `adapter`'s own default model (its
   * `defaultModel`) when `adapter` is given and names one, otherwise the request's model.
   */
  model?: string
  /** The summariser's instructions (its system prompt). Default is {@link DEFAULT_COMPACTION_INSTRUCTIONS}. */
  instructions?: string
}

/** Options of `session.compact()`. */
export interface CompactOptions {
  /** How many of the latest messages stay verbatim. Default is the session's `compaction.keepRecentMessages`, or `8`. */
  keepRecentMessages?: number
  /** Aborts the summary request, like `session.abort()`. */
  signal?: AbortSignal
}

/** Default of {@link CompactionOptions.keepRecentMessages}. */
export const DEFAULT_KEEP_RECENT_MESSAGES: number = 8

/** Default of {@link CompactionOptions.instructions}. */
export const DEFAULT_COMPACTION_INSTRUCTIONS: string = [
  'You compress a conversation between a user and an AI assistant so that the assistant can continue',
  'it without the original messages. Write a summary that keeps: what the user wants and asked for,',
  'decisions and agreements, facts, names, numbers, file paths and identifiers that came up, what',
  'tools returned that still matters, what was tried and failed, and open tasks and questions. If an',
  'earlier summary is given, merge it into the new one; drop nothing from it that still matters.',
  'Be concise and factual, write in the language of the conversation, and output only the summary.',
].join(' ')

/**
 * Checks `compaction` options (`AgentConfig.compaction`, `createSession({ compaction })`); throws
 * what `error` makes, naming the bad field.
 */
export function validateCompactionOptions(
  value: unknown,
  name: string,
  error: (message: string) => AgentError,
): asserts value is CompactionOptions {
  if (!isPlainObject(value)) {
    throw error(`${name} must be an object such as { thresholdTokens: 100000 }, got ${describe(value)}.`)
  }
  rejectUnknownKeys(
    value,
    ['thresholdTokens', 'keepRecentMessages', 'adapter', 'model', 'instructions'],
    `${name} option`,
    error,
  )
  if (value.thresholdTokens === undefined) throw error(`${name}.thresholdTokens is required.`)
  integer(value.thresholdTokens, `${name}.thresholdTokens`, 1, error)
  integer(value.keepRecentMessages, `${name}.keepRecentMessages`, 0, error)
  const adapter = value.adapter as Record<string, unknown> | undefined
  if (
    adapter !== undefined &&
    (typeof adapter !== 'object' ||
      adapter === null ||
      typeof adapter.getName !== 'function' ||
      typeof adapter.stream !== 'function')
  ) {
    throw error(`${name}.adapter must be an adapter (with getName and stream).`)
  }
  if (value.model !== undefined && (typeof value.model !== 'string' || value.model === '')) {
    throw error(`${name}.model must be a non-empty string, got ${describe(value.model)}.`)
  }
  if (
    value.instructions !== undefined &&
    (typeof value.instructions !== 'string' || value.instructions === '')
  ) {
    throw error(`${name}.instructions must be a non-empty string, got ${describe(value.instructions)}.`)
  }
}

/** Checks the options of `session.compact()`; throws what `error` makes. */
export function validateCompactOptions(
  value: unknown,
  error: (message: string) => AgentError,
): CompactOptions {
  if (value === undefined) return {}
  if (!isPlainObject(value)) throw error(`compact options must be an object, got ${describe(value)}.`)
  rejectUnknownKeys(value, ['keepRecentMessages', 'signal'], 'compact option', error)
  integer(value.keepRecentMessages, 'keepRecentMessages', 0, error)
  if (value.signal !== undefined && !(value.signal instanceof AbortSignal)) {
    throw error('signal must be an AbortSignal.')
  }
  return value as CompactOptions
}

function integer(value: unknown, name: string, min: number, error: (message: string) => AgentError): void {
  if (value !== undefined && (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)) {
    throw error(`${name} must be an integer >= ${min}, got ${describe(value)}.`)
  }
}
