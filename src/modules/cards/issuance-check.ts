import { ApiError } from '../../http/errors.js'
import type { Processor } from '../../processors/port.js'
import type { AccountRow } from '../accounts/index.js'
import {
  cardholderHasAddress,
  cardholderHasIdentityDocument,
  type CardholderRow,
} from '../cardholders/index.js'
import type { ProgramRow } from '../programs/index.js'
import { requireNameAndAddress, type DeliveryAddressValue } from './delivery-address.js'
import type { CardCreateBody } from './schemas.js'
import { assertSpendControlsSupported, type SpendingControlsValue } from './spending-controls.js'

/**
 * Whether a card may be issued, as a pure function: every fact it needs is read once beforehand (the service's
 * `readIssuanceFacts`) and handed in, so the rules and their order are unit-tested without a database and the
 * outcome is a value — the plan of the card to write, or the refusal to answer.
 */

/** What issuing a card depends on, read before any rule runs. */
export interface IssuanceFacts {
  cardholder: CardholderRow
  /** The KYC gate's refusal for the account's program (one without identity evidence when the account is unseen). */
  kycRefusal: ApiError | null
  /** The funding account, or the refusal its lookup answered (not found, the other environment's). */
  account: AccountRow | ApiError
  /** The account's program; null when the account is unseen or its program is not attached in this environment. */
  program: ProgramRow | null
  /** The program's processor, or the refusal when this deployment cannot serve it; null without a program. */
  processor: Processor | ApiError | null
  /** Whether the cardholder already holds the one card the program allows (false when the program allows more). */
  slotTaken: boolean
}

/** The card to write once every rule has passed. */
export interface IssuancePlan {
  cardholder: CardholderRow
  account: AccountRow
  program: ProgramRow
  processor: Processor
  embossedName: string
  deliveryAddress: DeliveryAddressValue
  /** Whether the card takes the program's one slot of the cardholder (`holds_card_slot`). */
  holdsSlot: boolean
}

export type IssuanceCheck = { ok: true; plan: IssuancePlan } | { ok: false; error: ApiError }

/**
 * The rules of issuance in their stable order: the cardholder's identity document, address and KYC; the funding
 * account (exists, same cardholder, provisioned); then the program's: form factor, card type, embossed name and
 * delivery address, the one-card limit, and the spending controls (`controls`, already read from the body) its
 * processor enforces.
 */
export function checkIssuance(
  facts: IssuanceFacts,
  body: CardCreateBody,
  controls: SpendingControlsValue,
): IssuanceCheck {
  try {
    return { ok: true, plan: plan(facts, body, controls) }
  } catch (err) {
    if (err instanceof ApiError) return { ok: false, error: err }
    throw err
  }
}

function plan(
  facts: IssuanceFacts,
  body: CardCreateBody,
  controls: SpendingControlsValue,
): IssuancePlan {
  const { cardholder, account, program, processor } = facts
  if (!cardholderHasIdentityDocument(cardholder)) {
    throw new ApiError('identity_document_required', {
      param: 'cardholder_id',
      message: 'The cardholder has no identity document; add one with PATCH /v1/cardholders/{id}.',
    })
  }
  if (!cardholderHasAddress(cardholder)) {
    throw new ApiError('address_required', {
      param: 'cardholder_id',
      message: 'The cardholder has no address; add one before issuing a card.',
    })
  }
  if (facts.kycRefusal) throw facts.kycRefusal

  if (account instanceof ApiError) throw account
  if (account.cardholder_id !== cardholder.id) {
    throw new ApiError('account_cardholder_mismatch', {
      param: 'account_id',
      message: `Account ${account.id} belongs to another cardholder than ${cardholder.id}.`,
    })
  }
  if (account.upstream_reference === null) {
    throw new ApiError('account_not_provisioned', {
      param: 'account_id',
      message: `Account ${account.id} does not exist at the processor yet; retry once has_upstream_reference is true.`,
    })
  }
  if (!program || !processor) throw new ApiError('program_not_provisioned', { param: 'account_id' })
  if (processor instanceof ApiError) throw processor

  if (!program.form_factors.includes(body.form_factor)) {
    throw new ApiError('unsupported_form_factor', {
      param: 'form_factor',
      message:
        `Program ${program.id} does not issue ${body.form_factor} cards; ` +
        `it issues: ${program.form_factors.join(', ')}.`,
    })
  }
  if (!program.card_types.includes(body.card_type)) {
    throw new ApiError('card_type_not_configured', {
      param: 'card_type',
      message: `Program ${program.id} has no ${body.card_type} product; configured: ${program.card_types.join(', ')}.`,
    })
  }
  const { embossedName, deliveryAddress } = requireNameAndAddress(body)
  const holdsSlot = program.one_card_per_cardholder
  if (holdsSlot && facts.slotTaken) throw cardLimitReached(program)
  assertSpendControlsSupported(controls, processor.spendControls)
  return { cardholder, account, program, processor, embossedName, deliveryAddress, holdsSlot }
}

/** The refusal of a second card on a one-card program (also answered when two requests race past the check). */
export function cardLimitReached(program: ProgramRow): ApiError {
  return new ApiError('card_limit_reached', {
    param: 'cardholder_id',
    message:
      `Program ${program.id} allows one card per cardholder and this cardholder already has one; ` +
      'close it or replace it instead.',
  })
}
