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
import { onClock } from '../../lib/object-clock.js'
import { json } from '../../db/types.js'
import { presentAccount, requireAccount, type AccountView } from '../accounts/index.js'
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
import { loadBalance } from './balance-section.js'
import { loadCards, type CardEntry, type CardNotice } from './cards-section.js'
import { COUNTRY_NAMES } from './countries.js'
import * as repo from './repo.js'
import { linkSections } from './sections.js'
import type { H5Section } from './types.js'

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
  sections: H5Section[]
  allow_purchases: boolean
  pay_from_account_id: string | null
  expires_at: string
  created_at: string
}

export interface LinkCreateBody {
  cardholder_id: string
  sections?: string[]
  allow_purchases?: boolean
  pay_from_account_id?: string
}

/**
 * The account the page's purchases debit: one of the cardholder's own, on a link that allows purchases. Its balance
 * and currency are judged at each purchase (as an order's `account_id` is), not now.
 */
async function payingAccount(
  deps: AppDeps,
  ctx: RequestCtx,
  body: LinkCreateBody,
  cardholderId: string,
): Promise<string | null> {
  if (body.pay_from_account_id === undefined) return null
  if (body.allow_purchases !== true)
    throw new ApiError('invalid_parameter', {
      param: 'pay_from_account_id',
      message: 'pay_from_account_id pays for purchases on the page: set allow_purchases to true.',
    })
  const account = await requireAccount(
    deps.db,
    ctx,
    body.pay_from_account_id,
    'pay_from_account_id',
  )
  if (account.cardholder_id !== cardholderId)
    throw new ApiError('account_cardholder_mismatch', {
      param: 'pay_from_account_id',
      message: `Account ${account.id} belongs to another cardholder than ${cardholderId}.`,
    })
  return account.id
}

