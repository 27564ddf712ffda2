import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import { json } from '../../db/types.js'
import { scopeOfRow, type RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { iso } from '../../http/ownership.js'
import { callProcessor, recordOutcome } from '../../processors/calls.js'
import type { UpstreamCardStatus } from '../../processors/port.js'
import { emit, type EventDetails, type EventType } from '../events/index.js'
import { nextShippingStatus, type ShippingStatus } from './lifecycle.js'
import { presentCard } from './present.js'
import { closeReplacedCard, closeReplacedUpstream, type PendingClose } from './replacement.js'
import * as repo from './repo.js'
import type { CardView } from './schemas.js'
import { assertMove, requireCardOnClock, requireCardProgram } from './service.js'
import { releaseSlot } from './slots.js'
import { CARD_CLOSED } from './hooks.js'

type StatusOperation = 'activate' | 'freeze' | 'unfreeze' | 'close'

/**
 * Who freezes or unfreezes a card, as `card.frozen` and `card.unfrozen` say (`actor`, `h5_link_id`): the
 * organization (its API clients and console), or the cardholder on the traveller page of one H5 link.
 */
export type StatusActor = { kind: 'organization' } | { kind: 'cardholder'; h5LinkId: string }

const EVENT_OF: Record<StatusOperation, EventType> = {
  activate: 'card.activated',
  freeze: 'card.frozen',
  unfreeze: 'card.unfrozen',
  close: 'card.closed',
}

/**
 * Activate, freeze, unfreeze, close: the state table decides (named refusal otherwise), the processor
 * is told first (outside any transaction), then the card row, the processor outcome and the event
 * are written together. The move is re-checked under the row lock, so concurrent calls never both apply.
 * Activating a replacement closes the card it replaces. Closing deletes the card's network tokens. Under a
 * sandbox clock the card's times are the clock's and the events name the clock (docs/sandbox-clocks.md).
 */
export async function changeStatus(
  deps: AppDeps,
  ctx: RequestCtx,
  cardId: string,
  op: StatusOperation,
  actor: StatusActor = { kind: 'organization' },
): Promise<CardView> {
  const { card, deps: clocked, clockId } = await requireCardOnClock(deps, ctx, cardId)
  const next = assertMove(card, op)
  const program = await requireCardProgram(deps.db, card)
  const processor = deps.processors.forProgram(program)
  const scope = scopeOfRow(card)
  const reference = card.processor_reference!
  let closing: PendingClose | null = null
  if (op === 'activate') closing = await closeReplacedUpstream(deps, card)
  const call = await callProcessor(
    deps,
    scope,
    { processor: processor.name, operation: 'set_card_status', subjectId: card.id },
    () => processor.setCardStatus(scope, reference, next as Exclude<UpstreamCardStatus, 'pending'>),
  )
  const row = await withTx(deps.db, async (trx) => {
    const now = clocked.clock.now()
    const locked = (await repo.lockCard(trx, card.id))!
    assertMove(locked, op)
    let updated = await repo.updateCard(trx, card.id, {
      status: next,
      ...(next === 'closed' ? { closed_at: now } : {}),
      updated_at: now,
    })
    if (next === 'closed') {
      updated = await releaseSlot(trx, updated, now)
      await deps.hooks.get(CARD_CLOSED)(trx, updated, now, clockId)
    }
    await recordOutcome(trx, call.operationId, 'succeeded', deps.clock.now())
    const by: EventDetails =
      op === 'freeze' || op === 'unfreeze'
        ? {
            actor: actor.kind,
            h5_link_id: actor.kind === 'cardholder' ? actor.h5LinkId : null,
          }
        : {}
    await emit(trx, { ...scope, clockId }, EVENT_OF[op], presentCard(updated, now), now, by)
    if (closing)
      await closeReplacedCard(trx, updated, closing, now, deps.hooks.get(CARD_CLOSED), clockId)
    return updated
  })
  return presentCard(row, clocked.clock.now())
}

/**
 * Sandbox: moves a physical card's shipping one step (pending → shipped → delivered, or the step named)
 * and emits `card.shipped` carrying the new shipping status.
 */
export async function shipCard(
  deps: AppDeps,
  ctx: RequestCtx,
  cardId: string,
  wanted: 'shipped' | 'delivered' | undefined,
): Promise<CardView> {
  const { card, deps: clocked, clockId } = await requireCardOnClock(deps, ctx, cardId)
  assertMove(card, 'ship')
  return withTx(deps.db, async (trx) => {
    const now = clocked.clock.now()
    const locked = (await repo.lockCard(trx, card.id))!
    assertMove(locked, 'ship')
    const shipping = locked.shipping ?? {
      status: 'pending' as ShippingStatus,
      shipped_at: null,
      delivered_at: null,
    }
    const next = nextShippingStatus(shipping.status, wanted)
    if (!next) {
      throw new ApiError('card_invalid_state', {
        param: wanted ? 'status' : undefined,
        message: `The card's shipping is ${shipping.status}; it cannot move to ${wanted ?? 'a next step'}.`,
      })
    }
    const updated = await repo.updateCard(trx, card.id, {
      shipping: json({
        status: next,
        shipped_at: next === 'shipped' ? iso(now) : shipping.shipped_at,
        delivered_at: next === 'delivered' ? iso(now) : shipping.delivered_at,
      }),
      updated_at: now,
    })
    const view = presentCard(updated, now)
    await emit(trx, { ...scopeOfRow(updated), clockId }, 'card.shipped', view, now)
    return view
  })
}
