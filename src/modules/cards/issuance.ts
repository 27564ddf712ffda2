import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import { json } from '../../db/types.js'
import { scopeOfRow, type RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { enqueue, type JobOutcome, type JobRecord } from '../../jobs/queue.js'
import { systemClock } from '../../lib/clock.js'
import { onClock } from '../../lib/object-clock.js'
import { callProcessor, recordOutcome } from '../../processors/calls.js'
import { requireAccount } from '../accounts/index.js'
import { emit } from '../events/index.js'
import { expiryInstant } from './card-numbers.js'
import { CARD_EXPIRE_JOB } from './expiry.js'
import { issuedStatus, type FormFactor } from './lifecycle.js'
import { presentCard } from './present.js'
import { closeReplacedCard, closeReplacedUpstream } from './replacement.js'
import * as repo from './repo.js'
import { CARD_ISSUE_JOB, requireCard, requireCardProgram } from './service.js'
import type { CardView } from './schemas.js'
import { CARD_CLOSED } from './hooks.js'

/** How soon the job looks again when the processor still reports the card pending. */
const POLL_AGAIN_MS = 1000

/**
 * Has the processor issue a pending card: requests it once (the card id is the processor's idempotency
 * key), then reads it back; once issued, records last4 and expiry, emits `card.issued` and schedules
 * expiry. Answers whether the processor still reports the card pending. Safe to run twice at once. A card whose
 * cardholder is on a sandbox clock is issued on the clock's time: its `issued_at`, its expiry (dated by the processor
 * from that time) and its `card.expire` job, which waits on the clock (docs/sandbox-clocks.md). `inAdvance`: run by
 * the clock's advance, whose `deps.clock` already reads the clock's time at the job's due instant.
 */
export async function issuePendingCard(
  given: AppDeps,
  cardId: string,
  inAdvance = false,
): Promise<{ stillPending: boolean }> {
  const found = await repo.findCardWithClock(given.db, cardId)
  if (!found || found.status !== 'pending') return { stillPending: false }
  const { clock_id: clockId, ...pendingCard } = found
  let card: repo.CardRow = pendingCard
  // The card's own times read its sandbox clock; the processor's calls and their records stay on wall time.
  const clocked = inAdvance ? given : await onClock(given, clockId)
  const deps = inAdvance ? { ...given, clock: systemClock } : given
  const program = await requireCardProgram(deps.db, card)
  const processor = deps.processors.forProgram(program)
  const scope = scopeOfRow(card)

  if (card.processor_reference === null) {
    const account = await requireAccount(deps.db, scopeOfRow(card), card.account_id)
    if (account.upstream_reference === null) return { stillPending: true }
    const pending = card
    const call = await callProcessor(
      deps,
      scope,
      { processor: processor.name, operation: 'issue_card', subjectId: card.id },
      () =>
        processor.issueCard(scope, {
          cardId: pending.id,
          accountReference: account.upstream_reference!,
          programId: program.id,
          cardholderId: pending.cardholder_id,
          formFactor: pending.form_factor as FormFactor,
          cardType: pending.card_type,
          brand: pending.brand,
          bin: program.bin,
          embossedName: pending.embossed_name,
        }),
    )
    card = await withTx(deps.db, async (trx) => {
      await recordOutcome(trx, call.operationId, 'accepted', deps.clock.now())
      const locked = (await repo.lockCard(trx, cardId))!
      if (locked.processor_reference !== null) return locked
      return repo.updateCard(trx, cardId, { processor_reference: call.result.upstreamReference })
    })
  }

  const reference = card.processor_reference!
  const read = await callProcessor(
    deps,
    scope,
    { processor: processor.name, operation: 'get_card', subjectId: card.id },
    () => processor.getCard(clockId ? { ...scope, at: clocked.clock.now() } : scope, reference),
  )
  const upstream = read.result
  if (upstream.status === 'pending') {
    await recordOutcome(deps.db, read.operationId, 'accepted', deps.clock.now())
    return { stillPending: true }
  }
  const status =
    upstream.status === 'inactive' || upstream.status === 'active'
      ? upstream.status
      : issuedStatus(card.form_factor as FormFactor)
  // A virtual replacement is active at once: the card it replaces closes now (upstream first, outside the transaction).
  const closing = status === 'active' ? await closeReplacedUpstream(deps, card) : null

  await withTx(deps.db, async (trx) => {
    const now = clocked.clock.now()
    await recordOutcome(trx, read.operationId, 'succeeded', deps.clock.now())
    const locked = (await repo.lockCard(trx, cardId))!
    if (locked.status !== 'pending') return
    if (upstream.last4 === null || upstream.expMonth === null || upstream.expYear === null) {
      throw new ApiError('processor_unavailable', { detail: 'issued card without number data' })
    }
    const row = await repo.updateCard(trx, cardId, {
      status,
      last4: upstream.last4,
      exp_month: upstream.expMonth,
      exp_year: upstream.expYear,
      issued_at: now,
      shipping:
        locked.form_factor === 'physical'
          ? json({ status: 'pending', shipped_at: null, delivered_at: null })
          : null,
      updated_at: now,
    })
    await emit(trx, { ...scope, clockId }, 'card.issued', presentCard(row, now), now)
    await enqueue(trx, {
      type: CARD_EXPIRE_JOB,
      payload: { card_id: row.id },
      runAt: expiryInstant(upstream.expMonth, upstream.expYear),
      ...scopeOfRow(row),
      // Under a sandbox clock, the expiry is due on the clock's time and runs only in its advance.
      clockId,
    })
    if (closing)
      await closeReplacedCard(trx, row, closing, now, deps.hooks.get(CARD_CLOSED), clockId)
  })
  return { stillPending: false }
}

/**
 * `card.issue` jobs: due `CARD_ISSUE_DELAY_MS` after the card was requested; polls while the processor is still
 * working. A card under a sandbox clock has its job on the clock (`clock_id` in the payload), run by the clock's
 * advance; when the processor is still working then (the card's account not yet open upstream, which is the
 * processor's wall time), polling goes on as a wall-time job: on the clock each poll would step the clock's time.
 */
export async function runIssueJob(deps: AppDeps, job: JobRecord): Promise<JobOutcome> {
  const cardId = String(job.payload.card_id)
  const inAdvance = typeof job.payload.clock_id === 'string'
  const { stillPending } = await issuePendingCard(deps, cardId, inAdvance)
  if (!stillPending) return
  if (!inAdvance) return { retryAt: new Date(deps.clock.now().getTime() + POLL_AGAIN_MS) }
  await enqueue(deps.db, {
    type: CARD_ISSUE_JOB,
    payload: { card_id: cardId },
    runAt: new Date(Date.now() + POLL_AGAIN_MS),
    organizationId: job.organization_id,
    environment: job.environment,
  })
}

/** Sandbox: issue a pending card now instead of waiting for the job (an issued card answers unchanged). */
export async function issueNow(deps: AppDeps, ctx: RequestCtx, cardId: string): Promise<CardView> {
  const card = await requireCard(deps.db, ctx, cardId)
  if (card.status === 'pending') await issuePendingCard(deps, card.id)
  return presentCard((await repo.findCard(deps.db, card.id))!)
}
