import { randomBytes } from 'node:crypto'
import type { AppDeps } from '../../app-deps.js'
import type { Environment } from '../../config.js'
import type { PurgeOptions } from '../../db/purge.js'
import { json } from '../../db/types.js'
import { withTx } from '../../db/tx.js'
import { scopeOfRow, type RequestCtx } from '../../http/context.js'
import { ApiError, isApiError } from '../../http/errors.js'
import { iso } from '../../http/ownership.js'
import { safeEqual, sha256Hex } from '../../lib/crypto.js'
import { newId } from '../../lib/ids.js'
import { callProcessor, recordOutcome } from '../../processors/calls.js'
import { emit } from '../events/index.js'
import { audited, recordSecretUse } from './audit.js'
import { frameRefusal, type FrameHeaders } from './reveal-frame.js'
import { presentCard } from './present.js'
import * as repo from './repo.js'
import { REVEAL_FIELDS, type RevealSessionCreateBody, type RevealSessionView } from './schemas.js'
import { assertMove, requireCard, requireCardOnClock, requireCardProgram } from './service.js'
import type { RevealField } from './types.js'

/** Where the hosted pages are served, under BASE_URL: `/card-reveal/{token}`. */
export const REVEAL_PAGE_PATH = '/card-reveal'
/** How long a session waits to be opened when the request names no `expires_in`, and the most it may ask. */
export const REVEAL_DEFAULT_EXPIRES_IN_S = 300
export const REVEAL_MAX_EXPIRES_IN_S = 600
/**
 * Sessions are kept a day past their expiry, then purged (with the PIN keys, by `cards.purge_pin_keys`): until then a
 * used or expired link answers its own page ("already shown", "expired"), after that the "does not work" one.
 */
export const REVEAL_SESSION_RETENTION_MS = 24 * 60 * 60 * 1000

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/
/** A host name as URL writes it (lower case, IDNs in punycode): letters, digits, dots and hyphens only. */
const HOST_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]'])

function badOrigin(message: string): ApiError {
  return new ApiError('invalid_parameter', { param: 'target_origin', message })
}

/**
 * The origin the page may be framed by, as the browser will name it (`https://app.example.com`, a port only when it
 * is not the scheme's default). An https origin; in the sandbox also http on localhost (127.0.0.1, [::1]). No path
 * (a lone `/` is allowed), query, fragment or credentials, no wildcard: the value goes into the page's
 * `frame-ancestors`, so only a host name of letters, digits, dots and hyphens passes.
 */
export function revealOrigin(value: string, environment: Environment): string {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw badOrigin('target_origin must be an origin such as https://app.example.com.')
  }
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/')
    throw badOrigin(
      'target_origin must be an origin only (scheme, host and port): no path, query, fragment or credentials.',
    )
  if (value.includes('*') || !(HOST_NAME.test(url.hostname) || LOCAL_HOSTS.has(url.hostname)))
    throw badOrigin('target_origin must name one host: letters, digits, dots and hyphens.')
  const local = LOCAL_HOSTS.has(url.hostname)
  if (url.protocol === 'http:' && local && environment === 'sandbox') return url.origin
  if (url.protocol !== 'https:')
    throw badOrigin(
      environment === 'sandbox'
        ? 'target_origin must be https (http only for localhost in the sandbox).'
        : 'target_origin must be https.',
    )
  return url.origin
}

/** The fields asked for, in the page's display order. */
function orderedFields(fields: readonly RevealField[] | undefined): RevealField[] {
  const asked = new Set(fields ?? REVEAL_FIELDS)
  return REVEAL_FIELDS.filter((f) => asked.has(f))
}

function presentSession(row: repo.RevealSessionRow, url: string): RevealSessionView {
  return {
    object: 'card_reveal_session',
    id: row.id,
    card_id: row.card_id,
    url,
    target_origin: row.target_origin,
    fields: row.fields,
    expires_at: iso(row.expires_at)!,
    created_at: iso(row.created_at)!,
  }
}

