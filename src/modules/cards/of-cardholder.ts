import { type RawBuilder, sql } from 'kysely'
import type { Db } from '../../db/types.js'
import { cardholdersOnClock, clockOfCardholderSql } from '../cardholders/index.js'
import './types.js'

/** The ids of the cards of these cardholders (any organization: the caller has the cardholders already). */
export async function cardIdsOfCardholders(
  db: Db,
  cardholderIds: readonly string[],
): Promise<string[]> {
  if (cardholderIds.length === 0) return []
  const rows = await db
    .selectFrom('cards')
    .select('id')
    .where('cardholder_id', 'in', [...cardholderIds])
    .execute()
  return rows.map((r) => r.id)
}

/** The ids of the cards of the cardholders on sandbox clock `clockId` (a clock holds a test's few). */
export async function cardIdsOnClock(db: Db, clockId: string): Promise<string[]> {
  return cardIdsOfCardholders(db, await cardholdersOnClock(db, clockId))
}

/** The cardholder of the card `cardId` (an expression of the caller's statement). */
export function cardholderOfCardSql(cardId: RawBuilder<unknown>): RawBuilder<string> {
  return sql`(SELECT k.cardholder_id FROM cards AS k WHERE k.id = ${cardId})`
}

/**
 * The sandbox clock of the card `cardId`'s cardholder (docs/sandbox-clocks.md), or null (an expression of the
 * caller's statement): what the card's authorizations, transactions and disputes read their time from.
 */
export function clockOfCardSql(cardId: RawBuilder<unknown>): RawBuilder<string | null> {
  return clockOfCardholderSql(cardholderOfCardSql(cardId))
}
