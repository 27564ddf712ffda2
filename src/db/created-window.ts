import { sql, type SelectQueryBuilder } from 'kysely'

/** [from, to) of one organization and environment by creation time; `after` continues from the last row of the previous batch. */
export interface CreatedWindow {
  organizationId: string
  environment: string
  from: Date
  to: Date
  after?: { createdAt: Date; id: string }
  limit: number
}

/**
 * One keyset batch of a tenant's rows created in the window, oldest first (reports read sources this way).
 * The table needs `organization_id`, `environment`, `created_at` and `id`, indexed in that order.
 */
export function createdInWindow<QB extends SelectQueryBuilder<any, any, any>>(
  qb: QB,
  w: CreatedWindow,
): QB {
  let q = (qb as SelectQueryBuilder<any, any, any>)
    .where('organization_id', '=', w.organizationId)
    .where('environment', '=', w.environment)
    .where('created_at', '>=', w.from)
    .where('created_at', '<', w.to)
  if (w.after)
    q = q.where(
      sql<boolean>`(created_at, id) > (${w.after.createdAt}::timestamptz, ${w.after.id}::text)`,
    )
  return q.orderBy('created_at').orderBy('id').limit(w.limit) as QB
}
