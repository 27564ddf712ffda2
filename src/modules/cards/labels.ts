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

const BRANDS: Record<string, string> = {
  visa: 'Visa',
  mastercard: 'Mastercard',
  amex: 'American Express',
  discover: 'Discover',
}

/** A card's brand as people write it: `Visa`, `Mastercard`, `American Express`. */
export function brandName(brand: string): string {
  return BRANDS[brand] ?? brand.charAt(0).toUpperCase() + brand.slice(1)
}

/** `Visa •••• 4242`: the brand and the last four digits, all a list or a cardholder's page shows of a card. */
export function maskedCard(card: { brand: string; last4: string | null }): string {
  const brand = brandName(card.brand)
  return card.last4 ? `${brand} •••• ${card.last4}` : `${brand} card`
}
