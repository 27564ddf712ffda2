import { sql, type RawBuilder } from 'kysely'

/**
 * The one definition of an account's available balance: ledger − held, what debits, purchases and
 * authorizations can use. `availableBalance` for a row in TypeScript, `availableBalanceSql` for a
 * statement over `accounts` columns (optionally of an alias); both say the same thing.
 */
export function availableBalance(account: {
  ledger_balance: number | string | bigint
  held_balance: number | string | bigint
}): number {
  return Number(account.ledger_balance) - Number(account.held_balance)
}

export function availableBalanceSql(alias?: string): RawBuilder<number> {
  return alias === undefined
    ? sql<number>`(ledger_balance - held_balance)`
    : sql<number>`(${sql.ref(`${alias}.ledger_balance`)} - ${sql.ref(`${alias}.held_balance`)})`
}
