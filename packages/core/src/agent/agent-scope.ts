import type { SessionScope } from '../contracts/agent-persister.js'
import { ValidationError } from '../errors/validation-error.js'
import { describe, isPlainObject, rejectUnknownKeys } from '../session/validate-input.js'

const SCOPE_KEYS = ['userId', 'appName'] as const satisfies ReadonlyArray<keyof SessionScope>

const invalid = (message: string) => new ValidationError(message)

/**
 * The scope of `agent.withScope(requested)` on an agent limited to `current`. A view only narrows:
 * it may fix a dimension the agent leaves open, or repeat the agent's own value, but never change
 * one — a view can see nothing its agent cannot. Throws {@link ValidationError} for unknown keys,
 * a value that is not a non-empty string, or a value that differs from the agent's.
 */
export function narrowScope(current: SessionScope, requested: unknown): SessionScope {
  if (!isPlainObject(requested)) {
    throw invalid(`withScope needs an object such as { userId: 'u-42' }, got ${describe(requested)}.`)
  }
  rejectUnknownKeys(requested, SCOPE_KEYS, 'scope key', invalid)
  const scope: SessionScope = { ...current }
  for (const key of SCOPE_KEYS) {
    const value = requested[key]
    if (value === undefined) continue
    if (typeof value !== 'string' || value === '') {
      throw invalid(`withScope ${key} must be a non-empty string, got ${describe(value)}.`)
    }
    const fixed = current[key]
    if (fixed !== undefined && fixed !== value) {
      throw invalid(
        `This agent only sees sessions of ${key} ${describe(fixed)}; withScope can narrow its scope, not change it to ${describe(value)}.`,
      )
    }
    scope[key] = value
  }
  return scope
}

/** Whether a session belongs to `scope` (a dimension the scope leaves open matches anything). */
export function isInScope(
  scope: SessionScope,
  session: { readonly userId?: string | undefined; readonly appName?: string | undefined },
): boolean {
  return (
    (scope.userId === undefined || session.userId === scope.userId) &&
    (scope.appName === undefined || session.appName === scope.appName)
  )
}

/** The scope as query fields, with no `undefined` keys (for `exactOptionalPropertyTypes` and stores). */
export function scopeFields(scope: {
  readonly userId?: string | undefined
  readonly appName?: string | undefined
}): SessionScope {
  return {
    ...(scope.userId === undefined ? {} : { userId: scope.userId }),
    ...(scope.appName === undefined ? {} : { appName: scope.appName }),
  }
}
