import { sql } from 'kysely'
import type { Db } from '../../db/types.js'
import { newId } from '../../lib/ids.js'
import './types.js'

export const EVENT_API_VERSION = '2026-11-01'

/** Whose event it is: the organization and environment the change happened in. */
export interface EventScope {
  organizationId: string
  environment: string
}

/**
 * Records that something happened: call it with the transaction that made the change, so a rolled-back
 * change emits nothing (transactional outbox). `object` is the full object in its REST shape.
 * Returns the event id.
 */
export async function emit(trx: Db, scope: EventScope, type: string, object: Record<string, unknown>, now: Date = new Date()): Promise<string> {
  const id = newId('evt')
  await sql`INSERT INTO events (id, organization_id, environment, type, api_version, data, created_at)
    VALUES (${id}, ${scope.organizationId}, ${scope.environment}, ${type}, ${EVENT_API_VERSION}, ${JSON.stringify({ object })}, ${now})`.execute(trx)
  return id
}
