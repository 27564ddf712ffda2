import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import type { Db } from '../../db/types.js'
import type { ScheduleType } from '../../jobs/types.js'
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
 * the hours left; every warning it passes is recorded as sent). Answers the eSIMs that expired.
 */
async function checkLocked(trx: Db, esimIds: readonly string[], now: Date): Promise<string[]> {
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
  await emitEsimEvents(trx, events, now)
  return outcomes.filter((o) => o.expired).map((o) => o.id)
}

/** The validity check of some eSIMs, in the caller's transaction (new alert settings of an eSIM apply at once). */
export async function checkValidityOf(
  trx: Db,
  esimIds: readonly string[],
  now: Date,
): Promise<void> {
  const locked = await repo.lockDue(trx, DEFAULT_ALERTS.validity_warning_hours, now, {
    after: '',
    limit: esimIds.length,
    only: esimIds,
  })
  await checkLocked(trx, locked, now)
}

/**
 * The validity sweep (`esim.check_validity`): every eSIM whose validity has ended unannounced, or with a warning due,
 * in batches of locked rows in id order, each batch one transaction. Answers how many eSIMs it announced something of.
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
