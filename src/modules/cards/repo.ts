import { sql, type Insertable, type Selectable, type Updateable } from 'kysely'
import { purgeInBatches, type PurgeOptions } from '../../db/purge.js'
import type { Db } from '../../db/types.js'
import { applyBounds, whereIs, type PageBounds } from '../../http/pagination.js'
import { clockOfCardholderSql } from '../cardholders/index.js'
import { clockTimeSql } from '../clocks/index.js'
import type {
  CardPinKeysTable,
  CardRevealSessionsTable,
  CardSecretAuditTable,
  CardsTable,
} from './types.js'
import './types.js'

export type CardRow = Selectable<CardsTable>
export type PinKeyRow = Selectable<CardPinKeysTable>
export type RevealSessionRow = Selectable<CardRevealSessionsTable>

export async function insertCard(db: Db, row: Insertable<CardsTable>): Promise<CardRow> {
  return db.insertInto('cards').values(row).returningAll().executeTakeFirstOrThrow()
}

export async function findCard(db: Db, id: string): Promise<CardRow | undefined> {
  return db.selectFrom('cards').selectAll().where('id', '=', id).executeTakeFirst()
}

/**
 * `findCard` with the sandbox clock of its cardholder (docs/sandbox-clocks.md) read in the same statement: for the
 * card's jobs, which learn the clock from no request.
 */
export async function findCardWithClock(
  db: Db,
  id: string,
): Promise<(CardRow & { clock_id: string | null }) | undefined> {
  return db
    .selectFrom('cards')
    .selectAll()
    .select(
      sql<string | null>`${clockOfCardholderSql(sql.ref('cards.cardholder_id'))}`.as('clock_id'),
    )
    .where('id', '=', id)
    .executeTakeFirst()
}

/** The card row locked for the rest of the transaction: moves on one card run one at a time. */
export async function lockCard(db: Db, id: string): Promise<CardRow | undefined> {
  return db.selectFrom('cards').selectAll().where('id', '=', id).forUpdate().executeTakeFirst()
}

