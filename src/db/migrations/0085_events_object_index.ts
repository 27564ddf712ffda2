import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * The console shows the newest events about an object beside it (`eventsAbout`): the object's id is inside the
 * event's JSON, so without an index the read scanned every event of the organization since the object was made —
 * on a year-old account, most of the organization's retained events. This index answers it with one range read,
 * newest first.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE INDEX events_object ON events (organization_id, environment, (data #>> '{object,id}'), id DESC)`,
  ])
}

export async function down(db: Kysely<any>): Promise<void> {
  await runStatements(db, ['DROP INDEX events_object'])
}
