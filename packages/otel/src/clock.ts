import type { HrTime } from '@opentelemetry/api'

/**
 * Epoch milliseconds (with a fraction) from the monotonic clock. Every span gets its start and end
 * time from here, so a span ended later than the event that finished it (a model request ends at
 * `step-finish`, its reply arrives one event later) still measures exactly, on any SDK.
 */
export function now(): number {
  return performance.timeOrigin + performance.now()
}

/** Epoch milliseconds as an OpenTelemetry `HrTime` (`[seconds, nanoseconds]`). */
export function toHrTime(milliseconds: number): HrTime {
  const seconds = Math.floor(milliseconds / 1000)
  const nanoseconds = Math.min(999_999_999, Math.round((milliseconds - seconds * 1000) * 1e6))
  return [seconds, nanoseconds]
}
