import type { Selectable } from 'kysely'
import type { Db } from '../../db/types.js'
import { isId, newId } from '../../lib/ids.js'
import type { AuditLogTable } from './types.js'
import './types.js'

/**
 * Who acts, at which moment: a signed-in person (their id and organization), or the operator API (`userId`
 * null). `now` is the request's clock reading, so an audit row and the change it records carry one time.
 */
export interface Actor {
  userId: string | null
  organizationId: string | null
  now: Date
}

/** An audit row as listed: with the actor's email (null for the operator API). */
export type AuditRow = Selectable<AuditLogTable> & { actor_email: string | null }

/**
 * Records one console action in the transaction of the change it describes (`trx`): both commit or neither.
 * `action` is a dotted name (`user.invited`, `password.changed`); `objectId` the id of what changed.
 */
export async function audit(
  trx: Db,
  actor: Actor,
  action: string,
  objectId: string | null,
  address: string | null,
): Promise<string> {
  const id = newId('aud', actor.now)
  await trx
    .insertInto('audit_log')
    .values({
      id,
      actor_user_id: actor.userId,
      organization_id: actor.organizationId,
      action,
      object_id: objectId,
      at: actor.now,
      address,
    })
    .execute()
  return id
}

export interface AuditPage {
  rows: AuditRow[]
  next: string | null
}

/**
 * A page of the audit log, newest first: one organization's rows, or every row (`organizationId` null: what an
 * operator reads). `before`: the last id of the previous page.
 */
export async function listAudit(
  db: Db,
  organizationId: string | null,
  options: { before?: string; limit?: number } = {},
): Promise<AuditPage> {
  const limit = Math.min(Math.max(options.limit ?? 50, 1), 200)
  let q = db
    .selectFrom('audit_log as a')
    .leftJoin('users as u', 'u.id', 'a.actor_user_id')
    .select([
      'a.id',
      'a.actor_user_id',
      'a.organization_id',
      'a.action',
      'a.object_id',
      'a.at',
      'a.address',
      'u.email as actor_email',
    ])
    .orderBy('a.id', 'desc')
    .limit(limit + 1)
  if (organizationId !== null) q = q.where('a.organization_id', '=', organizationId)
  if (options.before && isId('aud', options.before)) q = q.where('a.id', '<', options.before)
  const rows = await q.execute()
  const more = rows.length > limit
  const page = rows.slice(0, limit)
  return { rows: page, next: more ? page[page.length - 1].id : null }
}
