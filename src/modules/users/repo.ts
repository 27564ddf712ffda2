import { sql, type Insertable, type Selectable, type Updateable } from 'kysely'
import { purgeInBatches, type PurgeOptions } from '../../db/purge.js'
import { json, type Db } from '../../db/types.js'
import type { ConsoleSessionsTable, UserInvitationsTable, UsersTable } from './types.js'
import './types.js'

export type UserRow = Selectable<UsersTable>
export type SessionRow = Selectable<ConsoleSessionsTable>
export type InvitationRow = Selectable<UserInvitationsTable>

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst()
}

export async function findUser(db: Db, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The user's row, locked until the transaction ends (one-time codes and recovery codes are spent under it). */
export async function lockUser(trx: Db, id: string): Promise<UserRow | undefined> {
  return trx.selectFrom('users').selectAll().where('id', '=', id).forUpdate().executeTakeFirst()
}

export async function insertUser(db: Db, row: Insertable<UsersTable>): Promise<UserRow> {
  return db.insertInto('users').values(row).returningAll().executeTakeFirstOrThrow()
}

export async function updateUser(db: Db, id: string, patch: Updateable<UsersTable>): Promise<void> {
  await db.updateTable('users').set(patch).where('id', '=', id).execute()
}

export async function setRecoveryCodes(
  db: Db,
  id: string,
  hashes: string[],
  now: Date,
): Promise<void> {
  await updateUser(db, id, { recovery_code_hashes: json(hashes), updated_at: now })
}

/** The organization's members, oldest first. */
export async function listMembers(db: Db, organizationId: string): Promise<UserRow[]> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .orderBy('id')
    .limit(500)
    .execute()
}

export async function insertInvitation(
  db: Db,
  row: Insertable<UserInvitationsTable>,
): Promise<void> {
  await db.insertInto('user_invitations').values(row).execute()
}

/** Unused links of a person stop working when a newer one is made: only the latest link sets the password. */
export async function retireInvitations(db: Db, userId: string, now: Date): Promise<void> {
  await db
    .updateTable('user_invitations')
    .set({ expires_at: now })
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .execute()
}

export async function findInvitationByTokenHash(
  db: Db,
  tokenHash: string,
  lock = false,
): Promise<InvitationRow | undefined> {
  const q = db.selectFrom('user_invitations').selectAll().where('token_hash', '=', tokenHash)
  return (lock ? q.forUpdate() : q).executeTakeFirst()
}

export async function markInvitationUsed(db: Db, id: string, now: Date): Promise<void> {
  await db.updateTable('user_invitations').set({ used_at: now }).where('id', '=', id).execute()
}

export async function insertSession(db: Db, row: Insertable<ConsoleSessionsTable>): Promise<void> {
  await db.insertInto('console_sessions').values(row).execute()
}

export async function findSession(db: Db, tokenHash: string): Promise<SessionRow | undefined> {
  return db
    .selectFrom('console_sessions')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst()
}

export async function updateSession(
  db: Db,
  tokenHash: string,
  patch: Updateable<ConsoleSessionsTable>,
): Promise<void> {
  await db.updateTable('console_sessions').set(patch).where('token_hash', '=', tokenHash).execute()
}

export async function deleteSession(db: Db, tokenHash: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('token_hash', '=', tokenHash).execute()
}

