import type { RuleResult } from './contract-report.js'
import type { PlannedRule } from './plan-contract.js'
import type { ContractRule } from './rule.js'

/** A fresh context for one rule, and how to clean it up afterwards. */
export interface RuleContextHandle<Context> {
  readonly context: Context
  /** Releases everything the context created (called after the rule, pass or fail). */
  dispose(): Promise<void>
}

/** Makes a fresh, isolated context for one rule. */
export type RuleContextFactory<Context, Capability extends string = string> = (
  rule: ContractRule<Context, Capability>,
) => Promise<RuleContextHandle<Context>>

/** Default time one rule may take, context set-up and clean-up included. */
export const DEFAULT_RULE_TIMEOUT_MS = 15_000

/** A {@link RuleResult} plus the error a failed rule threw (not part of the JSON report). */
export interface ExecutedRule extends RuleResult {
  /** What a runner should throw: the rule's own error, or an error explaining the status. */
  readonly error?: Error
}

/**
 * Runs one planned rule in a fresh context and interprets the outcome: a normal rule passes when
 * its check resolves; an expected failure passes when its check throws, and fails with
 * "expected failure now passes: remove it" when it resolves. A skipped rule does not run.
 *
 * Used by both bindings and by {@link runContract}, so every runner decides the same way.
 */
export async function executeRule<Context, Capability extends string>(
  planned: PlannedRule<Context, Capability>,
  createContext: RuleContextFactory<Context, Capability>,
  defaultTimeoutMs: number = DEFAULT_RULE_TIMEOUT_MS,
): Promise<ExecutedRule> {
  const { rule, plan } = planned
  const base = { id: rule.id, level: rule.level, title: rule.title, group: rule.group }
  if (plan.kind === 'skip') return { ...base, status: 'skipped', reason: plan.reason }
  const started = performance.now()
  const thrown = await runChecked(rule, createContext, rule.timeoutMs ?? defaultTimeoutMs)
  const durationMs = Math.round(performance.now() - started)
  if (plan.kind === 'expect-failure') {
    if (thrown === undefined) {
      const reason = `expected failure now passes: remove ${rule.id} from expectedFailures`
      return { ...base, status: 'failed', reason, durationMs, error: new Error(`${rule.id}: ${reason}`) }
    }
    return { ...base, status: 'expected-failure', reason: thrown.message, durationMs }
  }
  if (thrown === undefined) return { ...base, status: 'passed', durationMs }
  return { ...base, status: 'failed', reason: thrown.message, durationMs, error: thrown }
}

/** Runs the rule's check with its own context and a deadline; resolves to the error, if any. */
async function runChecked<Context, Capability extends string>(
  rule: ContractRule<Context, Capability>,
  createContext: RuleContextFactory<Context, Capability>,
  timeoutMs: number,
): Promise<Error | undefined> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${rule.id}: timed out after ${timeoutMs} ms (a call never settled?)`)),
      timeoutMs,
    )
  })
  const attempt = async (): Promise<void> => {
    const handle = await createContext(rule)
    let failure: unknown
    try {
      await rule.run(handle.context)
    } catch (error) {
      failure = error
    }
    try {
      await handle.dispose()
    } catch (error) {
      failure ??= new Error(`${rule.id}: cleaning up the context failed: ${describe(error)}`, {
        cause: error,
      })
    }
    if (failure !== undefined) throw failure
  }
  try {
    await Promise.race([attempt(), deadline])
    return undefined
  } catch (error) {
    return toError(rule.id, error)
  } finally {
    clearTimeout(timer)
  }
}

function toError(ruleId: string, error: unknown): Error {
  if (error instanceof Error) {
    if (!error.message.includes(ruleId)) {
      return new Error(`${ruleId}: ${error.name}: ${error.message}`, { cause: error })
    }
    return error
  }
  return new Error(`${ruleId}: threw a non-error value: ${describe(error)}`, { cause: error })
}

function describe(value: unknown): string {
  return value instanceof Error ? `${value.name}: ${value.message}` : String(value)
}
