import type { AppDeps } from '../app-deps.js'
import { frozenClock } from './clock.js'
import { defineHook } from './slots.js'

/**
 * The time of sandbox clock `clockId` (docs/sandbox-clocks.md): what the objects under it read as now.
 * Answered by the clocks module; without it (or for a clock that no longer exists) it is the caller's time.
 */
export type ClockTime = (deps: AppDeps, clockId: string) => Promise<Date | null>

export const CLOCK_TIME = defineHook<ClockTime>('clockTime', async () => null)

/**
 * The dependencies of work on an object under sandbox clock `clockId`: the same, with `clock` reading the
 * sandbox clock's time. Without a clock (`null`), `deps` itself: an object without a clock costs nothing.
 */
export async function onClock(deps: AppDeps, clockId: string | null | undefined): Promise<AppDeps> {
  if (!clockId) return deps
  const at = await deps.hooks.get(CLOCK_TIME)(deps, clockId)
  return at ? atTime(deps, at) : deps
}

/** The dependencies with `clock` reading `at` (a sweep's due time under a sandbox clock). */
export function atTime(deps: AppDeps, at: Date): AppDeps {
  return { ...deps, clock: frozenClock(at) }
}

/**
 * The service's own time beside an object's `now`: `now` itself, except under sandbox clock `clockId`, where `now`
 * is the clock's and what is the service's (an event's created_at and id, a processor's delay, a network's order
 * times) stays wall time (docs/decisions/sandbox-clock-time.md).
 */
export function wallTime(clockId: string | null | undefined, now: Date): Date {
  return clockId ? new Date() : now
}
