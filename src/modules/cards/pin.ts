import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import type { PurgeOptions } from '../../db/purge.js'
import { withTx } from '../../db/tx.js'
import { scopeOfRow, type RequestCtx, type Scope } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { iso } from '../../http/ownership.js'
import { decryptField, encryptField } from '../../lib/crypto.js'
import { isId, newId } from '../../lib/ids.js'
import { callProcessor, recordOutcome, type ProcessorCall } from '../../processors/calls.js'
import type { Processor } from '../../processors/port.js'
import { emit } from '../events/index.js'
import type { ProgramRow } from '../programs/index.js'
import { audited } from './audit.js'
import {
  createPinKeyPair,
  decryptPin,
  isValidPin,
  PIN_KEY_ALGORITHM,
  PIN_KEY_LIFETIME_MS,
} from './pin-crypto.js'
import { presentCard } from './present.js'
import * as repo from './repo.js'
import type { CardView, PinKey, PinSubmitBody, PinVerification } from './schemas.js'
import { assertMove, requireCard, requireCardOnClock, requireCardProgram } from './service.js'

type PinKeyView = Static<typeof PinKey>
type PinVerificationView = Static<typeof PinVerification>

/** Purpose of the key that seals PIN-key private halves at rest. */
const PIN_KEY_PURPOSE = 'card-pin-key'
/**
 * Keys (spent or not) are kept a day past their 5-minute lifetime, then purged by the `cards.purge_pin_keys`
 * schedule. Nothing reads them after expiry: an expired, spent or unknown key all answer the same.
 */
export const PIN_KEY_RETENTION_MS = 24 * 60 * 60 * 1000

/** Deletes PIN keys more than `PIN_KEY_RETENTION_MS` past their expiry, every card's at once; answers how many. */
export async function purgeExpiredPinKeys(deps: AppDeps, options?: PurgeOptions): Promise<number> {
  return repo.purgePinKeysExpiredBefore(
    deps.db,
    new Date(deps.clock.now().getTime() - PIN_KEY_RETENTION_MS),
    options,
  )
}

function assertPinConfigured(program: ProgramRow): void {
  if (!program.pin_key_configured) {
    throw new ApiError('program_not_configured', {
      message: `Program ${program.id} has no PIN key configured at its processor; PINs cannot be set or verified.`,
    })
  }
}

/**
 * First of the two PIN calls: a fresh 2048-bit RSA key for one PIN of this card, valid 5 minutes.
 * Only an active physical card gets one; the private half is sealed at rest and never leaves.
 */
export async function createPinKey(
  deps: AppDeps,
  ctx: RequestCtx,
  cardId: string,
): Promise<PinKeyView> {
  return audited(deps, ctx, cardId, 'pin_key.create', async () => {
    const card = await requireCard(deps.db, ctx, cardId)
    assertPinConfigured(await requireCardProgram(deps.db, card))
    assertMove(card, 'pin')
    const pair = await createPinKeyPair()
    const now = deps.clock.now()
    const id = newId('pink')
    const expiresAt = new Date(now.getTime() + PIN_KEY_LIFETIME_MS)
    await repo.insertPinKey(deps.db, {
      id,
      organization_id: card.organization_id,
      environment: card.environment,
      card_id: card.id,
      program_id: card.program_id,
      private_key_sealed: encryptField(deps.config.masterKey, PIN_KEY_PURPOSE, pair.privatePem),
      expires_at: expiresAt,
      spent_at: null,
      created_at: now,
    })
    return {
      object: 'pin_key' as const,
      id,
      card_id: card.id,
      public_key: {
        kty: 'RSA' as const,
        n: pair.publicJwk.n,
        e: pair.publicJwk.e,
        alg: 'RSA-OAEP-256' as const,
        use: 'enc' as const,
        kid: id,
      },
      public_key_pem: pair.publicPem,
      algorithm: PIN_KEY_ALGORITHM,
      expires_at: iso(expiresAt)!,
      created_at: iso(now)!,
    }
  })
}

/**
 * The PIN sent with a key: the key is spent first, whatever happens next, also when it was minted for
 * another card (a key of another card or program, or an expired or spent one, is `token_not_found`); the card must be active and physical;
 * the PIN must decrypt under that key and be 4–12 digits (`pin_invalid`, nothing sent to the processor).
 */
