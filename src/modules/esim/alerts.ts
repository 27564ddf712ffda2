import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import type { RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { iso } from '../../http/ownership.js'
import * as repo from './alerts-repo.js'
import type { AlertSettingsRequest, EsimAlertSettings } from './schemas.js'

export type AlertSettingsView = Static<typeof EsimAlertSettings>

/** What applies while an organization has set nothing: a warning at 80 % and at 100 % of each package, and a day before the validity ends. */
export const DEFAULT_ALERTS = {
  usage_thresholds_pct: [80, 100],
  validity_warning_hours: [24],
} as const

/**
 * The order rules the schema cannot state: usage thresholds ascending, warning hours descending (each list in the
 * order its alerts fire), no duplicates. `param` names the list (`alert_settings.usage_thresholds_pct`).
 */
export function checkAlertLists(
  lists: { usage_thresholds_pct?: number[] | null; validity_warning_hours?: number[] | null },
  prefix = '',
): void {
  const strictly = (values: number[], ascending: boolean) =>
    values.every((v, i) => i === 0 || (ascending ? v > values[i - 1] : v < values[i - 1]))
  const usage = lists.usage_thresholds_pct
  if (usage && !strictly(usage, true))
    throw new ApiError('invalid_parameter', {
      param: `${prefix}usage_thresholds_pct`,
      message: `Usage thresholds are listed in ascending order without duplicates (e.g. [50, 80, 90, 100]); got [${usage.join(', ')}].`,
    })
  const hours = lists.validity_warning_hours
  if (hours && !strictly(hours, false))
    throw new ApiError('invalid_parameter', {
      param: `${prefix}validity_warning_hours`,
      message: `Warning hours are listed in descending order (the order they fire) without duplicates (e.g. [72, 24]); got [${hours.join(', ')}].`,
    })
}

function present(row: repo.AlertSettingsRow | undefined): AlertSettingsView {
  return {
    object: 'esim_alert_settings',
    usage_thresholds_pct: row ? row.usage_thresholds_pct : [...DEFAULT_ALERTS.usage_thresholds_pct],
    validity_warning_hours: row
      ? row.validity_warning_hours
      : [...DEFAULT_ALERTS.validity_warning_hours],
    updated_at: iso(row?.updated_at),
  }
}

export async function getAlertSettings(deps: AppDeps, ctx: RequestCtx): Promise<AlertSettingsView> {
  return present(await repo.findAlertSettings(deps.db, ctx.organizationId, ctx.environment))
}

/** Replaces the organization's settings in the caller's environment; eSIMs with their own keep them. */
export async function putAlertSettings(
  deps: AppDeps,
  ctx: RequestCtx,
  body: Static<typeof AlertSettingsRequest>,
): Promise<AlertSettingsView> {
  checkAlertLists(body)
  const now = deps.clock.now()
  const row = await withTx(deps.db, (trx) =>
    repo.putAlertSettings(
      trx,
      {
        organization_id: ctx.organizationId,
        environment: ctx.environment,
        usage_thresholds_pct: body.usage_thresholds_pct,
        validity_warning_hours: body.validity_warning_hours,
        updated_at: now,
      },
      now,
    ),
  )
  return present(row)
}
