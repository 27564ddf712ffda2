/**
 * Where a velocity window starts and when it starts again, for a given instant. Calendar windows are UTC periods:
 * the day from 00:00, the week from Monday 00:00, the month from its first day, the year from 1 January; `all_time`
 * never starts again. A rolling window is the last `seconds` before now: it has no reset of its own, since what it
 * counts leaves it one authorization at a time (`rollingResetsAt` says when the oldest one counted leaves).
 */
import type { RuleWindow } from './rule.js'

const DAY_MS = 24 * 60 * 60 * 1000

/** The first instant of the window current at `now`; null for `all_time` (everything counts). */
export function windowStart(window: RuleWindow, now: Date): Date | null {
  const y = now.getUTCFullYear()
  const m = now.getUTCMonth()
  const d = now.getUTCDate()
  switch (window.type) {
    case 'day':
      return new Date(Date.UTC(y, m, d))
    case 'week':
      // getUTCDay: Sunday 0 … Saturday 6; days since Monday: (day + 6) % 7.
      return new Date(Date.UTC(y, m, d - ((now.getUTCDay() + 6) % 7)))
    case 'month':
      return new Date(Date.UTC(y, m, 1))
    case 'year':
      return new Date(Date.UTC(y, 0, 1))
    case 'all_time':
      return null
    case 'rolling':
      return new Date(now.getTime() - rollingSeconds(window) * 1000)
  }
}

/**
 * The first instant of the next calendar window: when what the current one counted stops counting. Null for
 * `all_time` (never) and for `rolling` (see `rollingResetsAt`).
 */
export function windowResetsAt(window: RuleWindow, now: Date): Date | null {
  const y = now.getUTCFullYear()
  const m = now.getUTCMonth()
  const d = now.getUTCDate()
  switch (window.type) {
    case 'day':
      return new Date(Date.UTC(y, m, d + 1))
    case 'week':
      return new Date(windowStart(window, now)!.getTime() + 7 * DAY_MS)
    case 'month':
      return new Date(Date.UTC(y, m + 1, 1))
    case 'year':
      return new Date(Date.UTC(y + 1, 0, 1))
    case 'all_time':
    case 'rolling':
      return null
  }
}

/** When the oldest authorization a rolling window still counts leaves it (null when it counts none). */
export function rollingResetsAt(window: RuleWindow, oldestCounted: Date | null): Date | null {
  if (oldestCounted === null) return null
  return new Date(oldestCounted.getTime() + rollingSeconds(window) * 1000)
}

/** Whether an authorization made at `at` counts in the window current at `now` (at its start: yes; after now: no). */
export function countsInWindow(window: RuleWindow, at: Date, now: Date): boolean {
  if (at.getTime() > now.getTime()) return false
  const start = windowStart(window, now)
  if (start === null) return true
  // A rolling window of s seconds holds (now − s, now]: an authorization exactly s seconds old has left it.
  return window.type === 'rolling'
    ? at.getTime() > start.getTime()
    : at.getTime() >= start.getTime()
}

function rollingSeconds(window: RuleWindow): number {
  if (window.type !== 'rolling' || window.seconds === null || window.seconds <= 0)
    throw new RangeError(`a ${window.type} window has no length`)
  return window.seconds
}
