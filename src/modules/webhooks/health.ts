import type { Db } from '../../db/types.js'
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
