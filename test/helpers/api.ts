import assert from 'node:assert/strict'
import type { LightMyRequestResponse } from 'fastify'
import type { TestApp } from './app.js'

/** What every module's tests check of an answer: its error envelope, and the events a change stored. */

/** The error envelope of a response, after checking its status, its code and (when given) its param. */
export function expectError(
  res: LightMyRequestResponse,
  status: number,
  code: string,
  param?: string,
): any {
  assert.equal(res.statusCode, status, res.body)
  const { error } = res.json()
  assert.equal(error.code, code, res.body)
  if (param !== undefined) assert.equal(error.param, param, res.body)
  return error
}

/** A stored event: its type, the object it carries (`data.object`) and its whole `data` (details beside the object). */
export interface StoredEvent {
  type: string
  object: any
  data: any
}

function stored(rows: { type: string; data: unknown }[]): StoredEvent[] {
  return rows.map((r) => {
    const data = typeof r.data === 'string' ? JSON.parse(r.data) : (r.data as any)
    return { type: r.type, object: data.object, data }
  })
}

/** The events of one organization (oldest first), optionally of one type, as `emit` stored them. */
export async function eventsOf(
  t: TestApp,
  organizationId: string,
  type?: string,
): Promise<StoredEvent[]> {
  let q = t.deps.db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('organization_id', '=', organizationId)
    .orderBy('id')
  if (type) q = q.where('type', '=', type)
  return stored(await q.execute())
}

/** The events about one object (oldest first), optionally of one type. */
export async function eventsFor(
  t: TestApp,
  objectId: string,
  type?: string,
): Promise<StoredEvent[]> {
  let q = t.deps.db.selectFrom('events').select(['type', 'data']).orderBy('id')
  if (type) q = q.where('type', '=', type)
  return stored(await q.execute()).filter((e) => e.object?.id === objectId)
}
