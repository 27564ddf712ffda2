import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { scopeOfRow, type RequestCtx } from '../../http/context.js'
import { callProcessor, recordOutcome } from '../../processors/calls.js'
import { audited } from './audit.js'
import { encryptDetails, importCallerKey } from './card-details-crypto.js'
import type { CardDetails } from './schemas.js'
import { assertMove, requireCard, requireCardProgram } from './service.js'

type CardDetailsView = Static<typeof CardDetails>

/**
 * The full card number, security code and expiry, readable only by the holder of the caller's private
 * key: the processor reveals them, and they leave this function only inside a compact JWE.
 */
export async function revealCardDetails(
  deps: AppDeps,
  ctx: RequestCtx,
  cardId: string,
  publicKey: unknown,
): Promise<CardDetailsView> {
  return audited(deps, ctx, cardId, 'details.reveal', async () => {
    const card = await requireCard(deps.db, ctx, cardId)
    const key = importCallerKey(publicKey)
    assertMove(card, 'details')
    const processor = deps.processors.forProgram(await requireCardProgram(deps.db, card))
    const scope = scopeOfRow(card)
    const reference = card.processor_reference!
    const call = await callProcessor(
      deps,
      scope,
      { processor: processor.name, operation: 'reveal_details', subjectId: card.id },
      () => processor.revealDetails(scope, reference),
    )
    await recordOutcome(deps.db, call.operationId, 'succeeded', deps.clock.now())
    const secrets = call.result
    const encrypted = await encryptDetails(key, {
      number: secrets.number,
      cvc: secrets.cvc,
      exp_month: secrets.expMonth,
      exp_year: secrets.expYear,
    })
    return { object: 'card_details' as const, card_id: card.id, encrypted_details: encrypted }
  })
}
