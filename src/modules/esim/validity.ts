import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import type { Db } from '../../db/types.js'
import type { ScheduleType } from '../../jobs/types.js'
import { cardholdersOnClock } from '../cardholders/index.js'
import type { ClockSweep } from '../clocks/index.js'
import { DEFAULT_ALERTS } from './alerts.js'
import { emitEsimEvents, type EsimEvent } from './esim-events.js'
import * as repo from './validity-repo.js'

export const VALIDITY_SCHEDULE = 'esim.check_validity' satisfies ScheduleType
/** How often the validity sweep runs: an expiry or a warning is announced within a minute. */
export const VALIDITY_EVERY_MS = 60_000
const VALIDITY_BATCH = 2_000

/**
 * Checks the validity of locked eSIMs inside the caller's transaction: announces an ended validity (`esim.expired`,
 * its running packages marked expired) and the warnings now due (one `esim.validity_expiring` per eSIM and run, with
 * the hours left; every warning it passes is recorded as sent). Answers how many eSIMs it announced something of.
 */
async function checkLocked(
  trx: Db,
  esimIds: readonly string[],
  now: Date,
  clockId: string | null = null,
): Promise<number> {
  const outcomes = await repo.applyValidity(
    trx,
    esimIds,
    DEFAULT_ALERTS.validity_warning_hours,
    now,
  )
  const events: EsimEvent[] = outcomes.map((o) =>
    o.expired
      ? { esimId: o.id, type: 'esim.expired' }
      : { esimId: o.id, type: 'esim.validity_expiring', details: { hours_left: o.hours_left } },
  )
  await emitEsimEvents(trx, events, now, clockId)
  return outcomes.length
}

/**
 * The validity check of some eSIMs, in the caller's transaction (new alert settings of an eSIM apply at once), at
 * `now`: the time of their sandbox clock `clockId` when they are under one. Answers how many it announced something of.
 */
export async function checkValidityOf(
  trx: Db,
  esimIds: readonly string[],
  now: Date,
  clockId: string | null = null,
): Promise<number> {
  const locked = await repo.lockDue(trx, DEFAULT_ALERTS.validity_warning_hours, now, {
    after: '',
    limit: esimIds.length,
    only: esimIds,
  })
  return checkLocked(trx, locked, now, clockId)
}

/**
 * The validity sweep (`esim.check_validity`): every eSIM whose validity has ended unannounced, or with a warning due,
 * in batches of locked rows in id order, each batch one transaction. Answers how many eSIMs it looked at. eSIMs under a
 * sandbox clock are left to the clock's advance (`esimValidityOnClock`).
 */
export async function sweepValidity(deps: AppDeps): Promise<number> {
  const now = deps.clock.now()
  let after = ''
  let total = 0
  for (;;) {
    const ids = await withTx(deps.db, async (trx) => {
      const locked = await repo.lockDue(trx, DEFAULT_ALERTS.validity_warning_hours, now, {
        after,
        limit: VALIDITY_BATCH,
      })
      await checkLocked(trx, locked, now)
      return locked
    })
    total += ids.length
    if (ids.length < VALIDITY_BATCH) return total
    after = ids[ids.length - 1]
  }
}

/**
 * eSIM validity and its warnings under a sandbox clock (docs/sandbox-clocks.md), run by the clock's advance in time
 * order with the other sweeps: an eSIM of the clock's cardholders is due at each unsent warning (`valid_until` less the
 * warning's hours, not before the eSIM was made) and at the end of its validity; `run` is the wall-time sweep's check
 * of that one eSIM at the due time (a conditional update under the eSIM's lock: what was announced is not announced
 * again, and a time with nothing left to announce does nothing).
 */
export const esimValidityOnClock: ClockSweep = {
  async due(deps, clockId, until, limit) {
    const holders = await cardholdersOnClock(deps.db, clockId)
    return repo.dueOfCardholders(
      deps.db,
      holders,
      DEFAULT_ALERTS.validity_warning_hours,
      until,
      limit,
    )
  },
  async run(deps, clockId, id) {
    const now = deps.clock.now()
    return withTx(deps.db, async (trx) => (await checkValidityOf(trx, [id], now, clockId)) > 0)
  },
  // Several of one cardholder's eSIMs (the key) in time order: each checked at its own time, in one transaction. Each
  // check is a few statements (some 2 ms), so a run takes 4: ten, 22 ms, raised the p99 of requests served beside
  // the advance more than anything else it ran (bench/README.md, "Sandbox clocks").
  runLimit: 4,
  async runMany(deps, clockId, dues) {
    return withTx(deps.db, async (trx) => {
      let done = 0
      for (const due of dues)
        if ((await checkValidityOf(trx, [due.id], due.at, clockId)) > 0) done++
      return done
    })
  },
}
