import { sql, type RawBuilder } from 'kysely'
import type { Static } from 'typebox'
import { isoText } from '../../db/json-sql.js'
import { iso } from '../../http/ownership.js'
import { availableBalance, availableBalanceSql } from './balance.js'
import type { AccountRow } from './repo.js'
import type { Account } from './schemas.js'

export type AccountView = Static<typeof Account>

/** The REST shape of an account; its available balance as `balance.ts` defines it. */
export function presentAccount(row: AccountRow): AccountView {
  return {
    id: row.id,
    object: 'account',
    program_id: row.program_id,
    cardholder_id: row.cardholder_id,
    currency: row.currency,
    status: row.status as AccountView['status'],
    ledger_balance: Number(row.ledger_balance),
    held_balance: Number(row.held_balance),
    available_balance: availableBalance(row),
    has_upstream_reference: row.upstream_reference !== null,
    metadata: (row.metadata ?? {}) as Record<string, string>,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  }
}

/**
 * `presentAccount` in SQL, over the columns of an `accounts` row in scope: the same keys in the same
 * order, for statements that write an account's event from the row they just updated (`emitPerRow`).
 * test/ledger asserts an event built this way equals the account read back through the API.
 */
export function accountJson(): RawBuilder<unknown> {
  return sql`json_build_object(
    'id', id, 'object', 'account', 'program_id', program_id, 'cardholder_id', cardholder_id, 'currency', currency,
    'status', status, 'ledger_balance', ledger_balance, 'held_balance', held_balance, 'available_balance', ${availableBalanceSql()},
    'has_upstream_reference', upstream_reference IS NOT NULL, 'metadata', coalesce(metadata, '{}'::jsonb),
    'created_at', ${isoText('created_at')}, 'updated_at', ${isoText('updated_at')})`
}
