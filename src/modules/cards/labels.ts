import { type RawBuilder, sql } from 'kysely'
import type { Db } from '../../db/types.js'
import type { Scope } from '../../http/context.js'
import './types.js'

/** What a list shows of a card it names: its brand and last four, and whose it is. */
export interface CardLabel {
  brand: string
  last4: string | null
  cardholderId: string
}

/** The caller's cards among `ids` (one read by primary key), for lists that name a card by `brand •••• last4`. */
export async function cardLabels(
  db: Db,
  scope: Scope,
  ids: readonly (string | null | undefined)[],
): Promise<Map<string, CardLabel>> {
  const wanted = [...new Set(ids.filter((id): id is string => Boolean(id)))]
  if (wanted.length === 0) return new Map()
  const rows = await db
    .selectFrom('cards')
    .select(['id', 'brand', 'last4', 'cardholder_id'])
    .where('id', 'in', wanted)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .execute()
  return new Map(
    rows.map((r) => [r.id, { brand: r.brand, last4: r.last4, cardholderId: r.cardholder_id }]),
  )
}

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

/** The cardholder of the card `cardId` (an expression of the caller's statement). */
export function cardholderOfCardSql(cardId: RawBuilder<unknown>): RawBuilder<string> {
  return sql`(SELECT k.cardholder_id FROM cards AS k WHERE k.id = ${cardId})`
}