export async function updateCard(
  db: Db,
  id: string,
  patch: Updateable<CardsTable>,
): Promise<CardRow> {
  return db
    .updateTable('cards')
    .set(patch)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** The travel columns of every card following the eSIM `esimId` (the partial index `cards_travel_esim`). */
export async function setTravelColumns(
  db: Db,
  esimId: string,
  columns: Pick<CardsTable, 'travel_country' | 'travel_valid_until'>,
): Promise<void> {
  await db.updateTable('cards').set(columns).where('travel_esim_id', '=', esimId).execute()
}

export interface CardFilter {
  organizationId: string
  environment: string
  cardholderId?: string
  accountId?: string
  status?: string
}

/**
 * A page of cards, each with `clock_time`: the time of its cardholder's sandbox clock (null: none; read in the
 * statement, for sandbox rows only), which decides what the card shows that depends on now (its travel mode).
 */
export async function listCards(
  db: Db,
  filter: CardFilter,
  bounds: PageBounds,
): Promise<(CardRow & { clock_time: Date | null })[]> {
  const clockTime = clockTimeSql(clockOfCardholderSql(sql.ref('cards.cardholder_id')))
  let q = db
    .selectFrom('cards')
    .selectAll()
    .select(
      sql<Date | null>`CASE WHEN cards.environment = 'sandbox' THEN ${clockTime} END`.as(
        'clock_time',
      ),
    )
    .where('organization_id', '=', filter.organizationId)
    .where('environment', '=', filter.environment)
  if (filter.cardholderId !== undefined) q = q.where('cardholder_id', '=', filter.cardholderId)
  if (filter.accountId !== undefined) q = q.where('account_id', '=', filter.accountId)
  if (filter.status !== undefined) q = whereIs(q, 'status', filter.status)
  return applyBounds(q, bounds, 'id', 'desc').execute()
}

/** True when the scope has issued at least one card (the console's getting-started checklist). */
export async function anyCard(
  db: Db,
  organizationId: string,
  environment: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('cards')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}

/** True when the cardholder already holds the one card a one-card program allows. */
export async function slotTaken(db: Db, programId: string, cardholderId: string): Promise<boolean> {
  const row = await db
    .selectFrom('cards')
    .select('id')
    .where('program_id', '=', programId)
    .where('cardholder_id', '=', cardholderId)
    .where('holds_card_slot', '=', true)
    .executeTakeFirst()
  return row !== undefined
}

export async function insertPinKey(db: Db, row: Insertable<CardPinKeysTable>): Promise<void> {
  await db.insertInto('card_pin_keys').values(row).execute()
}

/**
 * Spends a PIN key of the caller (organization and environment): the first caller gets its sealed private half
 * and the key is marked spent and wiped in the same transaction; every later or concurrent caller gets nothing.
 * A key sent with a PIN is spent whatever the outcome, also when it is presented against another card than the
 * one it was minted for; that presentation gets nothing back (`token_not_found`).
 */
export async function spendPinKey(
  db: Db,
  id: string,
  owner: { cardId: string; organizationId: string; environment: string },
  now: Date,
): Promise<string | null> {
  const row = await db
    .selectFrom('card_pin_keys')
    .select(['card_id', 'private_key_sealed', 'expires_at', 'spent_at'])
    .where('id', '=', id)
    .where('organization_id', '=', owner.organizationId)
    .where('environment', '=', owner.environment)
    .forUpdate()
    .executeTakeFirst()
  if (!row || row.spent_at !== null) return null
  await db
    .updateTable('card_pin_keys')
    .set({ spent_at: now, private_key_sealed: '' })
    .where('id', '=', id)
    .execute()
  if (row.card_id !== owner.cardId) return null
  if (row.expires_at.getTime() <= now.getTime()) return null
  return row.private_key_sealed
}

/** Deletes PIN keys (spent or not) that expired before `before` (`card_pin_keys_expiry`), in short batches; answers how many. */
export async function purgePinKeysExpiredBefore(
  db: Db,
  before: Date,
  options?: PurgeOptions,
): Promise<number> {
  return purgeInBatches(db, {
    ...options,
    table: 'card_pin_keys',
    key: 'id',
    orderBy: 'expires_at',
    where: sql`expires_at < ${before}`,
  })
}

export async function insertAudit(db: Db, row: Insertable<CardSecretAuditTable>): Promise<void> {
  await db.insertInto('card_secret_audit').values(row).execute()
}

export async function setAuditOutcome(db: Db, id: string, outcome: string): Promise<void> {
  await db.updateTable('card_secret_audit').set({ outcome }).where('id', '=', id).execute()
}

export async function insertRevealSession(
  db: Db,
  row: Insertable<CardRevealSessionsTable>,
): Promise<RevealSessionRow> {
  return db.insertInto('card_reveal_sessions').values(row).returningAll().executeTakeFirstOrThrow()
}

/** A reveal session by the digest of its token (`card_reveal_sessions_token`); the token itself is never stored. */
export async function findRevealSessionByTokenHash(
  db: Db,
  tokenHash: string,
): Promise<RevealSessionRow | undefined> {
  return db
    .selectFrom('card_reveal_sessions')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst()
}

/**
 * Uses a session: one statement marks it used only while it is unused and unexpired, so of any number of concurrent
 * views exactly one gets the row back; every other (and every later) one gets nothing.
 */
export async function useRevealSession(
  db: Db,
  id: string,
  now: Date,
): Promise<RevealSessionRow | undefined> {
  return db
    .updateTable('card_reveal_sessions')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst()
}

/** Deletes reveal sessions that expired before `before` (`card_reveal_sessions_expiry`), in batches; answers how many. */
export async function purgeRevealSessionsExpiredBefore(
  db: Db,
  before: Date,
  options?: PurgeOptions,
): Promise<number> {
  return purgeInBatches(db, {
    ...options,
    table: 'card_reveal_sessions',
    key: 'id',
    orderBy: 'expires_at',
    where: sql`expires_at < ${before}`,
  })
}