async function openPin(deps: AppDeps, card: repo.CardRow, body: PinSubmitBody): Promise<string> {
  const sealed = isId('pink', body.pin_key_id)
    ? await withTx(deps.db, (trx) =>
        repo.spendPinKey(
          trx,
          body.pin_key_id,
          { cardId: card.id, ...scopeOfRow(card) },
          deps.clock.now(),
        ),
      )
    : null
  assertMove(card, 'pin')
  if (sealed === null) {
    throw new ApiError('token_not_found', {
      param: 'pin_key_id',
      message:
        'No usable PIN key with this id for this card: keys are single-use, last 5 minutes and belong to one card.',
    })
  }
  const pin = decryptPin(
    decryptField(deps.config.masterKey, PIN_KEY_PURPOSE, sealed),
    body.encrypted_pin,
  )
  if (!isValidPin(pin)) {
    throw new ApiError('pin_invalid', {
      param: 'encrypted_pin',
      message:
        'encrypted_pin must be the RSA-OAEP-256 encryption, to this key, of 4 to 12 digits. Nothing was sent to the processor.',
    })
  }
  return pin
}

/**
 * The shared path of pin and pin/verify: the caller's card on a program with a PIN key, the PIN opened with its
 * one-time key (spent whatever happens next), then one recorded processor call with it.
 */
async function callWithPin<T>(
  deps: AppDeps,
  ctx: RequestCtx,
  cardId: string,
  body: PinSubmitBody,
  operation: 'set_pin' | 'verify_pin',
  send: (processor: Processor, scope: Scope, reference: string, pin: string) => Promise<T>,
): Promise<{
  card: repo.CardRow
  scope: Scope
  call: ProcessorCall<T>
  clocked: AppDeps
  clockId: string | null
}> {
  // The card's sandbox clock, if any: what the card's own times read (the PIN key's lifetime stays wall time).
  const { card, deps: clocked, clockId } = await requireCardOnClock(deps, ctx, cardId)
  const program = await requireCardProgram(deps.db, card)
  assertPinConfigured(program)
  const pin = await openPin(deps, card, body)
  const processor = deps.processors.forProgram(program)
  const scope = scopeOfRow(card)
  const reference = card.processor_reference!
  const call = await callProcessor(
    deps,
    scope,
    { processor: processor.name, operation, subjectId: card.id },
    () => send(processor, scope, reference, pin),
  )
  return { card, scope, call, clocked, clockId }
}

/**
 * Sets the PIN through the processor (which keeps only a hash) and emits `card.pin_set`; under a sandbox clock the
 * card's `updated_at` is the clock's time and the event names the clock.
 */
export async function setPin(
  deps: AppDeps,
  ctx: RequestCtx,
  cardId: string,
  body: PinSubmitBody,
): Promise<CardView> {
  return audited(deps, ctx, cardId, 'pin.set', async () => {
    const { card, scope, call, clocked, clockId } = await callWithPin(
      deps,
      ctx,
      cardId,
      body,
      'set_pin',
      (p, s, ref, pin) => p.setPin(s, ref, pin),
    )
    return withTx(deps.db, async (trx) => {
      const now = clocked.clock.now()
      await recordOutcome(trx, call.operationId, 'succeeded', deps.clock.now())
      const row = await repo.updateCard(trx, card.id, { pin_set: true, updated_at: now })
      const view = presentCard(row, now)
      await emit(trx, { ...scope, clockId }, 'card.pin_set', view, now)
      return view
    })
  })
}

/** Checks a PIN against the one the processor holds; a card without a PIN never matches. */
export async function verifyPin(
  deps: AppDeps,
  ctx: RequestCtx,
  cardId: string,
  body: PinSubmitBody,
): Promise<PinVerificationView> {
  return audited(deps, ctx, cardId, 'pin.verify', async () => {
    const { card, call } = await callWithPin(
      deps,
      ctx,
      cardId,
      body,
      'verify_pin',
      (p, s, ref, pin) => p.verifyPin(s, ref, pin),
    )
    await recordOutcome(deps.db, call.operationId, 'succeeded', deps.clock.now())
    return { object: 'pin_verification' as const, card_id: card.id, match: call.result }
  })
}
