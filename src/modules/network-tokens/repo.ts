import { sql, type Insertable, type Selectable, type Updateable } from 'kysely'
import type { Db } from '../../db/types.js'
import { applyBounds, closedSetPage, whereIs, type PageBounds } from '../../http/pagination.js'
import { clockOfCardSql } from '../cards/index.js'
import { TOKEN_STATUSES } from './lifecycle.js'
import { WALLETS } from './schemas.js'
import type { NetworkTokensTable } from './types.js'
import './types.js'

export type TokenRow = Selectable<NetworkTokensTable>

export async function insertToken(db: Db, row: Insertable<NetworkTokensTable>): Promise<TokenRow> {
  return db.insertInto('network_tokens').values(row).returningAll().executeTakeFirstOrThrow()
}

export async function findToken(db: Db, id: string): Promise<TokenRow | undefined> {
  return db.selectFrom('network_tokens').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The token with the sandbox clock of its card's cardholder (null: none), read in the same statement. */
export async function findTokenWithClock(
  db: Db,
  id: string,
): Promise<(TokenRow & { clock_id: string | null }) | undefined> {
  return db
    .selectFrom('network_tokens')
    .selectAll()
    .select(sql<string | null>`${clockOfCardSql(sql.ref('network_tokens.card_id'))}`.as('clock_id'))
    .where('id', '=', id)
    .executeTakeFirst()
}

/** The token row locked for the rest of the transaction: moves on one token run one at a time. */
export async function lockToken(db: Db, id: string): Promise<TokenRow | undefined> {
  return db
    .selectFrom('network_tokens')
    .selectAll()
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst()
}

export async function updateToken(
  db: Db,
  id: string,
  patch: Updateable<NetworkTokensTable>,
): Promise<TokenRow> {
  return db
    .updateTable('network_tokens')
    .set(patch)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** Deletes every token of a card that is not deleted yet, in one statement; answers the deleted rows. */
export async function deleteCardTokens(db: Db, cardId: string, now: Date): Promise<TokenRow[]> {
  return db
    .updateTable('network_tokens')
    .set({ status: 'deleted', deleted_at: now, updated_at: now })
    .where('card_id', '=', cardId)
    .where('status', '!=', 'deleted')
    .returningAll()
    .execute()
}

/** The status of a token presented with a card, within the caller's organization and environment. */
export async function tokenStatusFor(
  db: Db,
  where: { id: string; cardId: string; organizationId: string; environment: string },
): Promise<string | null> {
  const row = await db
    .selectFrom('network_tokens')
    .select('status')
    .where('id', '=', where.id)
    .where('card_id', '=', where.cardId)
    .where('organization_id', '=', where.organizationId)
    .where('environment', '=', where.environment)
    .executeTakeFirst()
  return row?.status ?? null
}

export interface TokenFilter {
  organizationId: string
  environment: string
  cardId?: string
  status?: string
  wallet?: string
}

/**
 * A page of the caller's tokens, newest first. `card_id` reads the card's index and checks the rest on its tokens;
 * otherwise `wallet` and `status` read `network_tokens_wallet_status`, one range per value of whichever is left open.
 */
export async function listTokens(
  db: Db,
  filter: TokenFilter,
  bounds: PageBounds,
): Promise<TokenRow[]> {
  let q = db
    .selectFrom('network_tokens')
    .selectAll()
    .where('organization_id', '=', filter.organizationId)
    .where('environment', '=', filter.environment)
  if (filter.cardId !== undefined) {
    q = q.where('card_id', '=', filter.cardId)
    if (filter.status !== undefined) q = whereIs(q, 'status', filter.status)
    if (filter.wallet !== undefined) q = whereIs(q, 'wallet', filter.wallet)
    return applyBounds(q, bounds, 'id', 'desc').execute()
  }
  return closedSetPage(db, q, bounds, {
    wallet: { value: filter.wallet, all: WALLETS },
    status: { value: filter.status, all: TOKEN_STATUSES },
  })
}
