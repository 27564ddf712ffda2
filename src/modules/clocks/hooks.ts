import type { AppDeps } from '../../app-deps.js'
import { defineHook } from '../../lib/slots.js'

/** One object under a sandbox clock that falls due at `at` (clock time). */
export interface DueOnClock {
  id: string
  at: Date
  /**
   * What the object's work serializes on (an authorization's account: its hold expiry locks it). Given, the advance
   * may run objects of different keys side by side, and runs those of one key one after the other in time order; absent, the
   * sweep's objects run one by one.
   */
  key?: string
}

/**
 * A sweep that runs under a sandbox clock's advance (docs/sandbox-clocks.md), answered by the module that owns
 * the objects. The advance asks each sweep for what falls due, merges them in time order and runs them one by one.
 * - `due`: up to `limit` objects under clock `clockId` due at or before `until`, earliest first (ties by id).
 *   An object that `run` has done is no longer due.
 * - `run` (and `runMany`, below): does one object's due work in its own transaction, with `deps.clock` reading the object's due time,
 *   as the wall-time sweep does it (a conditional update: an object no longer due is left alone, so an advance
 *   that runs again, or two at once, does nothing twice). Answers whether it did anything.
 */
export interface ClockSweep {
  due(deps: AppDeps, clockId: string, until: Date, limit: number): Promise<DueOnClock[]>
  run(deps: AppDeps, clockId: string, id: string): Promise<boolean>
  /**
   * Optional, for keyed objects: does the due work of several objects of one key (in time order) in one
   * transaction, each as `run` would with the clock at its own `at`; answers how many it did. Without it the
   * advance calls `run` for each.
   */
  runMany?(deps: AppDeps, clockId: string, dues: readonly DueOnClock[]): Promise<number>
  /** Most objects `runMany` is given at once (the advance's default otherwise: `advance.ts`, `RUN_LIMIT`). */
  runLimit?: number
}

const NOTHING_DUE: ClockSweep = {
  due: async () => [],
  run: async () => false,
}

/** Hold expiry: answered by authorizations. */
export const HOLD_EXPIRY_ON_CLOCK = defineHook<ClockSweep>('holdExpiryOnClock', NOTHING_DUE)
/** Capture settlement: answered by transactions. */
export const SETTLEMENT_ON_CLOCK = defineHook<ClockSweep>('settlementOnClock', NOTHING_DUE)
/** eSIM validity (expiry) and the usage and validity alerts: answered by esim. */
export const ESIM_VALIDITY_ON_CLOCK = defineHook<ClockSweep>('esimValidityOnClock', NOTHING_DUE)

/**
 * The sweeps in the order they run when due at the same instant (the jobs of the clock's objects, which carry
 * card expiry, KYC expiry, 3-D Secure expiry and auto top-ups, come after these; `advance.ts`).
 */
export const CLOCK_SWEEPS = [
  HOLD_EXPIRY_ON_CLOCK,
  SETTLEMENT_ON_CLOCK,
  ESIM_VALIDITY_ON_CLOCK,
] as const
