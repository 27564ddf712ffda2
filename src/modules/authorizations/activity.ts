import { sql } from 'kysely'
import type { Db } from '../../db/types.js'
import type { Scope } from '../../http/context.js'
import { lowestIdAt } from '../../lib/ids.js'
import './types.js'

/** One UTC day of a tenant's authorization decisions. */
export interface AuthorizationDay {
  /** `YYYY-MM-DD` (UTC). */
  day: string
  approved: number
  declined: number
}

/** What the console's home draws of a tenant's authorizations: each day's decisions, and why declines declined. */
export interface AuthorizationActivity {
  /** Every day of the window, oldest first, days without decisions included. */
  days: AuthorizationDay[]
  /** Declines over the window by reason, most frequent first. */
  declines: { reason: string; count: number }[]
  /** Approved amounts over the window, by account currency (minor units). */
  approvedAmounts: { currency: string; amount: number }[]
}

const DAY_MS = 24 * 60 * 60 * 1000

/**
 * The tenant's decisions of the last `days` UTC days (today included), read by id range on `authorizations_scope`
 * (ids sort by creation time): two aggregate reads, however many cards.
 */
export async function authorizationActivity(
  db: Db,
  scope: Scope,
  now: Date,
  days = 30,
): Promise<AuthorizationActivity> {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())
  const from = new Date(today - (days - 1) * DAY_MS)
  const inWindow = sql`organization_id = ${scope.organizationId}
    AND environment = ${scope.environment} AND id >= ${lowestIdAt('auth', from)}`
  const [perDay, perReason] = await Promise.all([
    sql<{ day: string; currency: string; approved: string; declined: string; amount: string }>`
      SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, currency,
        count(*) FILTER (WHERE approved) AS approved, count(*) FILTER (WHERE NOT approved) AS declined,
        coalesce(sum(amount) FILTER (WHERE approved), 0) AS amount
      FROM authorizations WHERE ${inWindow} GROUP BY 1, 2`.execute(db),
    sql<{ reason: string | null; count: string }>`
      SELECT decline_reason AS reason, count(*) AS count
      FROM authorizations WHERE ${inWindow} AND NOT approved
      GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10`.execute(db),
  ])
  const byDay = new Map<string, AuthorizationDay>()
  for (let i = 0; i < days; i++) {
    const day = new Date(from.getTime() + i * DAY_MS).toISOString().slice(0, 10)
    byDay.set(day, { day, approved: 0, declined: 0 })
  }
  const amounts = new Map<string, number>()
  for (const row of perDay.rows) {
    const d = byDay.get(row.day)
    if (d) {
      d.approved += Number(row.approved)
      d.declined += Number(row.declined)
    }
    amounts.set(row.currency, (amounts.get(row.currency) ?? 0) + Number(row.amount))
  }
  return {
    days: [...byDay.values()],
    declines: perReason.rows.map((r) => ({
      reason: r.reason ?? 'unknown',
      count: Number(r.count),
    })),
    approvedAmounts: [...amounts]
      .filter(([, amount]) => amount > 0)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([currency, amount]) => ({ currency, amount })),
  }
}
