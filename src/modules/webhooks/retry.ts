import { DEFAULT_RETRY_SCHEDULE } from '../../config.js'

/** The interface's retry period: 72 hours after the first failure. */
export const DEFAULT_RETRY_PERIOD_MS = 72 * 60 * 60 * 1000

function isDefault(schedule: readonly number[]): boolean {
  return (
    schedule.length === DEFAULT_RETRY_SCHEDULE.length &&
    schedule.every((s, i) => s === DEFAULT_RETRY_SCHEDULE[i])
  )
}

/**
 * How long failed deliveries are retried, counted from the first failure: 72 hours on the decided schedule
 * (its last step repeats until then). A schedule set with WEBHOOK_RETRY_SCHEDULE is run through once:
 * the period is the sum of its steps, so a test schedule `1,1,1` gives up 3 s after the first failure.
 */
export function retryPeriodMs(schedule: readonly number[]): number {
  if (isDefault(schedule)) return DEFAULT_RETRY_PERIOD_MS
  return schedule.reduce((sum, s) => sum + s, 0) * 1000
}

/** Wait before the retry that follows the `failures`-th consecutive failure (the last step repeats). */
export function retryDelayMs(schedule: readonly number[], failures: number): number {
  if (schedule.length === 0) return 0
  return schedule[Math.min(Math.max(failures, 1), schedule.length) - 1] * 1000
}

export type RetryDecision = { giveUp: true } | { giveUp: false; at: Date }

/**
 * After a failed attempt: retry on the schedule, never later than the end of the period (so the last
 * retry lands on it), and give up once an attempt at or after the end has failed.
 */
export function nextRetry(
  schedule: readonly number[],
  failures: number,
  firstFailedAt: Date,
  now: Date,
): RetryDecision {
  const deadline = firstFailedAt.getTime() + retryPeriodMs(schedule)
  if (now.getTime() >= deadline) return { giveUp: true }
  return {
    giveUp: false,
    at: new Date(Math.min(now.getTime() + retryDelayMs(schedule, failures), deadline)),
  }
}
