/**
 * The stored authorizations as a backtest replays them (docs/authorization-rules.md, "Backtests"): the authorizations
 * module's answer to `STORED_AUTHORIZATIONS`. One page is two statements whatever its size: the page itself, keyset by
 * id along `authorizations_scope`, and its cards (`cardsCte`: the cardholder and the creation time a rule reads).
 */
import { sql } from 'kysely'
import type { Db } from '../../db/types.js'
import type { Scope } from '../../http/context.js'
import { lowestIdAt } from '../../lib/ids.js'
import type { StoredAuthorization, StoredAuthorizationsPage } from '../authorization-rules/index.js'
import { cardsCte } from '../cards/index.js'
import { scopeHasClockObjects } from '../clocks/index.js'
import type { MerchantValue } from '../transactions/index.js'
import type { AuthorizationRequestValue, AuthorizationsTable } from './types.js'

type ReplayRow = Pick<
  AuthorizationsTable,
  | 'id'
  | 'card_id'
  | 'account_id'
  | 'program_id'
  | 'approved'
  | 'amount'
  | 'held_amount'
  | 'captured_amount'
  | 'merchant_amount'
  | 'merchant_currency'
  | 'fx'
  | 'created_at'
  | 'updated_at'
> & { merchant: MerchantValue; request_history: AuthorizationRequestValue[] }

/** The cards of a page: who holds each, and when it was made. */
async function cardsOf(
  db: Db,
  ids: readonly string[],
): Promise<Map<string, { cardholder_id: string; created_at: Date }>> {
  if (ids.length === 0) return new Map()
  const { rows } = await sql<{ id: string; cardholder_id: string; created_at: Date }>`
    WITH ${cardsCte('page_cards', JSON.stringify(ids), ['id', 'cardholder_id', 'created_at'], false)}
    SELECT id, cardholder_id, created_at FROM page_cards`.execute(db)
  return new Map(rows.map((r) => [r.id, { ...r, created_at: new Date(r.created_at) }]))
}

/**
 * What an authorization asked first and how its spend moved after: each approved increment adds its increase at its
 * own time (in the account's currency: converted at the authorization's own rate when the merchant asked in another);
 * whatever else it came to (a reversal, an expiry, a capture for another amount: held plus captured against what was
 * approved) moves at its last change (`updated_at`).
 */
function spendOf(row: ReplayRow): { first: number; changes: { at: Date; amount: number }[] } {
  const total = Number(row.amount)
  if (!row.approved) return { first: total, changes: [] }
  const merchantTotal = Number(row.merchant_amount)
  const inAccount = (merchantAmount: number) =>
    row.fx === null || merchantTotal === 0
      ? merchantAmount
      : Math.round((total * merchantAmount) / merchantTotal)
  const changes = row.request_history
    .slice(1)
    .filter((r) => r.type === 'increment' && r.approved)
    .map((r) => ({ at: new Date(r.created_at), amount: inAccount(Number(r.amount)) }))
  const increased = changes.reduce((sum, c) => sum + c.amount, 0)
  const rest = Number(row.held_amount) + Number(row.captured_amount) - total
  if (rest !== 0) changes.push({ at: new Date(row.updated_at), amount: rest })
  return { first: total - increased, changes }
}

/** `STORED_AUTHORIZATIONS`: one page of the scope's authorizations of the window, oldest first. */
export const authorizationsToReplay: StoredAuthorizationsPage = async (
  db: Db,
  scope: Scope,
  window: { from: Date | null; to: Date },
  after: string | null,
  limit: number,
): Promise<StoredAuthorization[]> => {
  // An authorization's id is made from its created_at (newId('auth', at)): the window is a range of ids. Not for a
  // scope with objects under a sandbox clock: their created_at is the clock's and their ids wall time.
  const idBounds = !(await scopeHasClockObjects(db, scope))
  let q = db
    .selectFrom('authorizations')
    .select([
      'id',
      'card_id',
      'account_id',
      'program_id',
      'approved',
      'amount',
      'held_amount',
      'captured_amount',
      'merchant_amount',
      'merchant_currency',
      'fx',
      'merchant',
      'request_history',
      'created_at',
      'updated_at',
    ])
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('created_at', '<', window.to)
  if (idBounds) q = q.where('id', '<', lowestIdAt('auth', window.to))
  if (window.from) q = q.where('created_at', '>=', window.from)
  if (window.from && idBounds) q = q.where('id', '>=', lowestIdAt('auth', window.from))
  if (after !== null) q = q.where('id', '>', after)
  const rows = (await q.orderBy('id').limit(limit).execute()) as unknown as ReplayRow[]
  const cards = await cardsOf(db, [...new Set(rows.map((r) => r.card_id))])
  const out: StoredAuthorization[] = []
  for (const row of rows) {
    // Cards are never deleted; were one missing, its authorizations still count, as nobody's cardholder's.
    const card = cards.get(row.card_id) ?? {
      cardholder_id: '',
      created_at: new Date(row.created_at),
    }
    const { first, changes } = spendOf(row)
    const history = row.request_history
    out.push({
      id: row.id,
      card: {
        id: row.card_id,
        account_id: row.account_id,
        cardholder_id: card.cardholder_id,
        program_id: row.program_id,
      },
      card_created_at: card.created_at,
      created_at: new Date(row.created_at),
      approved: row.approved,
      amount: first,
      merchant_amount: Number(history[0]?.amount ?? row.merchant_amount),
      merchant_currency: row.merchant_currency,
      merchant: {
        name: row.merchant.name ?? null,
        mcc: row.merchant.mcc ?? null,
        country: row.merchant.country ?? null,
      },
      spend_changes: changes,
    })
  }
  return out
}
