import { randomBytes } from 'node:crypto'
import QRCode from 'qrcode'
import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import type { PurgeOptions } from '../../db/purge.js'
import { scopeOfRow, type RequestCtx } from '../../http/context.js'
import { ApiError, isApiError } from '../../http/errors.js'
import { iso } from '../../http/ownership.js'
import { deriveKey, hmacSha256, safeEqual, sha256Hex } from '../../lib/crypto.js'
import { newId } from '../../lib/ids.js'
import { requireCardholder } from '../cardholders/index.js'
import {
  cardholderEsims,
  createOrder,
  getAlertSettings,
  listOrders,
  listPackages,
  offersForEsim,
  purchaseTopUp,
  requireEsim,
  type EsimView,
  type PackageView,
  type TopUpView,
} from '../esim/index.js'
import { COUNTRY_NAMES } from './countries.js'
import * as repo from './repo.js'

/** A link is opened any number of times for 15 minutes, then answers the expired page. */
export const LINK_LIFETIME_MS = 15 * 60 * 1000
/**
 * How long an expired link is kept: for a week after it expires, opening it still answers the "expired" page
 * (410, ask for a new link) instead of "not found" (404); after that it is purged and reads as unknown.
 */
export const LINK_GRACE_MS = 7 * 24 * 60 * 60 * 1000
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/

export interface H5LinkView {
  object: 'esim_h5_link'
  id: string
  url: string
  cardholder_id: string
  allow_purchases: boolean
  expires_at: string
  created_at: string
}

/** Creates a link for one cardholder. The 256-bit token lives only in the URL returned here; the service keeps its SHA-256. */
export async function createLink(
  deps: AppDeps,
  ctx: RequestCtx,
  body: { cardholder_id: string; allow_purchases?: boolean },
): Promise<H5LinkView> {
  const cardholder = await requireCardholder(deps.db, ctx, body.cardholder_id, 'cardholder_id')
  const token = randomBytes(32).toString('base64url')
  const now = deps.clock.now()
  const row: repo.LinkRow = {
    id: newId('h5'),
    organization_id: ctx.organizationId,
    environment: ctx.environment,
    cardholder_id: cardholder.id,
    token_hash: sha256Hex(token),
    allow_purchases: body.allow_purchases ?? false,
    expires_at: new Date(now.getTime() + LINK_LIFETIME_MS),
    created_at: now,
  }
  await withTx(deps.db, (trx) => repo.insertLink(trx, row)) // the link commits with the request's answer
  return {
    object: 'esim_h5_link',
    id: row.id,
    url: `${deps.config.baseUrl}/h5/${token}`,
    cardholder_id: row.cardholder_id,
    allow_purchases: row.allow_purchases,
    expires_at: iso(row.expires_at)!,
    created_at: iso(row.created_at)!,
  }
}

export type Resolved = { status: 'valid' | 'expired'; link: repo.LinkRow } | { status: 'unknown' }

export async function resolveLink(deps: AppDeps, token: string): Promise<Resolved> {
  if (!TOKEN_SHAPE.test(token)) return { status: 'unknown' }
  const link = await repo.findLinkByTokenHash(deps.db, sha256Hex(token))
  if (!link) return { status: 'unknown' }
  return {
    status: link.expires_at.getTime() <= deps.clock.now().getTime() ? 'expired' : 'valid',
    link,
  }
}

/** Deletes links more than `LINK_GRACE_MS` past their expiry; answers how many. */
export async function purgeExpiredLinks(deps: AppDeps, options?: PurgeOptions): Promise<number> {
  return repo.purgeLinksExpiredBefore(
    deps.db,
    new Date(deps.clock.now().getTime() - LINK_GRACE_MS),
    options,
  )
}

/** The page acts for the link's organization and environment only, with no API token involved. */
export function linkCtx(link: repo.LinkRow, requestId: string): RequestCtx {
  return { requestId, ...scopeOfRow(link), clientId: `h5:${link.id}`, scopes: new Set() }
}

/** A fresh browser secret for the double-submit CSRF check (kept in an HttpOnly, SameSite=Strict cookie). */
export function newCsrfSecret(): string {
  return randomBytes(24).toString('base64url')
}

/** The form token: bound to the link and to this browser's secret, so a form from elsewhere cannot pass. */
export function csrfToken(deps: AppDeps, linkId: string, secret: string): string {
  return hmacSha256(deriveKey(deps.config.masterKey, 'h5-csrf'), `${linkId}.${secret}`).toString(
    'base64url',
  )
}

export function csrfValid(
  deps: AppDeps,
  linkId: string,
  secret: string | undefined,
  submitted: string | undefined,
): boolean {
  if (!secret || !submitted) return false
  return safeEqual(csrfToken(deps, linkId, secret), submitted)
}

export interface EsimCard {
  esim: EsimView
  qrSvg: string
  offers: TopUpView[]
  alerts: EsimAlerts
}

/**
 * What the page tells a traveller of an eSIM's alerts, by the settings that apply to it (its own, else the
 * organization's): the highest usage threshold its current package has reached, and the hours left once its validity
 * ends within a warning (null: nothing to tell).
 */
export interface EsimAlerts {
  reachedPct: number | null
  endsInHours: number | null
}

