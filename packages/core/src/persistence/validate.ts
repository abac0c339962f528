import type { SessionData } from '../contracts/agent-persister.js'
import type { AnyMessage } from '../contracts/messages.js'
import { ValidationError } from '../errors/validation-error.js'
import { SESSION_TRANSITIONS } from '../session/session-state.js'
import { cloneJson } from './json-copy.js'

const MESSAGE_TYPES = new Set(['user', 'agent', 'tool', 'system'])

function requireId(value: unknown, what: string): void {
  if (typeof value !== 'string' || value.length === 0) {
    throw new ValidationError(`${what} must be a non-empty string.`)
  }
}

function requireTimestamp(value: unknown, what: string): void {
  if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) {
    throw new ValidationError(`${what} must be an ISO-8601 timestamp string.`)
  }
}

/**
 * Checks a {@link SessionData} before a persister writes it and returns a JSON copy of it.
 * Throws {@link ValidationError} (code `VALIDATION`) for a missing id, a bad timestamp or state,
 * or metadata that JSON cannot hold. Persisters call it so they all reject the same inputs.
 */
export function validateSessionData(session: SessionData): SessionData {
  if (typeof session !== 'object' || session === null) throw new ValidationError('session must be an object.')
  requireId(session.id, 'session.id')
  requireTimestamp(session.createdAt, 'session.createdAt')
  requireTimestamp(session.lastActivity, 'session.lastActivity')
  if (typeof session.summary !== 'string') throw new ValidationError('session.summary must be a string.')
  if (!(session.state in SESSION_TRANSITIONS))
    throw new ValidationError(`session.state '${String(session.state)}' is unknown.`)
  if (typeof session.tokenUsage !== 'object' || session.tokenUsage === null) {
    throw new ValidationError('session.tokenUsage must be a TokenUsage object.')
  }
  return cloneJson(session, 'session')
}

/**
 * Checks an {@link AnyMessage} before a persister writes it into session `sessionId` and returns a
 * JSON copy of it. Throws {@link ValidationError} for a missing id or session id, a `sessionId` that
 * differs from the message's own, a bad seq, type or timestamp, or content that JSON cannot hold.
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
  if (!Number.isSafeInteger(message.seq) || message.seq < 0) {
    throw new ValidationError('message.seq must be a non-negative integer.')
  }
  if (!MESSAGE_TYPES.has(message.type))
    throw new ValidationError(`message.type '${String(message.type)}' is unknown.`)
  if (typeof message.content !== 'string' && !Array.isArray(message.content)) {
    throw new ValidationError('message.content must be a string or an array of content blocks.')
  }
  requireTimestamp(message.timestamp, 'message.timestamp')
  return cloneJson({ ...message, sessionId }, 'message')
}

/** Checks an optional `limit`/`offset`: a non-negative integer or absent. */
export function validatePaging(value: number | undefined, what: string): void {
  if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
    throw new ValidationError(`${what} must be a non-negative integer, got ${String(value)}.`)
  }
}
