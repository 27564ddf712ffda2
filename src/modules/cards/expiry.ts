import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import { scopeOfRow } from '../../http/context.js'
import type { JobOutcome, JobRecord } from '../../jobs/queue.js'
import type { JobType } from '../../jobs/types.js'
import { emit } from '../events/index.js'
import { expiryInstant, isPastExpiry } from './card-numbers.js'
import { presentCard } from './present.js'
import * as repo from './repo.js'
import { releaseSlot } from './slots.js'

/** One job per issued card, due the first instant after its expiry month ends. */
export const CARD_EXPIRE_JOB = 'card.expire' satisfies JobType

const EXPIRING = new Set(['inactive', 'active', 'frozen'])

/**
 * Marks a card `expired` once its expiry month has ended (closed cards stay closed), gives up its
 * one-card slot and emits `card.expired`. A job that runs early (clock skew between nodes) waits again. A card under
 * a sandbox clock expires only in the clock's advance (its job waits on the clock), `deps.clock` then reading the
 * clock's time at the job's due instant; its event names the clock.
 */
export async function expireCard(deps: AppDeps, cardId: string): Promise<JobOutcome> {
  const card = await repo.findCardWithClock(deps.db, cardId)
  if (!card || !EXPIRING.has(card.status) || card.exp_month === null || card.exp_year === null)
    return
  const clockId = card.clock_id
  if (!isPastExpiry(card.exp_month, card.exp_year, deps.clock.now()))
    return { retryAt: expiryInstant(card.exp_month, card.exp_year) }
  await withTx(deps.db, async (trx) => {
    const now = deps.clock.now()
    const locked = await repo.lockCard(trx, cardId)
    if (!locked || !EXPIRING.has(locked.status)) return
    let row = await repo.updateCard(trx, cardId, { status: 'expired', updated_at: now })
    row = await releaseSlot(trx, row, now)
    await emit(trx, { ...scopeOfRow(row), clockId }, 'card.expired', presentCard(row, now), now)
  })
}

export async function runExpireJob(deps: AppDeps, job: JobRecord): Promise<JobOutcome> {
  return expireCard(deps, String(job.payload.card_id))
}
