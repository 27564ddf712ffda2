import type { AppDeps } from '../../app-deps.js'
import { isUniqueViolation, withTx } from '../../db/tx.js'
import { json, type Db } from '../../db/types.js'
import { scopeOfRow, type RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { newId } from '../../lib/ids.js'
import { wallTime } from '../../lib/object-clock.js'
import { callProcessor, recordOutcome } from '../../processors/calls.js'
import { emit } from '../events/index.js'
import { CARD_CLOSED, type CardClosedListener } from './hooks.js'
import { closesAtOnce, type ReplaceReason } from './lifecycle.js'
import { presentCard } from './present.js'
import * as repo from './repo.js'
import type { CardView } from './schemas.js'
import {
  announceNewCard,
  assertMove,
  initialShipping,
  requireCardOnClock,
  requireCardProgram,
} from './service.js'
import { releaseSlot } from './slots.js'

/** A processor call already made to close the card being replaced; its outcome is recorded with the local change. */
export interface PendingClose {
  cardId: string
  operationId: string | null
}

/**
 * Before a replacement becomes active: closes the card it replaces at the processor (outside any
 * transaction). Null when there is nothing to close (no predecessor, or it is already closed).
 */
export async function closeReplacedUpstream(
  deps: AppDeps,
  replacement: repo.CardRow,
): Promise<PendingClose | null> {
  if (!replacement.replacement_for) return null
  const old = await repo.findCard(deps.db, replacement.replacement_for)
  if (!old || old.status === 'closed') return null
  if (old.processor_reference === null) return { cardId: old.id, operationId: null }
  const processor = deps.processors.forProgram(await requireCardProgram(deps.db, old))
  const scope = scopeOfRow(old)
  const reference = old.processor_reference
  const call = await callProcessor(
    deps,
    scope,
    { processor: processor.name, operation: 'set_card_status', subjectId: old.id },
    () => processor.setCardStatus(scope, reference, 'closed'),
  )
  return { cardId: old.id, operationId: call.operationId }
}

/**
 * Inside the transaction that activates a replacement: closes the old card, hands its slot on, deletes its tokens,
 * emits `card.closed`. Under a sandbox clock (`clockId`, the cardholder's: `now` is its time) the event names it; the
 * processor's record keeps wall time.
 */
export async function closeReplacedCard(
  trx: Db,
  replacement: repo.CardRow,
  closing: PendingClose,
  now: Date,
  cardClosed: CardClosedListener,
  clockId: string | null = null,
): Promise<void> {
  if (closing.operationId)
    await recordOutcome(trx, closing.operationId, 'succeeded', wallTime(clockId, now))
  const old = await repo.lockCard(trx, closing.cardId)
  if (!old || old.status === 'closed') return
  let row = await repo.updateCard(trx, old.id, {
    status: 'closed',
    closed_at: now,
    updated_at: now,
  })
  row = await releaseSlot(trx, row, now)
  await cardClosed(trx, row, now, clockId)
  await emit(trx, { ...scopeOfRow(row), clockId }, 'card.closed', presentCard(row, now), now)
}

/**
 * Replaces a card with a new one for the same cardholder, account and settings. Lost and stolen cards
 * close at once (`card.closed`); damaged and expiring ones stay usable until the new card is activated.
 * The old card records `replaced_by` (`card.replaced`); the new one `replacement_for` and is issued like any card.
 */
export async function replaceCard(
  deps: AppDeps,
  ctx: RequestCtx,
  cardId: string,
  reason: ReplaceReason,
): Promise<CardView> {
  // Under a sandbox clock both cards' times are the clock's, the events name it and the new card's issuance waits
  // on it (docs/sandbox-clocks.md).
  const { card, deps: clocked, clockId } = await requireCardOnClock(deps, ctx, cardId)
  assertMove(card, 'replace')
  if (card.replaced_by) throw alreadyReplaced(card)
  const program = await requireCardProgram(deps.db, card)
  const processor = deps.processors.forProgram(program)
  const atOnce = closesAtOnce(reason)
  const scope = scopeOfRow(card)
  const reference = card.processor_reference!
  const call = atOnce
    ? await callProcessor(
        deps,
        scope,
        { processor: processor.name, operation: 'set_card_status', subjectId: card.id },
        () => processor.setCardStatus(scope, reference, 'closed'),
      )
    : null
  try {
    return await withTx(deps.db, async (trx) => {
      const now = clocked.clock.now()
      let old = (await repo.lockCard(trx, card.id))!
      assertMove(old, 'replace')
      if (old.replaced_by) throw alreadyReplaced(old)
      const newCardId = newId('card')
      const heldSlot = old.holds_card_slot
      if (atOnce) {
        old = await repo.updateCard(trx, old.id, {
          status: 'closed',
          closed_at: now,
          holds_card_slot: false,
          updated_at: now,
        })
      }
      const fresh = await repo.insertCard(trx, {
        id: newCardId,
        organization_id: old.organization_id,
        environment: old.environment,
        program_id: old.program_id,
        cardholder_id: old.cardholder_id,
        account_id: old.account_id,
        processor: old.processor,
        form_factor: old.form_factor,
        card_type: old.card_type,
        brand: old.brand,
        status: 'pending',
        processor_reference: null,
        last4: null,
        exp_month: null,
        exp_year: null,
        embossed_name: old.embossed_name,
        delivery_address: json(old.delivery_address),
        shipping: initialShipping(old.form_factor),
        spending_controls: json(old.spending_controls),
        // Travel mode carries over with the controls it widens.
        travel_esim_id: old.travel_esim_id,
        travel_country: old.travel_country,
        travel_valid_until: old.travel_valid_until,
        metadata: json(old.metadata),
        pin_set: false,
        replacement_for: old.id,
        replacement_reason: reason,
        replaced_by: null,
        // One-card programs: the new card takes the slot now only if the old card gives it up now (or had none).
        holds_card_slot: program.one_card_per_cardholder && (atOnce || !heldSlot),
        issued_at: null,
        closed_at: null,
        created_at: now,
        updated_at: now,
      })
      old = await repo.updateCard(trx, old.id, { replaced_by: fresh.id, updated_at: now })
      if (call) await recordOutcome(trx, call.operationId, 'succeeded', deps.clock.now())
      const events = { ...scope, clockId }
      if (atOnce) {
        await deps.hooks.get(CARD_CLOSED)(trx, old, now, clockId)
        await emit(trx, events, 'card.closed', presentCard(old, now), now)
      }
      await emit(trx, events, 'card.replaced', presentCard(old, now), now)
      return announceNewCard(trx, fresh, now, deps.config.cardIssueDelayMs, clockId)
    })
  } catch (err) {
    if (isUniqueViolation(err, 'cards_one_per_cardholder')) {
      throw new ApiError('card_limit_reached', {
        param: 'card_id',
        message: 'This cardholder already holds another card on this one-card program.',
      })
    }
    throw err
  }
}

function alreadyReplaced(card: repo.CardRow): ApiError {
  return new ApiError('card_invalid_state', {
    message: `Card ${card.id} has already been replaced by ${card.replaced_by}.`,
  })
}
