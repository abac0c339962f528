import type { Logger } from './logger.js'
import { thrownText } from './thrown-text.js'

/** A task run on an unref'd timer; `stop()` ends it and waits for a run in progress. */
export interface PeriodicTask {
  stop(): Promise<void>
}

/**
 * Runs `run` every `intervalMs` (and at once with `immediately`) on an unref'd timer, so it never
 * keeps a process alive. A run never overlaps the previous one; a failure is logged as a warning
 * (`failure` names the task) and the next tick tries again, so nothing becomes an unhandled
 * rejection.
 */
export function startPeriodicTask(
  run: () => Promise<void>,
  options: { intervalMs: number; immediately?: boolean; logger?: Logger; failure: string },
): PeriodicTask {
  let running: Promise<void> | undefined
  let stopped = false
  const tick = (): void => {
    if (stopped || running) return
    running = run()
      .catch((error: unknown) => {
        options.logger?.warn(options.failure, {
          error: thrownText(error),
        })
      })
      .finally(() => {
        running = undefined
      })
  }
  const timer = setInterval(tick, options.intervalMs)
  timer.unref?.()
  if (options.immediately === true) tick()
  return {
    async stop() {
      stopped = true
      clearInterval(timer)
      await running
    },
  }
}
