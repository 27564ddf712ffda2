import { sql } from 'kysely'
import type { Db } from '../../db/types.js'
import type { Scope } from '../../http/context.js'
import './types.js'

/** What a tenant's open accounts hold in one currency (minor units). */
export interface CurrencyHoldings {
  currency: string
  accounts: number
  /** The ledger balance: every posted entry. */
  ledger: number
  /** What authorizations hold of it. */
  held: number
  /** Ledger less held: what can still be spent. */
  available: number
}

/** The tenant's open accounts summed by currency (one aggregate over `accounts_scope`). */
export async function holdingsByCurrency(db: Db, scope: Scope): Promise<CurrencyHoldings[]> {
  const { rows } = await sql<{ currency: string; accounts: string; ledger: string; held: string }>`
    SELECT currency, count(*) AS accounts, coalesce(sum(ledger_balance), 0) AS ledger,
      coalesce(sum(held_balance), 0) AS held
    FROM accounts
    WHERE organization_id = ${scope.organizationId} AND environment = ${scope.environment}
      AND status <> 'closed'
    GROUP BY currency ORDER BY currency`.execute(db)
  return rows.map((r) => ({
    currency: r.currency,
    accounts: Number(r.accounts),
    ledger: Number(r.ledger),
    held: Number(r.held),
    available: Number(r.ledger) - Number(r.held),
  }))
}
