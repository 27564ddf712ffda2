import type { RawBuilder } from 'kysely'
import type { AppDeps } from '../../app-deps.js'
import { purgeInBatches } from '../../db/purge.js'
import type { Db } from '../../db/types.js'
import { defineHook } from '../../lib/slots.js'

/**
 * Deleting a sandbox clock deletes its objects (docs/sandbox-clocks.md, "Deleting"): the cardholders on it and
 * everything under them. Each module deletes its own rows of a batch of those cardholders, answering the hook below
 * that names it; the clock's deletion asks them in `CLOCK_DELETIONS` order (what refers to an object goes before it)
 * and deletes the cardholders last, so that a deletion interrupted anywhere is found again from the cardholders
 * still on the clock and finished (by the worker) without anything left dangling.
 *
 * An answer deletes every row of its module that belongs to `cardholderIds` (their accounts', cards', eSIMs' rows),
 * a bounded batch per statement and transaction (`deleteInBatches`), and answers how many rows went. It must do
 * nothing wrong when called again for the same cardholders.
 */
export type DeleteOfCardholders = (
  deps: AppDeps,
  cardholderIds: readonly string[],
) => Promise<number>

const NOTHING: DeleteOfCardholders = async () => 0
const hook = (name: string) => defineHook<DeleteOfCardholders>(name, NOTHING)

/** Disputes of the cardholders' cards: answered by disputes. */
export const DELETE_DISPUTES_OF = hook('deleteDisputesOf')
/** Transactions of their cards: answered by transactions. */
export const DELETE_TRANSACTIONS_OF = hook('deleteTransactionsOf')
/** 3-D Secure authentications of their cards: answered by authentications. */
export const DELETE_AUTHENTICATIONS_OF = hook('deleteAuthenticationsOf')
/** Network tokens of their cards: answered by network-tokens. */
export const DELETE_NETWORK_TOKENS_OF = hook('deleteNetworkTokensOf')
/** Authorization rules' counters and activity of their cards, accounts and themselves: answered by authorization-rules. */
export const DELETE_RULE_STATE_OF = hook('deleteRuleStateOf')
/** Authorizations of their cards: answered by authorizations. */
export const DELETE_AUTHORIZATIONS_OF = hook('deleteAuthorizationsOf')
/** Hosted-page links of the cardholders: answered by h5. */
export const DELETE_H5_LINKS_OF = hook('deleteH5LinksOf')
/** eSIMs (with their packages and usage reports) and eSIM orders of the cardholders: answered by esim. */
export const DELETE_ESIMS_OF = hook('deleteEsimsOf')
/** Cards and their secrets (PIN keys, reveal sessions, secret audit): answered by cards. */
export const DELETE_CARDS_OF = hook('deleteCardsOf')
/** Ledger entries and holds of the cardholders' accounts: answered by ledger. */
export const DELETE_LEDGER_OF = hook('deleteLedgerOf')
/** Accounts of the cardholders: answered by accounts. */
export const DELETE_ACCOUNTS_OF = hook('deleteAccountsOf')
/** KYC attestations and their documents: answered by kyc. */
export const DELETE_KYC_OF = hook('deleteKycOf')

/** The order the deletion asks them in: what refers to an object before the object (the cardholders go last). */
export const CLOCK_DELETIONS = [
  DELETE_DISPUTES_OF,
  DELETE_TRANSACTIONS_OF,
  DELETE_AUTHENTICATIONS_OF,
  DELETE_NETWORK_TOKENS_OF,
  DELETE_RULE_STATE_OF,
  DELETE_AUTHORIZATIONS_OF,
  DELETE_H5_LINKS_OF,
  DELETE_ESIMS_OF,
  DELETE_CARDS_OF,
  DELETE_LEDGER_OF,
  DELETE_ACCOUNTS_OF,
  DELETE_KYC_OF,
] as const

/** Rows one statement of a clock's deletion removes at most. */
export const DELETION_BATCH = 1000

/**
 * Deletes the rows of `table` (the caller's own) matching `where`, `DELETION_BATCH` at a time, each statement its
 * own short transaction (call it with the pool, never inside `withTx`); answers how many went.
 */
export function deleteInBatches(
  db: Db,
  table: string,
  where: RawBuilder<unknown>,
  key?: string,
): Promise<number> {
  return purgeInBatches(db, {
    table,
    where,
    key,
    batch: DELETION_BATCH,
    pauseMs: 0,
    restFactor: 0,
  })
}
