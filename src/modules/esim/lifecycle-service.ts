import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import type { Db } from '../../db/types.js'
import type { RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { requireOwned } from '../../http/ownership.js'
import { onClock } from '../../lib/object-clock.js'
import { emit, type EventDetails, type EventType } from '../events/index.js'
import { checkAlertLists } from './alerts.js'
import { setEsimAlertOverrides } from './alerts-repo.js'
import { checkAutoTopUp } from './auto-top-up.js'
import { setAutoTopUp } from './auto-top-up-repo.js'
import * as repo from './esims-repo.js'
import { presentEsim, presentEsimSummary, requireEsim, type EsimView } from './esims-service.js'
import type { EsimUpdateRequest } from './schemas.js'
import { checkValidityOf } from './validity.js'

/** The eSIM under its row lock, in the caller's scope (another organization's answers like a missing one). */
export async function lockOwnedEsim(trx: Db, ctx: RequestCtx, id: string): Promise<repo.EsimRow> {
  return requireOwned(await repo.lockEsim(trx, id), ctx, 'esim_not_found')
}

/** Nothing acts on a canceled eSIM. */
export function refuseCanceled(esim: repo.EsimRow): void {
  if (esim.status === 'canceled')
    throw new ApiError('esim_invalid_state', { message: `eSIM ${esim.id} is canceled.` })
}

/** Emits one event about the eSIM as the transaction has left it. */
export async function emitAboutEsim(
  trx: Db,
  ctx: RequestCtx,
  esimId: string,
  type: EventType,
  now: Date,
  details?: EventDetails,
): Promise<void> {
  const fresh = (await repo.findEsim(trx, esimId))!
  const view = presentEsimSummary(fresh, await repo.bundlesOf(trx, [esimId]), now)
  await emit(trx, { ...ctx, clockId: fresh.clock_id }, type, view, now, details)
}

async function present(trx: Db, esimId: string, now: Date): Promise<EsimView> {
  const fresh = (await repo.findEsim(trx, esimId))!
  return presentEsim(fresh, await repo.bundlesOf(trx, [esimId]), now)
}

/**
 * `PATCH /v1/esim/esims/{id}`: the eSIM's own alert settings (each field given replaces its own; null drops both).
 * New warning hours apply at once: a warning already due is sent now; new usage thresholds already passed are
 * announced at the next usage report. `auto_top_up` replaces the auto top-up settings (null: off); they apply from
 * the next crossing of the trigger.
 */
export async function updateEsim(
  deps: AppDeps,
  ctx: RequestCtx,
  esimId: string,
  body: Static<typeof EsimUpdateRequest>,
): Promise<EsimView> {
  const esim = await requireEsim(deps.db, ctx, esimId)
  if (body.alert_settings) checkAlertLists(body.alert_settings, 'alert_settings.')
  const autoTopUp =
    body.auto_top_up === undefined || body.auto_top_up === null
      ? body.auto_top_up
      : await checkAutoTopUp(deps, ctx, esim, body.auto_top_up)
  const now = (await onClock(deps, esim.clock_id)).clock.now()
  return withTx(deps.db, async (trx) => {
    const locked = await lockOwnedEsim(trx, ctx, esim.id)
    refuseCanceled(locked)
    if (autoTopUp !== undefined) await setAutoTopUp(trx, locked.id, autoTopUp, now)
    if (body.alert_settings !== undefined) {
      await setEsimAlertOverrides(
        trx,
        locked.id,
        body.alert_settings === null
          ? { usage_thresholds_pct: null, validity_warning_hours: null }
          : body.alert_settings,
        now,
      )
      await checkValidityOf(trx, [locked.id], now, locked.clock_id ?? null)
    }
    return present(trx, locked.id, now)
  })
}

/** Marks the profile installed (once): `esim.installed`. Answers whether it was not yet. */
async function markInstalled(
  trx: Db,
  ctx: RequestCtx,
  esim: repo.EsimRow,
  now: Date,
): Promise<boolean> {
  if (esim.installed_at !== null) return false
  await repo.setInstalled(trx, esim.id, now)
  await emitAboutEsim(trx, ctx, esim.id, 'esim.installed', now)
  return true
}

/** Sandbox: the network reports the profile installed on a device (`esim.installed`, once). */
export async function simulateInstall(
  deps: AppDeps,
  ctx: RequestCtx,
  esimId: string,
): Promise<EsimView> {
  const esim = await requireEsim(deps.db, ctx, esimId)
  const now = (await onClock(deps, esim.clock_id)).clock.now()
  return withTx(deps.db, async (trx) => {
    const locked = await lockOwnedEsim(trx, ctx, esim.id)
    refuseCanceled(locked)
    await markInstalled(trx, ctx, locked, now)
    return present(trx, locked.id, now)
  })
}

/**
 * Sandbox: the device attaches to a network in `country` (installed, if it was not yet). A new country is recorded
 * and announced (`esim.country_changed` with the previous one); the same country again changes nothing.
 */
export async function simulateLocation(
  deps: AppDeps,
  ctx: RequestCtx,
  esimId: string,
  country: string,
): Promise<EsimView> {
  const esim = await requireEsim(deps.db, ctx, esimId)
  const now = (await onClock(deps, esim.clock_id)).clock.now()
  const code = country.toUpperCase()
  return withTx(deps.db, async (trx) => {
    const locked = await lockOwnedEsim(trx, ctx, esim.id)
    refuseCanceled(locked)
    await markInstalled(trx, ctx, locked, now)
    if (locked.country !== code) {
      await repo.setCountry(trx, locked.id, code, now)
      await emitAboutEsim(trx, ctx, locked.id, 'esim.country_changed', now, {
        country: code,
        previous_country: locked.country,
      })
    }
    return present(trx, locked.id, now)
  })
}