export function alertsOf(
  esim: EsimView,
  org: { usage_thresholds_pct: number[]; validity_warning_hours: number[] },
  now: Date,
): EsimAlerts {
  const thresholds = esim.alert_settings?.usage_thresholds_pct ?? org.usage_thresholds_pct
  const warnings = esim.alert_settings?.validity_warning_hours ?? org.validity_warning_hours
  const current = esim.packages.find((p) => p.status === 'running') ?? esim.packages.at(-1)
  const reached =
    current && current.data_mb !== null
      ? thresholds.filter((t) => current.data_used_mb * 100 >= t * current.data_mb!)
      : []
  const ms = esim.valid_until ? new Date(esim.valid_until).getTime() - now.getTime() : -1
  const hours = Math.ceil(ms / 3_600_000)
  return {
    reachedPct: reached.length > 0 ? Math.max(...reached) : null,
    endsInHours: ms > 0 && warnings.some((w) => hours <= w) ? hours : null,
  }
}
export interface PageData {
  firstName: string
  esims: EsimCard[]
  allowPurchases: boolean
  expiresAt: Date
  countries: { code: string; name: string }[]
  country: string | null
  packages: PackageView[]
}

/** Everything the page shows for the link's cardholder: eSIMs with QR codes and, when purchases are allowed, offers. */
export async function loadPage(
  deps: AppDeps,
  link: repo.LinkRow,
  requestId: string,
  requestedCountry: string | null,
): Promise<PageData> {
  const ctx = linkCtx(link, requestId)
  const cardholder = await requireCardholder(deps.db, ctx, link.cardholder_id)
  const esims = await cardholderEsims(deps, ctx, cardholder.id)
  const settings = await getAlertSettings(deps, ctx)
  const now = deps.clock.now()
  const cards: EsimCard[] = []
  for (const esim of esims) {
    const qrSvg = await QRCode.toString(esim.activation_code, {
      type: 'svg',
      errorCorrectionLevel: 'M',
      margin: 1,
    })
    cards.push({
      esim,
      qrSvg,
      offers: link.allow_purchases ? await offersForEsim(deps, ctx, esim.id) : [],
      alerts: alertsOf(esim, settings, now),
    })
  }
  const home = (cardholder.address as { country?: string } | null)?.country ?? null
  const country =
    requestedCountry && COUNTRY_NAMES[requestedCountry]
      ? requestedCountry
      : home && COUNTRY_NAMES[home]
        ? home
        : null
  let packages: PackageView[] = []
  if (link.allow_purchases) {
    const page = await listPackages(deps, ctx, {
      status: 'on_sale',
      limit: 100,
      ...(country ? { country } : { region: 'global' }),
    })
    packages = page.data.slice(0, 12)
  }
  const countries = Object.entries(COUNTRY_NAMES)
    .map(([code, name]) => ({ code, name }))
    .sort((a, b) => a.name.localeCompare(b.name))
  return {
    firstName: cardholder.first_name,
    esims: cards,
    allowPurchases: link.allow_purchases,
    expiresAt: link.expires_at,
    countries,
    country,
    packages,
  }
}

/** What the page tells the traveller after a purchase; a closed set, so nothing from the request is echoed. */
export type Notice =
  | 'ordered'
  | 'topped_up'
  | 'duplicate'
  | 'unavailable'
  | 'sold_out'
  | 'pending'
  | 'network'
  | 'top_up_unavailable'
  | 'error'

async function noticeFor(
  deps: AppDeps,
  ctx: RequestCtx,
  err: unknown,
  reference: string,
): Promise<Notice> {
  if (!isApiError(err)) throw err
  switch (err.code) {
    case 'esim_order_reference_exists':
      return 'duplicate'
    case 'esim_package_unavailable':
    case 'esim_package_not_found':
      return 'unavailable'
    case 'esim_inventory_exhausted':
      return 'sold_out'
    case 'esim_top_up_unavailable':
      return 'top_up_unavailable'
    case 'processor_unavailable': {
      const orders = await listOrders(deps, ctx, { reference, limit: 1 })
      return orders.data.length > 0 ? 'pending' : 'network'
    }
    default:
      return 'error'
  }
}

/** Buys a package for the link's cardholder (the organization is billed). `nonce` comes from the form: a double submit is one order. */
export async function buyPackage(
  deps: AppDeps,
  link: repo.LinkRow,
  requestId: string,
  packageId: string,
  nonce: string,
): Promise<Notice> {
  const ctx = linkCtx(link, requestId)
  const reference = `h5_${link.id}_${nonce}`
  try {
    await createOrder(deps, ctx, {
      package_id: packageId,
      reference,
      cardholder_id: link.cardholder_id,
    })
    return 'ordered'
  } catch (err) {
    return noticeFor(deps, ctx, err, reference)
  }
}

/** Buys an add-on for one of the cardholder's own eSIMs. */
export async function buyTopUp(
  deps: AppDeps,
  link: repo.LinkRow,
  requestId: string,
  esimId: string,
  topUpId: string,
  nonce: string,
): Promise<Notice> {
  const ctx = linkCtx(link, requestId)
  const reference = `h5_${link.id}_${nonce}`
  try {
    const esim = await requireEsim(deps.db, ctx, esimId)
    if (esim.cardholder_id !== link.cardholder_id) throw new ApiError('esim_not_found')
    await purchaseTopUp(deps, ctx, esim.id, { top_up_id: topUpId, reference })
    return 'topped_up'
  } catch (err) {
    return noticeFor(deps, ctx, err, reference)
  }
}
