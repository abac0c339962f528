import { isDeepStrictEqual } from 'node:util'
import { isAgentError } from '@agentx/core'
import { ContractViolation } from './rule.js'

/**
 * Assertions for rule bodies that need no test runner: every failure is a
 * {@link ContractViolation} carrying the rule id, expected vs actual, and the rule's hint.
 *
 * Rules get one from {@link defineRule}; plugin authors writing their own rules can make one with
 * `new RuleCheck(id, hint)`.
 */
export class RuleCheck {
  readonly ruleId: string
  readonly hint: string | undefined

  constructor(ruleId: string, hint?: string) {
    this.ruleId = ruleId
    this.hint = hint
  }

  /** Throws a violation with `message` and optional expected/actual details. */
  fail(message: string, details: { expected?: unknown; actual?: unknown; cause?: unknown } = {}): never {
    throw new ContractViolation(this.ruleId, message, {
      ...details,
      ...(this.hint === undefined ? {} : { hint: this.hint }),
    })
  }

  /** Fails unless `condition` holds. */
  ok(condition: unknown, message: string, details: { expected?: unknown; actual?: unknown } = {}): void {
    if (!condition) this.fail(message, details)
  }

  /** Fails unless `actual` and `expected` are deep-strict-equal (prototypes, `-0`, absent vs undefined). */
  deepEqual(actual: unknown, expected: unknown, message: string): void {
    if (!isDeepStrictEqual(actual, expected)) this.fail(message, { expected, actual })
  }

  /** Fails unless `Object.is(actual, expected)`. */
  equal(actual: unknown, expected: unknown, message: string): void {
    if (!Object.is(actual, expected)) this.fail(message, { expected, actual })
  }

  /**
   * Awaits `action`; a rejection becomes a violation that says which call failed (with the error
   * as `cause`), so an unexpected error still points at the rule.
   */
  async resolves<T>(action: () => Promise<T>, what: string): Promise<T> {
    try {
      return await action()
    } catch (error) {
      return this.fail(`${what} rejected unexpectedly: ${describeError(error)}`, { cause: error })
    }
  }

  /**
   * Expects `action` to reject with an AgentError (by `isAgentError`) whose `code` is one of `codes`;
   * resolves to that error. A synchronous throw counts as a rejection here (P-LIF-001 checks that
   * separately).
   */
  async rejectsWithCode(
    action: () => Promise<unknown>,
    codes: string | readonly string[],
    what: string,
  ): Promise<Error> {
    const wanted = typeof codes === 'string' ? [codes] : codes
    let outcome: { resolved: unknown } | { error: unknown }
    try {
      outcome = { resolved: await action() }
    } catch (error) {
      outcome = { error }
    }
    if ('resolved' in outcome) {
      return this.fail(`${what} resolved; it must reject with code ${wanted.join(' or ')}`, {
        expected: `rejection with code ${wanted.join(' | ')}`,
        actual: outcome.resolved === undefined ? 'resolved (undefined)' : outcome.resolved,
      })
    }
    const error = outcome.error
    if (!isAgentError(error)) {
      return this.fail(`${what} rejected with something that is not an AgentError`, {
        expected: `AgentError with code ${wanted.join(' | ')} (isAgentError(e) === true)`,
        actual: describeError(error),
        cause: error,
      })
    }
    if (!wanted.includes(error.code)) {
      return this.fail(`${what} rejected with the wrong code`, {
        expected: wanted.join(' | '),
        actual: `${error.code} (${error.message})`,
        cause: error,
      })
    }
    return error
  }
}

/** `Name: message` for any thrown value. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code
    return `${error.name}${typeof code === 'string' ? ` [${code}]` : ''}: ${error.message}`
  }
  return String(error)
}
