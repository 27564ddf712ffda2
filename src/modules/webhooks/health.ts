import { sql } from 'kysely'
import type { Db } from '../../db/types.js'
import { lowestIdAt } from '../../lib/ids.js'
import './types.js'

/** What the operator's health page shows of webhook delivery, over every organization and environment. */
export interface WebhookBacklog {
  /** Deliveries not yet delivered, failed for good or canceled (first tries and retries alike). */
  pending: number
  /** When the oldest of them was created; null when none waits. */
  oldestPendingSince: Date | null
  /** Enabled endpoints whose latest attempts failed (`failing_since` set). */
  failingEndpoints: number
  /** The earliest `failing_since` among them: the endpoint closest to being disabled. */
  oldestFailingSince: Date | null
  /** Endpoints the service disabled after failing for too long. */
  disabledForFailing: number
}

export async function webhookBacklog(db: Db): Promise<WebhookBacklog> {
  const [deliveries, failing, disabled] = await Promise.all([
    db
      .selectFrom('webhook_deliveries')
      .where('status', '=', 'pending')
      .select((eb) => [
        eb.fn.countAll<number>().as('n'),
        eb.fn.min<Date>('created_at').as('oldest'),
      ])
      .executeTakeFirst(),
    db
      .selectFrom('webhook_endpoints')
      .where('status', '=', 'enabled')
      .where('failing_since', 'is not', null)
      .select((eb) => [
        eb.fn.countAll<number>().as('n'),
        eb.fn.min<Date>('failing_since').as('oldest'),
      ])
      .executeTakeFirst(),
    db
      .selectFrom('webhook_endpoints')
      .where('status', '=', 'disabled')
      .where('disabled_reason', '=', 'failing')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirst(),
  ])
  const date = (v: Date | string | null | undefined) =>
    v === null || v === undefined ? null : new Date(v)
  return {
    pending: Number(deliveries?.n ?? 0),
    oldestPendingSince: date(deliveries?.oldest),
    failingEndpoints: Number(failing?.n ?? 0),
    oldestFailingSince: date(failing?.oldest),
    disabledForFailing: Number(disabled?.n ?? 0),
  }
}

/** One endpoint's deliveries over a window, for the console's home. */
export interface EndpointHealth {
  id: string
  url: string
  status: string
  /** Failing since (its latest attempts failed), or null. */
  failingSince: Date | null
  delivered: number
  failed: number
  pending: number
}

/**
 * The tenant's endpoints with their deliveries made since `since`, counted by state (the deliveries by id range on
 * `webhook_deliveries_endpoint_status`: ids sort by creation time). A canceled delivery counts as failed.
 */
export async function endpointHealth(
  db: Db,
  scope: { organizationId: string; environment: string },
  since: Date,
): Promise<EndpointHealth[]> {
  const { rows } = await sql<{
    id: string
    url: string
    status: string
    failing_since: Date | string | null
    delivered: string
    failed: string
    pending: string
  }>`
    SELECT e.id, e.url, e.status, e.failing_since,
      (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.status = 'delivered'
        AND d.id >= ${lowestIdAt('whd', since)}) AS delivered,
      (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id
        AND d.status IN ('failed', 'canceled') AND d.id >= ${lowestIdAt('whd', since)}) AS failed,
      (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.status = 'pending'
        AND d.id >= ${lowestIdAt('whd', since)}) AS pending
    FROM webhook_endpoints e
    WHERE e.organization_id = ${scope.organizationId} AND e.environment = ${scope.environment}
    ORDER BY e.id LIMIT 20`.execute(db)
  return rows.map((r) => ({
    id: r.id,
    url: r.url,
    status: r.status,
    failingSince: r.failing_since === null ? null : new Date(r.failing_since),
    delivered: Number(r.delivered),
    failed: Number(r.failed),
    pending: Number(r.pending),
  }))
}
