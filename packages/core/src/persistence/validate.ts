import type {
  DeleteSessionsQuery,
  GetMessagesQuery,
  ListSessionsQuery,
  SessionData,
} from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import { ValidationError } from '../errors/validation-error.js'
import { SESSION_TRANSITIONS, type SessionState } from '../session/session-state.js'
import { cloneJson } from './json-copy.js'
import {
  contentProblem,
  isRecord,
  isUtcTimestamp,
  STOP_REASONS,
  timestampProblem,
  usageProblem,
} from './shapes.js'

const MESSAGE_TYPES = new Set(['user', 'agent', 'tool', 'system'])

/** The optional text fields of a session, with the name an error gives them. */
const OPTIONAL_TEXT_FIELDS = (
  ['cwd', 'model', 'systemPrompt', 'providerSessionId', 'userId', 'appName'] as const
).map((key) => [key, `session.${key}`] as const)

function requireId(value: unknown, what: string): void {
  if (typeof value !== 'string' || value.length === 0) {
    throw new ValidationError(`${what} must be a non-empty string.`)
  }
}

function optionalString(value: unknown, what: string): void {
  if (value !== undefined && typeof value !== 'string') throw new ValidationError(`${what} must be a string.`)
}

/**
 * Checks a key argument (a session id given to a read or delete) the way the SQL persisters do:
 * anything but a string is a {@link ValidationError}; an unknown id is not an error.
 */
export function validateKey(value: unknown, what: string): void {
  if (typeof value !== 'string') throw new ValidationError(`${what} must be a string.`)
}

function requireSeq(value: unknown, what: string): void {
  if (!Number.isSafeInteger(value) || (value as number) < 0) {
    throw new ValidationError(`${what} must be a non-negative integer.`)
  }
}

/** A stored timestamp: ISO-8601 in UTC (`Z`), so that text order is the order of time. */
function requireTimestamp(value: unknown, what: string): void {
  if (!isUtcTimestamp(value)) throw new ValidationError(timestampProblem(what))
}

/** An instant given to a query: any ISO-8601 form `Date.parse` reads (it is normalised to UTC). */
function requireInstant(value: unknown, what: string): void {
  if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) {
    throw new ValidationError(`${what} must be an ISO-8601 timestamp string.`)
  }
}

function check(problem: string | undefined): void {
  if (problem !== undefined) throw new ValidationError(problem)
}

/** An optional object field: absent, or a plain object (never `null`, an array or a scalar). */
function optionalRecord(value: unknown, what: string): void {
  if (value !== undefined && !isRecord(value)) throw new ValidationError(`${what} must be an object.`)
}

/**
 * Checks a {@link SessionData} before a persister writes it and returns a JSON copy of it.
 * Throws {@link ValidationError} (code `VALIDATION`) for a missing id, a timestamp that is not
 * ISO-8601 UTC, an unknown state, a malformed `tokenUsage`, `metadata` that is not an object (or
 * that JSON cannot hold), an optional field that is `null` or of the wrong type, or a session that
 * names itself (or `''`) as its parent. Persisters call it so they all reject the same inputs.
 */
export function validateSessionData(session: SessionData): SessionData {
  if (typeof session !== 'object' || session === null) throw new ValidationError('session must be an object.')
  requireId(session.id, 'session.id')
  requireTimestamp(session.createdAt, 'session.createdAt')
  requireTimestamp(session.lastActivity, 'session.lastActivity')
  if (typeof session.summary !== 'string') throw new ValidationError('session.summary must be a string.')
  if (!Object.hasOwn(SESSION_TRANSITIONS, session.state))
    throw new ValidationError(`session.state '${String(session.state)}' is unknown.`)
  check(usageProblem(session.tokenUsage, 'session.tokenUsage'))
  for (const [key, what] of OPTIONAL_TEXT_FIELDS) optionalString(session[key], what)
  optionalString(session.activeAgent, 'session.activeAgent')
  optionalRecord(session.metadata, 'session.metadata')
  if (session.parentSessionId !== undefined) {
    requireId(session.parentSessionId, 'session.parentSessionId')
    if (session.parentSessionId === session.id) {
      throw new ValidationError(`session.parentSessionId: session ${session.id} cannot be its own parent.`)
    }
  }
  optionalString(session.parentToolUseId, 'session.parentToolUseId')
  if (session.forkedFrom !== undefined) {
    const origin = session.forkedFrom
    if (typeof origin !== 'object' || origin === null) {
      throw new ValidationError('session.forkedFrom must be an object { sessionId, seq }.')
    }
    requireId(origin.sessionId, 'session.forkedFrom.sessionId')
    requireSeq(origin.seq, 'session.forkedFrom.seq')
  }
  return cloneJson(session, 'session')
}

/**
 * Checks an {@link AnyMessage} before a persister writes it into session `sessionId` and returns a
 * JSON copy of it. Throws {@link ValidationError} for a missing id or session id, a `sessionId` that
 * differs from the message's own, a bad seq, type or timestamp (ISO-8601 UTC), malformed content
 * blocks, a malformed `usage`, an unknown `stopReason`, a non-boolean `incomplete`, `metadata` that
 * is not an object, an optional field that is `null`, or anything JSON cannot hold.
 */
