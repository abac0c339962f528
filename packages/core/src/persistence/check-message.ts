import type { AnyMessage } from '../contracts/messages.js'
import { contentProblem, isRecord, isUtcTimestamp, STOP_REASONS, usageProblem } from './shapes.js'
import { validateMessage } from './validate.js'

/** Deeper than this, a value is left to the copying path of `validateMessage` (cycle-safe). */
const MAX_FAST_DEPTH = 64

const MESSAGE_TYPES: ReadonlySet<unknown> = new Set(['user', 'agent', 'tool', 'system'])

/**
 * Checks a message before a persister's `saveMessage` serialises it, with the rules of
 * {@link validateMessage}, and returns the message to store: the fast path of persisters that
 * serialise a message before `saveMessage` returns (SQLite, PostgreSQL).
 *
 * A message that is plainly valid (the usual case: plain objects, arrays, strings, finite numbers,
 * booleans and `null`, every rule of `validateMessage` met) is returned as it is: the persister
 * serialises it before `saveMessage` returns, so no defensive deep copy is needed, and the copy
 * was about a fifth of the cost of saving a ~1 KB message. Anything else (a `Date`, a class
 * instance, a function, `undefined` in an array, a non-finite number, a very deep or cyclic
 * value, any broken rule) goes through `validateMessage` itself, which converts it or rejects it
 * with its `ValidationError`. So this check can only be stricter than `validateMessage`, never
 * looser. A persister that keeps the object itself (like `InMemoryPersister`) needs the copy of
 * `validateMessage` instead.
 */
export function checkMessage(sessionId: string, message: AnyMessage): AnyMessage {
  return isPlainlyValid(sessionId, message) ? message : validateMessage(sessionId, message)
}

function isPlainlyValid(sessionId: unknown, message: unknown): boolean {
  if (typeof sessionId !== 'string' || sessionId.length === 0) return false
  if (typeof message !== 'object' || message === null || !hasPlainPrototype(message)) return false
  const { id, seq, type, content, timestamp } = message as Partial<AnyMessage>
  if (typeof id !== 'string' || id.length === 0) return false
  if (!Number.isSafeInteger(seq) || (seq as number) < 0 || !MESSAGE_TYPES.has(type)) return false
  if (!isUtcTimestamp(timestamp) || contentProblem(content, 'content') !== undefined) return false
  const { agentName, compaction, usage, stopReason, incomplete, metadata } = message as Partial<AnyMessage>
  if (agentName !== undefined && typeof agentName !== 'string') return false
  if (usage !== undefined && usageProblem(usage, 'usage') !== undefined) return false
  if (stopReason !== undefined && !STOP_REASONS.has(stopReason)) return false
  if (incomplete !== undefined && typeof incomplete !== 'boolean') return false
  if (metadata !== undefined && !isRecord(metadata)) return false
  if (compaction !== undefined) {
    if (typeof compaction !== 'object' || compaction === null) return false
    const throughSeq = (compaction as { throughSeq?: unknown }).throughSeq
    if (!Number.isSafeInteger(throughSeq) || (throughSeq as number) < 0) return false
  }
  for (const key in message) {
    if (!Object.hasOwn(message, key)) return false
    const value = (message as Record<string, unknown>)[key]
    if (key === 'sessionId') {
      if (value !== undefined && value !== sessionId) return false
    } else if (value !== undefined && !isPlainJson(value, 0)) return false
  }
  return true
}

/** Whether `value` is a tree of plain JSON values that `JSON.stringify` writes unchanged. */
function isPlainJson(value: unknown, depth: number): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true
  if (typeof value === 'number') return Number.isFinite(value)
  if (typeof value !== 'object' || depth >= MAX_FAST_DEPTH) return false
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      if (!isPlainJson(value[index], depth + 1)) return false
    }
    return true
  }
  if (!hasPlainPrototype(value)) return false
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return false
    const item = (value as Record<string, unknown>)[key]
    if (item !== undefined && !isPlainJson(item, depth + 1)) return false
  }
  return true
}

function hasPlainPrototype(value: object): boolean {
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}