/** Creates a link for one cardholder. The 256-bit token lives only in the URL returned here; the service keeps its SHA-256. */
export async function createLink(
  deps: AppDeps,
  ctx: RequestCtx,
  body: LinkCreateBody,
): Promise<H5LinkView> {
  const sections = linkSections(ctx, body.sections)
  if (body.allow_purchases === true && !sections.includes('esims'))
    throw new ApiError('invalid_parameter', {
      param: 'allow_purchases',
      message: 'Purchases are made in the esims section: add "esims" to sections.',
    })
  const cardholder = await requireCardholder(deps.db, ctx, body.cardholder_id, 'cardholder_id')
  const payFrom = await payingAccount(deps, ctx, body, cardholder.id)
  const token = randomBytes(32).toString('base64url')
  const now = deps.clock.now()
  const row: repo.LinkRow = {
    id: newId('h5'),
    organization_id: ctx.organizationId,
    environment: ctx.environment,
    cardholder_id: cardholder.id,
    token_hash: sha256Hex(token),
    allow_purchases: body.allow_purchases ?? false,
    sections,
    pay_from_account_id: payFrom,
    // Card details are shown only on a link made by a client that could show them itself.
    card_details: sections.includes('cards') && ctx.scopes.has('cards:secrets'),
    expires_at: new Date(now.getTime() + LINK_LIFETIME_MS),
    created_at: now,
  }
  // The link commits with the request's answer.
  await withTx(deps.db, (trx) => repo.insertLink(trx, { ...row, sections: json(sections) }))
  return {
    object: 'esim_h5_link',
    id: row.id,
    url: `${deps.config.baseUrl}/h5/${token}`,
    cardholder_id: row.cardholder_id,
    sections,
    allow_purchases: row.allow_purchases,
    pay_from_account_id: payFrom,
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
  /** The sections the link shows, in order. */
  sections: H5Section[]
  esims: EsimCard[]
  allowPurchases: boolean
  /** The account purchases debit, when the link names one (null: billed to the organization). */
  payFrom: AccountView | null
  expiresAt: Date
  countries: { code: string; name: string }[]
  country: string | null
  packages: PackageView[]
  cards: CardEntry[]
  accounts: AccountView[]
  /**
   * What the cardholder's objects read as now: its sandbox clock's time when it is on one (an eSIM's days left and
   * alerts count on it, docs/sandbox-clocks.md), else wall time.
   */
  now: Date
}

/** The eSIM section: eSIMs with QR codes and, when purchases are allowed, offers and the plans on sale. */
async function loadEsims(
  deps: AppDeps,
  ctx: RequestCtx,
  link: repo.LinkRow,
  cardholder: { id: string; address: unknown },
  requestedCountry: string | null,
  now: Date,
): Promise<Pick<PageData, 'esims' | 'countries' | 'country' | 'packages' | 'payFrom'>> {
  const esims = await cardholderEsims(deps, ctx, cardholder.id)
  const settings = await getAlertSettings(deps, ctx)
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
  const payFrom =
    link.allow_purchases && link.pay_from_account_id
      ? presentAccount(await requireAccount(deps.db, ctx, link.pay_from_account_id))
      : null
  return { esims: cards, countries, country, packages, payFrom }
}

/** Everything the page shows for the link's cardholder, section by section (only the link's sections are read). */
export async function loadPage(
  deps: AppDeps,
  link: repo.LinkRow,
  requestId: string,
  requestedCountry: string | null,
): Promise<PageData> {
  const ctx = linkCtx(link, requestId)
  const cardholder = await requireCardholder(deps.db, ctx, link.cardholder_id)
  const sections = link.sections
  // The cardholder's eSIMs live on its sandbox clock, when it is on one.
  const now = sections.includes('esims')
    ? (await onClock(deps, cardholder.clock_id)).clock.now()
    : deps.clock.now()
  const esims = sections.includes('esims')
    ? await loadEsims(deps, ctx, link, cardholder, requestedCountry, now)
    : { esims: [], countries: [], country: null, packages: [], payFrom: null }
  return {
    firstName: cardholder.first_name,
    sections,
    allowPurchases: link.allow_purchases,
    expiresAt: link.expires_at,
    ...esims,
    cards: sections.includes('cards') ? await loadCards(deps, ctx, link) : [],
    accounts: sections.includes('balance') ? await loadBalance(deps, ctx, cardholder.id) : [],
    now,
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
  | 'insufficient_funds'
  | 'payment_unavailable'
  | 'error'
  | CardNotice

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
    case 'insufficient_funds':
      return 'insufficient_funds'
    case 'account_blocked':
    case 'account_not_found':
    case 'account_not_provisioned':
    case 'account_cardholder_mismatch':
    case 'currency_mismatch':
      return 'payment_unavailable'
    case 'processor_unavailable': {
      const orders = await listOrders(deps, ctx, { reference, limit: 1 })
      return orders.data.length > 0 ? 'pending' : 'network'
    }
    default:
      return 'error'
  }
}

/**
 * Buys a package for the link's cardholder: debited from the link's `pay_from_account_id` (converted into its
 * currency when the price is in another, as an order's `account_id` is), or billed to the organization. `nonce`
 * comes from the form: a double submit is one order.
 */
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
      ...payingFrom(link),
    })
    return 'ordered'
  } catch (err) {
    return noticeFor(deps, ctx, err, reference)
  }
}

/** The account a purchase on the page debits, in an order's terms; none: the organization is billed. */
function payingFrom(link: repo.LinkRow): { account_id?: string } {
  return link.pay_from_account_id ? { account_id: link.pay_from_account_id } : {}
}

/** Buys an add-on for one of the cardholder's own eSIMs, paid as `buyPackage` pays. */
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
    await purchaseTopUp(deps, ctx, esim.id, {
      top_up_id: topUpId,
      reference,
      ...payingFrom(link),
    })
    return 'topped_up'
  } catch (err) {
    return noticeFor(deps, ctx, err, reference)
  }
}
