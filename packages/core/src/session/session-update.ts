import type { SessionData } from '../contracts/agent-persister.js'
import { ValidationError } from '../errors/validation-error.js'
import { cloneJson } from '../persistence/json-copy.js'
import { describe, isPlainObject, rejectUnknownKeys } from './validate-input.js'

/** What `session.update()` changes. Fields left out stay as they are. */
export interface SessionUpdate {
  /** The session's title, e.g. shown in a list of conversations. */
  summary?: string
  /** Replaces the whole metadata object (spread the old one in to change one key). */
  metadata?: Record<string, unknown>
  /** The system prompt of the session's next sends. */
  systemPrompt?: string
  /** The model of the session's next sends (a non-empty string). */
  model?: string
}

const UPDATE_KEYS = ['summary', 'metadata', 'systemPrompt', 'model'] as const satisfies ReadonlyArray<
  keyof SessionUpdate
>

const invalid = (message: string) => new ValidationError(message)

/**
 * Checks the argument of `session.update()` and returns a copy the session owns: an object with
 * known keys only, `summary` and `systemPrompt` strings, `model` a non-empty string, `metadata` a
 * plain object that JSON can hold. Throws {@link ValidationError}; nothing is written when it does.
 */
export function validateSessionUpdate(update: unknown): SessionUpdate {
  if (!isPlainObject(update)) {
    throw invalid(`update needs an object such as { summary: 'Trip to Rome' }, got ${describe(update)}.`)
  }
  rejectUnknownKeys(update, UPDATE_KEYS, 'update field', invalid)
  const checked: SessionUpdate = {}
  const { summary, metadata, systemPrompt, model } = update
  if (summary !== undefined) {
    if (typeof summary !== 'string') throw invalid(`summary must be a string, got ${describe(summary)}.`)
    checked.summary = summary
  }
  if (systemPrompt !== undefined) {
    if (typeof systemPrompt !== 'string') {
      throw invalid(`systemPrompt must be a string, got ${describe(systemPrompt)}.`)
    }
    checked.systemPrompt = systemPrompt
  }
  if (model !== undefined) {
    if (typeof model !== 'string' || model === '') {
      throw invalid(`model must be a non-empty string, got ${describe(model)}.`)
    }
    checked.model = model
  }
  if (metadata !== undefined) {
    if (!isPlainObject(metadata)) throw invalid(`metadata must be an object, got ${describe(metadata)}.`)
    checked.metadata = cloneJson(metadata, 'metadata')
  }
  return checked
}

/** Whether the update changes what the running send uses (model, system prompt). */
export function changesSendSettings(update: SessionUpdate): boolean {
  return update.model !== undefined || update.systemPrompt !== undefined
}

/**
 * Takes back what {@link applySessionUpdate} wrote, where nothing changed it since: for an update
 * the store refused for good (a write that is dropped, never retried).
 */
export function revertSessionUpdate(data: SessionData, update: SessionUpdate, before: SessionData): void {
  const fields = data as unknown as Record<string, unknown>
  const previous = before as unknown as Record<string, unknown>
  for (const key of UPDATE_KEYS) {
    if (update[key] === undefined || fields[key] !== update[key]) continue
    if (previous[key] === undefined) delete fields[key]
    else fields[key] = previous[key]
  }
}

/** Writes a checked update into the session's data; returns whether anything was given. */
export function applySessionUpdate(data: SessionData, update: SessionUpdate): boolean {
  let changed = false
  for (const key of UPDATE_KEYS) {
    const value = update[key]
    if (value === undefined) continue
    ;(data as unknown as Record<string, unknown>)[key] = value
    changed = true
  }
  return changed
}
