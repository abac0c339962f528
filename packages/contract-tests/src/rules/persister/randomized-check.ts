import fc from 'fast-check'
import type { RuleCheck } from '../../engine/rule-check.js'
import { ContractViolation, preview } from '../../engine/rule.js'

/** The environment variable that sets the seed of the randomized rules (a number, or `random`). */
export const CONTRACT_SEED_ENV = 'AGENTX_CONTRACT_SEED'

/** The seed used when {@link CONTRACT_SEED_ENV} is not set: runs are reproducible by default. */
export const DEFAULT_CONTRACT_SEED = 20_260_101

/** The seed of this run: {@link CONTRACT_SEED_ENV} when set (`random` picks one), else the fixed default. */
export function contractSeed(env: Record<string, string | undefined> = process.env): number {
  const value = env[CONTRACT_SEED_ENV]
  if (value === undefined || value === '') return DEFAULT_CONTRACT_SEED
  if (value === 'random') return Math.floor(Math.random() * 2 ** 31)
  const seed = Number(value)
  return Number.isSafeInteger(seed) ? seed : DEFAULT_CONTRACT_SEED
}

/**
 * Runs a fast-check property (random operation sequences against the reference persister) with
 * the run's seed. A failure becomes a violation of the rule that names the seed, the shrunk
 * counterexample and the first difference, and how to replay it.
 */
export async function checkRandomized<T>(
  check: RuleCheck,
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<void>,
  options: { numRuns: number; timeLimitMs?: number },
): Promise<void> {
  const seed = contractSeed()
  const details = await fc.check(fc.asyncProperty(arbitrary, predicate), {
    seed,
    numRuns: options.numRuns,
    // Shrinking re-runs the sequence on new stores: bounded, so a slow store still reports.
    interruptAfterTimeLimit: options.timeLimitMs ?? 45_000,
    markInterruptAsFailure: false,
  })
  if (!details.failed) return
  const cause = details.errorInstance
  const violation = cause instanceof ContractViolation ? cause : undefined
  check.fail(
    `a randomized sequence failed (seed ${seed}; replay with ${CONTRACT_SEED_ENV}=${seed}): ${
      violation ? violation.message.split('\n')[0] : String(cause)
    }\n  operations: ${preview(details.counterexample?.[0], 1500)}`,
    {
      ...(violation ? { expected: violation.expected, actual: violation.actual } : {}),
      cause,
    },
  )
}