export function validateMessage(sessionId: string, message: AnyMessage): AnyMessage {
  requireId(sessionId, 'sessionId')
  if (typeof message !== 'object' || message === null) throw new ValidationError('message must be an object.')
  requireId(message.id, 'message.id')
  if (message.sessionId !== undefined && message.sessionId !== sessionId) {
    throw new ValidationError(
      `message.sessionId '${message.sessionId}' differs from the session it is saved in.`,
    )
  }
  requireSeq(message.seq, 'message.seq')
  if (!MESSAGE_TYPES.has(message.type))
    throw new ValidationError(`message.type '${String(message.type)}' is unknown.`)
  check(contentProblem(message.content, 'message.content'))
  requireTimestamp(message.timestamp, 'message.timestamp')
  if (message.usage !== undefined) check(usageProblem(message.usage, 'message.usage'))
  if (message.stopReason !== undefined && !STOP_REASONS.has(message.stopReason)) {
    throw new ValidationError(`message.stopReason '${String(message.stopReason)}' is unknown.`)
  }
  if (message.incomplete !== undefined && typeof message.incomplete !== 'boolean') {
    throw new ValidationError('message.incomplete must be a boolean.')
  }
  optionalRecord(message.metadata, 'message.metadata')
  optionalString(message.agentName, 'message.agentName')
  if (message.compaction !== undefined) {
    if (typeof message.compaction !== 'object' || message.compaction === null) {
      throw new ValidationError('message.compaction must be an object { throughSeq }.')
    }
    requireSeq(message.compaction.throughSeq, 'message.compaction.throughSeq')
  }
  return cloneJson({ ...message, sessionId }, 'message')
}

/** Checks an optional `limit`/`offset`: a non-negative integer or absent. */
export function validatePaging(value: number | undefined, what: string): void {
  if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
    throw new ValidationError(`${what} must be a non-negative integer, got ${String(value)}.`)
  }
}

/** Checks an optional seq bound (`afterSeq`, `beforeSeq`): a number (not `NaN`) or absent. */
function validateSeqBound(value: number | undefined, what: string): void {
  if (value !== undefined && (typeof value !== 'number' || Number.isNaN(value))) {
    throw new ValidationError(`${what} must be a number, got ${String(value)}.`)
  }
}

/**
 * Checks a {@link GetMessagesQuery}: `limit` a non-negative integer, `afterSeq` and `beforeSeq`
 * numbers (not `NaN`; `1.5` means between 1 and 2), each or absent. Throws {@link ValidationError} otherwise.
 */
export function validateMessagesQuery(query: GetMessagesQuery): void {
  if (typeof query !== 'object' || query === null) throw new ValidationError('query must be an object.')
  validatePaging(query.limit, 'limit')
  validateSeqBound(query.afterSeq, 'afterSeq')
  validateSeqBound(query.beforeSeq, 'beforeSeq')
}

/**
 * Checks a {@link ListSessionsQuery} and returns its `state` filter as a list (`undefined` for any
 * state). Throws {@link ValidationError} for a bad `limit`/`offset`, an unknown state, or a
 * `metadata` filter that is not `{ key: string, value: string | number | boolean }`.
 */
export function validateListQuery(query: ListSessionsQuery): readonly SessionState[] | undefined {
  if (typeof query !== 'object' || query === null) throw new ValidationError('query must be an object.')
  validatePaging(query.limit, 'limit')
  validatePaging(query.offset, 'offset')
  optionalString(query.userId, 'userId')
  optionalString(query.appName, 'appName')
  if (query.metadata !== undefined) {
    const filter = query.metadata
    if (typeof filter !== 'object' || filter === null || typeof filter.key !== 'string') {
      throw new ValidationError('metadata must be an object { key: string, value }.')
    }
    const type = typeof filter.value
    if (type !== 'string' && type !== 'boolean' && !(type === 'number' && Number.isFinite(filter.value))) {
      throw new ValidationError('metadata.value must be a string, a finite number or a boolean.')
    }
  }
  if (query.state === undefined) return undefined
  const states: readonly SessionState[] = typeof query.state === 'string' ? [query.state] : query.state
  return validateStates(states, 'state')
}

/**
 * Checks a {@link DeleteSessionsQuery} and returns it with `lastActivityBefore` in the canonical
 * form `toISOString()` gives (so `…:00Z` and `…:00.000Z` select the same sessions). Throws
 * {@link ValidationError} for a missing or unparseable instant or an unknown state.
 */
export function validateDeleteSessionsQuery(query: DeleteSessionsQuery): DeleteSessionsQuery {
  if (typeof query !== 'object' || query === null) throw new ValidationError('query must be an object.')
  requireInstant(query.lastActivityBefore, 'lastActivityBefore')
  optionalString(query.userId, 'userId')
  optionalString(query.appName, 'appName')
  const normalised: DeleteSessionsQuery = {
    ...query,
    lastActivityBefore: new Date(Date.parse(query.lastActivityBefore)).toISOString(),
  }
  if (query.states !== undefined) normalised.states = validateStates(query.states, 'states')
  return normalised
}

/** Checks the arguments of `claimSession`: ids non-empty strings, `ttlMs` a positive integer. */
export function validateClaimArguments(id: string, owner: string, ttlMs: number): void {
  requireId(id, 'id')
  requireId(owner, 'owner')
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) {
    throw new ValidationError(`ttlMs must be a positive integer, got ${String(ttlMs)}.`)
  }
}

/** Checks the arguments of `releaseSession`: ids non-empty strings. */
export function validateReleaseArguments(id: string, owner: string): void {
  requireId(id, 'id')
  requireId(owner, 'owner')
}

function validateStates(states: unknown, what: string): readonly SessionState[] {
  if (!Array.isArray(states)) throw new ValidationError(`${what} must be a state or an array of states.`)
  for (const state of states) {
    if (typeof state !== 'string' || !Object.hasOwn(SESSION_TRANSITIONS, state)) {
      throw new ValidationError(`${what} '${String(state)}' is not a session state.`)
    }
  }
  return states as readonly SessionState[]
}
