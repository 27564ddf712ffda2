import type { Db } from '../../db/types.js'
import { ApiError } from '../../http/errors.js'
import { newId } from '../../lib/ids.js'
import { availableBalance, type AccountRow } from '../accounts/index.js'
import * as repo from './repo.js'
import type { EntryType } from './schemas.js'

/** Most an account may hold (minor units): a credit beyond it is `account_not_fundable`. */
export const MAX_BALANCE = 1_000_000_000_000_000

/** One change to an account, as the ledger records it. */
export interface Movement {
  type: EntryType
  /** Change of the settled (ledger) balance. */
  ledgerDelta: number
  /** Change of the held balance. */
  heldDelta: number
  sourceId?: string | null
  clientTransactionId?: string | null
  reference?: string | null
  description?: string | null
  /** When the entry happened, when not the `now` of the posting (several movements each at its own time). */
  at?: Date
}

/** The signed amount an entry shows: the ledger change for settled types, the available change for holds. */
function entryAmount(m: Movement): number {
  return m.type === 'hold' || m.type === 'hold_release' ? -m.heldDelta : m.ledgerDelta
}

/**
 * Applies a movement to an account whose row lock the transaction holds: new balances and the entry
 * that explains them are written together. Returns the updated account.
 */
export async function postMovement(
  trx: Db,
  account: AccountRow,
  m: Movement,
  now: Date,
): Promise<AccountRow> {
  return postMovements(trx, account, [m], now)
}

/**
 * Applies movements in order to an account whose row lock the transaction holds: one write of the balances
 * they end at, and one insert of their entries, each with the balances right after it. Returns the updated account.
 */
export async function postMovements(
  trx: Db,
  account: AccountRow,
  movements: readonly Movement[],
  now: Date,
): Promise<AccountRow> {
  let ledger = Number(account.ledger_balance)
  let held = Number(account.held_balance)
  let seq = Number(account.entry_seq)
  const entries = movements.map((m) => {
    ledger += m.ledgerDelta
    held += m.heldDelta
    seq += 1
    const available = availableBalance({ ledger_balance: ledger, held_balance: held })
    return {
      id: newId('le'),
      account_id: account.id,
      organization_id: account.organization_id,
      environment: account.environment,
      seq,
      type: m.type,
      amount: entryAmount(m),
      currency: account.currency,
      ledger_balance_after: ledger,
      held_balance_after: held,
      available_balance_after: available,
      source_id: m.sourceId ?? null,
      client_transaction_id: m.clientTransactionId ?? null,
      reference: m.reference ?? null,
      description: m.description ?? null,
      created_at: m.at ?? now,
    }
  })
  const updated = await repo.writeBalances(trx, account.id, ledger, held, seq, now)
  await repo.insertEntries(trx, entries)
  return updated
}

export interface SettledMovementInput {
  accountId: string
  type: Extract<
    EntryType,
    'credit' | 'debit' | 'refund' | 'dispute_credit' | 'esim_purchase' | 'esim_refund'
  >
  /** Signed change of the ledger balance (negative for money leaving the account). */
  amount: number
  currency: string
  sourceId?: string | null
  reference?: string | null
  description?: string | null
  /** Refuse when the account is blocked (default true); merchant refunds and won disputes pass false. */
  requireOpen?: boolean
  /**
   * Signed change of an `fx_fee` entry posted right after, with the same source: the markup of a foreign refund
   * when the program keeps it separate (docs/fx.md). Judged with `amount` as one movement.
   */
  fee?: number
}

/**
 * A settled movement for other modules (refunds, won disputes, eSIM purchases) inside their own
 * transaction: locks the account, enforces currency, status and available funds, and posts it.
 */
export async function applySettledMovement(
  trx: Db,
  input: SettledMovementInput,
  now: Date,
): Promise<AccountRow> {
  const account = await repo.lockAccount(trx, input.accountId)
  if (!account) throw new ApiError('account_not_found')
  if (input.currency.toUpperCase() !== account.currency) {
    throw new ApiError('currency_mismatch', {
      message: `The account holds ${account.currency}, not ${input.currency.toUpperCase()}.`,
    })
  }
  if ((input.requireOpen ?? true) && account.status !== 'open')
    throw new ApiError('account_blocked')
  const total = input.amount + (input.fee ?? 0)
  const available = availableBalance(account)
  if (total < 0 && available + total < 0) throw new ApiError('insufficient_funds')
  if (total > 0 && Number(account.ledger_balance) + total > MAX_BALANCE)
    throw new ApiError('account_not_fundable')
  const movement = {
    heldDelta: 0,
    sourceId: input.sourceId,
    reference: input.reference,
    description: input.description,
  }
  return postMovements(
    trx,
    account,
    [
      { ...movement, type: input.type, ledgerDelta: input.amount },
      ...(input.fee ? [{ ...movement, type: 'fx_fee' as const, ledgerDelta: input.fee }] : []),
    ],
    now,
  )
}
