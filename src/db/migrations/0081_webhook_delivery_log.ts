import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/** Crockford base32 digit `i` (0 = most significant of 10) of a row's creation time in milliseconds: the time part of a ULID-like id. */
const TIME_PART = `(SELECT string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ',
    (((floor(extract(epoch FROM wd.created_at) * 1000))::bigint >> (5 * (9 - g.i))) & 31)::int + 1, 1), '' ORDER BY g.i)
  FROM generate_series(0, 9) AS g(i))`

/**
 * The delivery log of `/v1` (GET /v1/webhook_endpoints/{id}/deliveries): every (event, endpoint) delivery gets a
 * stable `whd_` id, sorting by when it was first queued (its 16 last characters are derived from the event and the
 * endpoint, in uppercase hexadecimal, which is part of the id alphabet), and the type of its event, so the log is
 * filtered without reading the events. Attempts record when they started; their ids move to the prefix `wha_`
 * (they had `whd_`, which now names deliveries). Backfilled rows get the same kind of values new rows get.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `ALTER TABLE webhook_deliveries ADD COLUMN id text`,
    `ALTER TABLE webhook_deliveries ADD COLUMN event_type text`,
    `UPDATE webhook_deliveries AS wd SET id = 'whd_' || ${TIME_PART} || upper(substr(md5(wd.event_id || ' ' || wd.endpoint_id), 1, 16))`,
    `UPDATE webhook_deliveries AS wd SET event_type = e.type FROM events AS e WHERE e.id = wd.event_id`,
    `ALTER TABLE webhook_deliveries ALTER COLUMN id SET NOT NULL`,
    `ALTER TABLE webhook_deliveries ALTER COLUMN event_type SET NOT NULL`,
    `CREATE UNIQUE INDEX webhook_deliveries_id ON webhook_deliveries (id)`,
    // The log of one endpoint, newest first; replaces the (endpoint_id, event_id) index nothing reads any more.
    `CREATE INDEX webhook_deliveries_endpoint_log ON webhook_deliveries (endpoint_id, id DESC)`,
    `DROP INDEX webhook_deliveries_endpoint`,
    `ALTER TABLE webhook_delivery_attempts ADD COLUMN started_at timestamptz`,
    `UPDATE webhook_delivery_attempts SET started_at = created_at - duration_ms * interval '1 millisecond'`,
    `ALTER TABLE webhook_delivery_attempts ALTER COLUMN started_at SET NOT NULL`,
    `UPDATE webhook_delivery_attempts SET id = 'wha_' || substr(id, 5) WHERE starts_with(id, 'whd_')`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
