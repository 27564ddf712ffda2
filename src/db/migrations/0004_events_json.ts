import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    // The payload is stored as written (json, not jsonb): deliveries and GET /v1/events keep the REST
    // field order of data.object. Nothing queries inside it.
    `ALTER TABLE events ALTER COLUMN data TYPE json USING data::json`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