/** Ends every session of a person (sign-out everywhere, password change). */
export async function deleteUserSessions(db: Db, userId: string): Promise<number> {
  const result = await db
    .deleteFrom('console_sessions')
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** Writes one row per key in one statement (they commit together): an attempt's reservation, or a mark (null). */
export async function insertFailures(
  db: Db,
  keys: readonly string[],
  at: Date,
  attempt: string | null,
): Promise<void> {
  await db
    .insertInto('console_sign_in_failures')
    .values(keys.map((key) => ({ key, at, attempt })))
    .execute()
}

/**
 * Per key: how many rows it has since `since` (reservations not yet judged included) and the oldest of them (when
 * the window frees a slot). One statement, so every key is counted at the same moment. Keys without rows are absent.
 */
export async function failuresSince(
  db: Db,
  keys: readonly string[],
  since: Date,
): Promise<Map<string, { count: number; oldest: Date }>> {
  const rows = await db
    .selectFrom('console_sign_in_failures')
    .select((eb) => ['key', eb.fn.countAll<string>().as('n'), eb.fn.min('at').as('oldest')])
    .where('key', 'in', [...keys])
    .where('at', '>', since)
    .groupBy('key')
    .execute()
  return new Map(
    rows.map((r) => [r.key, { count: Number(r.n), oldest: new Date(r.oldest as Date) }]),
  )
}

/** Takes back the rows one attempt reserved (found through `console_sign_in_failures_key`). */
export async function deleteAttempt(
  db: Db,
  keys: readonly string[],
  at: Date,
  attempt: string,
): Promise<void> {
  await db
    .deleteFrom('console_sign_in_failures')
    .where('key', 'in', [...keys])
    .where('at', '=', at)
    .where('attempt', '=', attempt)
    .execute()
}

/** Judges one attempt wrong: its rows become failures like any other (no longer an attempt in flight). */
export async function judgeAttempt(
  db: Db,
  keys: readonly string[],
  at: Date,
  attempt: string,
): Promise<void> {
  await db
    .updateTable('console_sign_in_failures')
    .set({ attempt: null })
    .where('key', 'in', [...keys])
    .where('at', '=', at)
    .where('attempt', '=', attempt)
    .execute()
}

/** The most judged failures since `since` under any of `keys` (attempts in flight left out); one statement. */
export async function judgedFailuresSince(
  db: Db,
  keys: readonly string[],
  since: Date,
): Promise<number> {
  const rows = await db
    .selectFrom('console_sign_in_failures')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('key', 'in', [...keys])
    .where('at', '>', since)
    .where('attempt', 'is', null)
    .groupBy('key')
    .execute()
  return Math.max(0, ...rows.map((r) => Number(r.n)))
}

export async function clearFailures(db: Db, key: string): Promise<void> {
  await db.deleteFrom('console_sign_in_failures').where('key', '=', key).execute()
}

/**
 * Deletes sessions past their idle or absolute limit, or left at the second-factor step, in short batches (found
 * through `console_sessions_last_seen` and `console_sessions_created`); a session seen again meanwhile stays.
 */
export async function purgeSessions(
  db: Db,
  limits: { idleBefore: Date; createdBefore: Date; secondFactorBefore: Date },
  options?: PurgeOptions,
): Promise<number> {
  return purgeInBatches(db, {
    ...options,
    table: 'console_sessions',
    key: 'token_hash',
    where: sql`(last_seen_at < ${limits.idleBefore} OR created_at < ${limits.createdBefore}
      OR (stage = 'second_factor' AND created_at < ${limits.secondFactorBefore}))`,
  })
}

/** Deletes invitations (used or not) that expired before `now` (`user_invitations_expiry`), in short batches. */
export async function purgeInvitationsExpiredBefore(
  db: Db,
  now: Date,
  options?: PurgeOptions,
): Promise<number> {
  return purgeInBatches(db, {
    ...options,
    table: 'user_invitations',
    key: 'id',
    orderBy: 'expires_at',
    where: sql`expires_at < ${now}`,
  })
}

/** Deletes sign-in failures recorded before `before` (`console_sign_in_failures_at`), in short batches. */
export async function purgeFailuresBefore(
  db: Db,
  before: Date,
  options?: PurgeOptions,
): Promise<number> {
  return purgeInBatches(db, {
    ...options,
    table: 'console_sign_in_failures',
    orderBy: 'at',
    where: sql`at < ${before}`,
  })
}

/** The organization's members who can sign in as owners (an invited owner without a password does not count), locked. */
export async function lockActiveOwners(trx: Db, organizationId: string): Promise<UserRow[]> {
  return trx
    .selectFrom('users')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('role', '=', 'owner')
    .where('password_hash', 'is not', null)
    .orderBy('id')
    .forUpdate()
    .execute()
}

/** Removes a person: their sessions and invitation links go with them (ON DELETE CASCADE); audit rows stay. */
export async function deleteUser(trx: Db, id: string): Promise<void> {
  await trx.deleteFrom('users').where('id', '=', id).execute()
}
