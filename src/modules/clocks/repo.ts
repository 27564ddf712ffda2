import type { Insertable, Selectable, Updateable } from 'kysely'
import type { Db } from '../../db/types.js'
import { applyBounds, type PageBounds } from '../../http/pagination.js'
import type { SandboxClocksTable } from './types.js'
import './types.js'

export type SandboxClockRow = Selectable<SandboxClocksTable>

export async function insertClock(
  db: Db,
  row: Insertable<SandboxClocksTable>,
): Promise<SandboxClockRow> {
  return db.insertInto('sandbox_clocks').values(row).returningAll().executeTakeFirstOrThrow()
}

/**
 * Whether the scope has a clock with objects (a live one, or a deleted one whose objects are still being deleted):
 * in the sandbox only, an index probe. Reads that bound a time window by ids (made on wall time) cannot do so for
 * objects under a clock, whose times are the clock's.
 */
export async function scopeHasClockObjects(
  db: Db,
  scope: { organizationId: string; environment: string },
): Promise<boolean> {
  if (scope.environment !== 'sandbox') return false
  const row = await db
    .selectFrom('sandbox_clocks')
    .select('id')
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('objects_deleted_at', 'is', null)
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}

/** A live (not deleted) clock by id. */
export async function findClock(db: Db, id: string): Promise<SandboxClockRow | undefined> {
  return db
    .selectFrom('sandbox_clocks')
    .selectAll()
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst()
}

/** Same as findClock, holding the row lock until the transaction ends. */
export async function lockClock(trx: Db, id: string): Promise<SandboxClockRow | undefined> {
  return trx
    .selectFrom('sandbox_clocks')
    .selectAll()
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .forUpdate()
    .executeTakeFirst()
}

export async function listClocks(
  db: Db,
  scope: { organizationId: string; environment: string },
  bounds: PageBounds,
): Promise<SandboxClockRow[]> {
  const q = db
    .selectFrom('sandbox_clocks')
    .selectAll()
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('deleted_at', 'is', null)
  return applyBounds(q, bounds, 'id', 'desc').execute()
}

export async function updateClock(
  trx: Db,
  id: string,
  patch: Updateable<SandboxClocksTable>,
): Promise<SandboxClockRow> {
  return trx
    .updateTable('sandbox_clocks')
    .set(patch)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

/**
 * Ends the advance to `target` once: the clock moves to it and is `ready`. Undefined when that advance was already
 * ended (by the worker, a concurrent call) or the clock was deleted meanwhile.
 */
export async function finishAdvance(
  trx: Db,
  id: string,
  target: Date,
  now: Date,
): Promise<SandboxClockRow | undefined> {
  return trx
    .updateTable('sandbox_clocks')
    .set({ status: 'ready', frozen_time: target, advancing_to: null, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'advancing')
    .where('advancing_to', '=', target)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst()
}

/** Marks the clock deleted once; undefined when it already was. */
export async function markDeleted(
  trx: Db,
  id: string,
  now: Date,
): Promise<SandboxClockRow | undefined> {
  return trx
    .updateTable('sandbox_clocks')
    .set({ deleted_at: now, status: 'ready', advancing_to: null, updated_at: now })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst()
}

/** A deletion of the clock's objects is under way (the worker takes it as interrupted once untouched a while). */
export async function touchDeletion(db: Db, id: string, now: Date): Promise<void> {
  await db.updateTable('sandbox_clocks').set({ updated_at: now }).where('id', '=', id).execute()
}

/** Every object of the deleted clock is deleted. */
export async function finishDeletion(db: Db, id: string, now: Date): Promise<void> {
  await db
    .updateTable('sandbox_clocks')
    .set({ objects_deleted_at: now, updated_at: now })
    .where('id', '=', id)
    .where('deleted_at', 'is not', null)
    .where('objects_deleted_at', 'is', null)
    .execute()
}

/** Deleted clocks whose objects are not all deleted, untouched since before `before` (a deletion interrupted). */
export async function unfinishedDeletions(db: Db, before: Date, limit: number) {
  return db
    .selectFrom('sandbox_clocks')
    .select(['id'])
    .where('deleted_at', 'is not', null)
    .where('objects_deleted_at', 'is', null)
    .where('updated_at', '<', before)
    .orderBy('updated_at')
    .limit(limit)
    .execute()
}

/** Clocks left `advancing` since before `before` (an advance that was interrupted). */
export async function stuckAdvancing(db: Db, before: Date, limit: number) {
  return db
    .selectFrom('sandbox_clocks')
    .select(['id', 'advancing_to'])
    .where('status', '=', 'advancing')
    .where('deleted_at', 'is', null)
    .where('updated_at', '<', before)
    .orderBy('updated_at')
    .limit(limit)
    .execute()
}

/** Live clocks past their `deletes_after`. */
export async function dueForDeletion(db: Db, now: Date, limit: number) {
  return db
    .selectFrom('sandbox_clocks')
    .select(['id'])
    .where('deleted_at', 'is', null)
    .where('deletes_after', '<=', now)
    .limit(limit)
    .execute()
}