/**
 * A single-use hosted page showing the card's details in an iframe on `target_origin`. Only an active or inactive
 * card. The 256-bit token lives only in the URL answered here (and in the encrypted stored answer of the request's
 * Idempotency-Key); the service keeps its SHA-256. Nothing about the card's number is read now: the page reads it
 * from the processor when it is viewed. Audited; emits no event.
 */
export async function createRevealSession(
  deps: AppDeps,
  ctx: RequestCtx,
  cardId: string,
  body: RevealSessionCreateBody,
): Promise<RevealSessionView> {
  return audited(deps, ctx, cardId, 'reveal_session.create', async () => {
    const targetOrigin = revealOrigin(body.target_origin, ctx.environment)
    return insertSession(deps, ctx, cardId, targetOrigin, body)
  })
}

/** The service's own origin, as the browser names it: the one BASE_URL gives. */
export function serviceOrigin(deps: AppDeps): string {
  return new URL(deps.config.baseUrl).origin
}

/**
 * A session for a page of the service itself (the traveller page, docs/traveller-page.md): framed by the service's
 * own origin, every field, the default lifetime. The caller has checked that the page may show this card; the card
 * must still be active or inactive. Audited under the caller's client, like the API's.
 */
export async function createOwnRevealSession(
  deps: AppDeps,
  ctx: RequestCtx,
  cardId: string,
): Promise<RevealSessionView> {
  return audited(deps, ctx, cardId, 'reveal_session.create', () =>
    insertSession(deps, ctx, cardId, serviceOrigin(deps), {}),
  )
}

async function insertSession(
  deps: AppDeps,
  ctx: RequestCtx,
  cardId: string,
  targetOrigin: string,
  body: Pick<RevealSessionCreateBody, 'fields' | 'expires_in'>,
): Promise<RevealSessionView> {
  const card = await requireCard(deps.db, ctx, cardId)
  assertMove(card, 'reveal')
  const token = randomBytes(32).toString('base64url')
  const now = deps.clock.now()
  const expiresIn = body.expires_in ?? REVEAL_DEFAULT_EXPIRES_IN_S
  const row = await withTx(deps.db, (trx) =>
    repo.insertRevealSession(trx, {
      id: newId('crs', now),
      organization_id: card.organization_id,
      environment: card.environment,
      card_id: card.id,
      client_id: ctx.clientId,
      token_hash: sha256Hex(token),
      target_origin: targetOrigin,
      fields: json(orderedFields(body.fields)),
      expires_at: new Date(now.getTime() + expiresIn * 1000),
      used_at: null,
      created_at: now,
    }),
  )
  return presentSession(row, `${deps.config.baseUrl}${REVEAL_PAGE_PATH}/${token}`)
}

/** Deletes sessions more than `REVEAL_SESSION_RETENTION_MS` past their expiry, every card's; answers how many. */
export async function purgeExpiredRevealSessions(
  deps: AppDeps,
  options?: PurgeOptions,
): Promise<number> {
  return repo.purgeRevealSessionsExpiredBefore(
    deps.db,
    new Date(deps.clock.now().getTime() - REVEAL_SESSION_RETENTION_MS),
    options,
  )
}

/** What the page shows: the fields asked for, as the processor gave them. */
export interface RevealedValues {
  number?: string
  cvc?: string
  /** `MM/YY` */
  expiry?: string
}

/** What a request for a page gets; only `shown` carries card data. */
export type RevealOutcome =
  | { kind: 'unknown' }
  | { kind: 'used' | 'expired' | 'frame_refused'; session: repo.RevealSessionRow }
  | { kind: 'unavailable'; session: repo.RevealSessionRow; code: string }
  | { kind: 'shown'; session: repo.RevealSessionRow; values: RevealedValues }

