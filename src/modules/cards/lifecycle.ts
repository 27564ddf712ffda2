import type { ErrorCode } from '../../http/errors.js'

/** Every status a card can be in (decisions.md, Cards). */
export type CardStatus = 'pending' | 'inactive' | 'active' | 'frozen' | 'expired' | 'closed'
export const CARD_STATUSES: readonly CardStatus[] = [
  'pending',
  'inactive',
  'active',
  'frozen',
  'expired',
  'closed',
]

/** The caller's operations on an existing card; each is checked against the state table before anything runs. */
export type CardOperation =
  | 'activate'
  | 'freeze'
  | 'unfreeze'
  | 'close'
  | 'replace'
  | 'ship'
  | 'pin'
  | 'details'
  | 'reveal'
  | 'update'

export type FormFactor = 'virtual' | 'physical'

/** What the state table says about one move: the next status, or the named refusal. */
export type Move = { ok: true; next: CardStatus } | { ok: false; code: ErrorCode; message: string }

const refuse = (code: ErrorCode, message: string): Move => ({ ok: false, code, message })
const to = (next: CardStatus): Move => ({ ok: true, next })

/**
 * The card state table as one pure function. Rules that hold for every operation come first:
 * a closed card refuses everything (`card_closed`), a card the processor has not issued yet refuses
 * every operation but a metadata/spending-controls update (`card_not_provisioned`).
 */
export function planMove(status: CardStatus, formFactor: FormFactor, op: CardOperation): Move {
  if (status === 'closed')
    return refuse('card_closed', 'The card is closed; closing is irreversible.')
  if (status === 'pending') {
    if (op === 'update') return to(status)
    return refuse(
      'card_not_provisioned',
      'The processor has not issued the card yet; wait for card.issued.',
    )
  }
  switch (op) {
    case 'activate':
      if (status === 'inactive') return to('active')
      if (status === 'active')
        return refuse('card_already_activated', 'The card is already active.')
      return refuse('card_invalid_state', `A ${status} card cannot be activated.`)
    case 'freeze':
      if (status === 'active') return to('frozen')
      return refuse(
        'card_invalid_state',
        `Only an active card can be frozen; this card is ${status}.`,
      )
    case 'unfreeze':
      if (status === 'frozen') return to('active')
      return refuse(
        'card_invalid_state',
        `Only a frozen card can be unfrozen; this card is ${status}.`,
      )
    case 'close':
      return to('closed')
    case 'replace':
      return to(status)
    case 'ship':
      if (formFactor !== 'physical')
        return refuse('card_invalid_state', 'Only physical cards are shipped.')
      if (status === 'expired')
        return refuse('card_invalid_state', 'An expired card is not shipped.')
      return to(status)
    case 'pin':
      if (status === 'active' && formFactor === 'physical') return to(status)
      return refuse(
        'card_invalid_state',
        formFactor === 'physical'
          ? `A PIN can be set only on an active physical card; this card is ${status}.`
          : 'A PIN can be set only on an active physical card; this card is virtual.',
      )
    case 'reveal':
      if (status === 'active' || status === 'inactive') return to(status)
      return refuse(
        'card_invalid_state',
        `Card details can be shown only for an active or inactive card; this card is ${status}.`,
      )
    case 'details':
    case 'update':
      return to(status)
  }
}

/** Statuses in which a card still exists at the processor and counts against one-card programs. */
export function isLive(status: CardStatus): boolean {
  return status !== 'closed' && status !== 'expired'
}

/** The status a card takes when the processor issues it: physical cards wait for activation. */
export function issuedStatus(formFactor: FormFactor): CardStatus {
  return formFactor === 'physical' ? 'inactive' : 'active'
}

/** Replacement reasons; lost and stolen cards close at once, the others when the new card is activated. */
export type ReplaceReason = 'lost' | 'stolen' | 'damaged' | 'expiring'

export function closesAtOnce(reason: ReplaceReason): boolean {
  return reason === 'lost' || reason === 'stolen'
}

/** Shipping of physical cards: the simulator moves it forward one step at a time. */
export type ShippingStatus = 'pending' | 'shipped' | 'delivered'

export function nextShippingStatus(
  current: ShippingStatus,
  wanted: ShippingStatus | undefined,
): ShippingStatus | null {
  const target = wanted ?? (current === 'pending' ? 'shipped' : 'delivered')
  if (current === 'pending' && target === 'shipped') return target
  if (current === 'shipped' && target === 'delivered') return target
  return null
}
