import type { AppDeps } from '../../app-deps.js'
import { defineHook } from '../../lib/slots.js'

/** Runs what fell due under clock `clockId` up to `until`, in time order; returns how many objects it moved. */
export type DueOnClock = (deps: AppDeps, clockId: string, until: Date) => Promise<number>

/**
 * Hold expiry under a sandbox clock: answered by authorizations (its `expireDueOnClock`). Without it, nothing
 * holds money, so nothing falls due.
 */
export const HOLDS_DUE_ON_CLOCK = defineHook<DueOnClock>('holdsDueOnClock', async () => 0)