/** The audit outcome of a view refused before anything was read. */
const REFUSED: Record<'used' | 'expired' | 'frame_refused', string> = {
  used: 'reveal_session_used',
  expired: 'reveal_session_expired',
  frame_refused: 'reveal_frame_refused',
}

/** A view acts for the session's organization and environment, recorded under the client that created it. */
function sessionCtx(session: repo.RevealSessionRow, requestId: string): RequestCtx {
  return { requestId, ...scopeOfRow(session), clientId: session.client_id, scopes: new Set() }
}

/**
 * Opens a hosted page. The token is found by its SHA-256 (the index compares digests, never the token) and the
 * digest is compared again in constant time. The first request uses the session, in one statement that only an
 * unused, unexpired session passes (`useRevealSession`): any later or concurrent request gets "already shown", also
 * when the first was refused. A request the browser says is not the iframe on the session's origin (`frameRefusal`)
 * uses it up and shows nothing. Then the card is read again (it must still be active or inactive), the processor
 * reveals the details, and `card.details_viewed` is emitted. Every request for a known session is audited
 * (`details.view`), refused or not.
 */
export async function openRevealPage(
  deps: AppDeps,
  token: string,
  visit: { requestId: string; headers: FrameHeaders },
): Promise<RevealOutcome> {
  if (!TOKEN_SHAPE.test(token)) return { kind: 'unknown' }
  const digest = sha256Hex(token)
  const found = await repo.findRevealSessionByTokenHash(deps.db, digest)
  if (!found || !safeEqual(found.token_hash, digest)) return { kind: 'unknown' }
  const ctx = sessionCtx(found, visit.requestId)
  const now = deps.clock.now()
  const session = await repo.useRevealSession(deps.db, found.id, now)
  const refusal: 'used' | 'expired' | 'frame_refused' | null = !session
    ? found.used_at === null && found.expires_at.getTime() <= now.getTime()
      ? 'expired'
      : 'used'
    : frameRefusal(visit.headers, found.target_origin, serviceOrigin(deps))
      ? 'frame_refused'
      : null
  if (refusal) {
    await recordSecretUse(deps, ctx, found.card_id, 'details.view', REFUSED[refusal])
    return { kind: refusal, session: session ?? found }
  }
  try {
    const values = await audited(deps, ctx, found.card_id, 'details.view', () =>
      revealForSession(deps, session!, now),
    )
    return { kind: 'shown', session: session!, values }
  } catch (err) {
    if (isApiError(err)) return { kind: 'unavailable', session: session!, code: err.code }
    throw err
  }
}

/** The card as it is now, its details from the processor, and the event: the page's only read of card data. */
async function revealForSession(
  deps: AppDeps,
  session: repo.RevealSessionRow,
  now: Date,
): Promise<RevealedValues> {
  // The event names the card's sandbox clock, if any; the read itself is the service's, on wall time (`now`).
  const found = await requireCardOnClock(deps, scopeOfRow(session), session.card_id)
  const { card, clockId } = found
  assertMove(card, 'reveal')
  const processor = deps.processors.forProgram(await requireCardProgram(deps.db, card))
  const scope = scopeOfRow(card)
  const call = await callProcessor(
    deps,
    scope,
    { processor: processor.name, operation: 'reveal_details', subjectId: card.id },
    () => processor.revealDetails(scope, card.processor_reference!),
  )
  const fields = session.fields
  await withTx(deps.db, async (trx) => {
    await recordOutcome(trx, call.operationId, 'succeeded', now)
    await emit(trx, { ...scope, clockId }, 'card.details_viewed', presentCard(card), now, {
      fields,
      reveal_session_id: session.id,
    })
  })
  const details = call.result
  return {
    ...(fields.includes('number') ? { number: details.number } : {}),
    ...(fields.includes('cvc') ? { cvc: details.cvc } : {}),
    ...(fields.includes('expiry')
      ? {
          expiry: `${String(details.expMonth).padStart(2, '0')}/${String(details.expYear % 100).padStart(2, '0')}`,
        }
      : {}),
  }
}
