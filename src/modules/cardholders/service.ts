import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import type { Db } from '../../db/types.js'
import { json } from '../../db/types.js'
import { isUniqueViolation, withTx } from '../../db/tx.js'
import type { RequestCtx, Scope } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { requireOwned } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { encryptField } from '../../lib/crypto.js'
import { isId, newId } from '../../lib/ids.js'
import { onClock } from '../../lib/object-clock.js'
import { emit } from '../events/index.js'
import { listPrograms } from '../programs/index.js'
import { addressChangeNeedsKyc, CLOCK_OF_CALLER } from './hooks.js'
import { mergeMetadata, sameMetadata } from './metadata.js'
import { normalizeAddress, presentCardholder, sameAddress, type CardholderView } from './present.js'
import * as repo from './repo.js'
import type {
  CardholderCreateRequest,
  CardholderListQuery,
  CardholderUpdateRequest,
} from './schemas.js'
import type { AddressValue } from './types.js'

export type { CardholderRow } from './repo.js'
export type { CardholderView } from './present.js'
export {
  cardholderHasAddress,
  cardholderHasIdentityDocument,
  effectiveKycStatus,
  presentCardholder,
} from './present.js'
export { listCardholderCards } from './hooks.js'

type CreateBody = Static<typeof CardholderCreateRequest>
type UpdateBody = Static<typeof CardholderUpdateRequest>
type ListQuery = Static<typeof CardholderListQuery>

const IDENTITY_PURPOSE = 'cardholder-identity-document'

function sealIdentityDocument(deps: AppDeps, doc: { type: string; number: string }): string {
  return encryptField(
    deps.config.masterKey,
    IDENTITY_PURPOSE,
    JSON.stringify({ type: doc.type, number: doc.number }),
  )
}

/** Maps the uniqueness indexes onto the interface's 409, naming the field that collided. */
function uniquenessError(err: unknown): ApiError | null {
  if (isUniqueViolation(err, repo.EMAIL_CONSTRAINT)) {
    return new ApiError('cardholder_already_exists', {
      param: 'email',
      message: 'Another cardholder of your organization has this email.',
    })
  }
  if (isUniqueViolation(err, repo.PHONE_CONSTRAINT)) {
    return new ApiError('cardholder_already_exists', {
      param: 'phone_number',
      message: 'Another cardholder of your organization has this phone number.',
    })
  }
  return null
}

/**
 * The status a new cardholder starts in. A cardholder is not bound to a program, so: `pending` when every
 * program of the organization in this environment starts verification itself (kyc_initial_status pending),
 * otherwise `not_started` (see docs/cardholders-kyc.md).
 */
export async function initialKycStatus(
  deps: AppDeps,
  ctx: RequestCtx,
): Promise<'not_started' | 'pending'> {
  let seen = 0
  let page: PageParams = { limit: 100 }
  for (;;) {
    const list = await listPrograms(deps, ctx, page)
    for (const program of list.data) {
      seen++
      if (program.kyc_initial_status !== 'pending') return 'not_started'
    }
    if (!list.has_more || !list.next_cursor) break
    page = { limit: 100, starting_after: list.next_cursor }
  }
  return seen > 0 ? 'pending' : 'not_started'
}

export async function createCardholder(
  deps: AppDeps,
  ctx: RequestCtx,
  body: CreateBody,
): Promise<CardholderView> {
  const clockId = await clockOfNewCardholder(deps, ctx, body.clock_id)
  const kycStatus = await initialKycStatus(deps, ctx)
  // A cardholder joins its clock at creation: its own times are the clock's from the start.
  const now = (await onClock(deps, clockId)).clock.now()
  try {
    return await withTx(deps.db, async (trx) => {
      const row = await repo.insertCardholder(trx, {
        id: newId('chd'),
        organization_id: ctx.organizationId,
        environment: ctx.environment,
        type: 'individual',
        first_name: body.first_name,
        last_name: body.last_name,
        email: body.email,
        phone_number: body.phone_number ?? null,
        reference: body.reference ?? null,
        address: body.address ? json(normalizeAddress(body.address)) : null,
        identity_document_sealed: body.identity_document
          ? sealIdentityDocument(deps, body.identity_document)
          : null,
        metadata: json(body.metadata ?? {}),
        kyc_status: kycStatus,
        kyc_attestation_id: null,
        kyc_expires_at: null,
        kyc_has_identity: false,
        kyc_expiry_notified: false,
        created_at: now,
        updated_at: now,
        clock_id: clockId,
      })
      const view = presentCardholder(row, now)
      await emit(trx, { ...ctx, clockId }, 'cardholder.created', view, now)
      return view
    })
  } catch (err) {
    throw uniquenessError(err) ?? err
  }
}

/**
 * The sandbox clock a new cardholder joins (docs/sandbox-clocks.md): production, an unknown id or another
 * organization's clock answer 400 invalid_parameter naming clock_id.
 */
async function clockOfNewCardholder(
  deps: AppDeps,
  ctx: RequestCtx,
  clockId: string | undefined,
): Promise<string | null> {
  if (clockId === undefined) return null
  if (ctx.environment !== 'sandbox')
    throw new ApiError('invalid_parameter', {
      param: 'clock_id',
      message: 'clock_id is for the sandbox only: production runs on wall time.',
    })
  if (!(await deps.hooks.get(CLOCK_OF_CALLER)(deps, ctx, clockId)))
    throw new ApiError('invalid_parameter', {
      param: 'clock_id',
      message: `No sandbox clock ${clockId} in this sandbox (POST /v1/simulate/clocks makes one).`,
    })
  return clockId
}

/** The caller's cardholder by id, for every module: another organization's id answers like a missing one. */
export async function requireCardholder(
  db: Db,
  ctx: Scope,
  cardholderId: string,
  param?: string,
): Promise<repo.CardholderRow> {
  const row = isId('chd', cardholderId) ? await repo.findCardholder(db, cardholderId) : undefined
  return requireOwned(row, ctx, 'cardholder_not_found', param)
}

/** Same as requireCardholder, inside a transaction, holding the row lock until it ends. */
export async function lockCardholder(
  trx: Db,
  ctx: RequestCtx,
  cardholderId: string,
  param?: string,
): Promise<repo.CardholderRow> {
  const row = isId('chd', cardholderId) ? await repo.lockCardholder(trx, cardholderId) : undefined
  return requireOwned(row, ctx, 'cardholder_not_found', param)
}

/** A cardholder row by id with no tenant check: for background jobs, which carry ids the service itself recorded. */
export async function findCardholderForJob(
  db: Db,
  cardholderId: string,
): Promise<repo.CardholderRow | undefined> {
  return repo.findCardholder(db, cardholderId)
}

export async function retrieveCardholder(
  deps: AppDeps,
  ctx: RequestCtx,
  cardholderId: string,
): Promise<CardholderView> {
  return presentCardholder(await requireCardholder(deps.db, ctx, cardholderId), deps.clock.now())
}

export async function listCardholders(
  deps: AppDeps,
  ctx: RequestCtx,
  query: ListQuery,
): Promise<ListResult<CardholderView>> {
  const now = deps.clock.now()
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: '/v1/cardholders',
    page: query,
    sortKey: (r: repo.CardholderRow) => r.id,
    fetch: (bounds) =>
      repo.listCardholders(
        deps.db,
        ctx.organizationId,
        ctx.environment,
        { kycStatus: query.kyc_status, reference: query.reference },
        now,
        bounds,
      ),
    present: (row) => presentCardholder(row, now),
  })
}

/** PATCH: only supplied fields change; an address change on an address_change_requires_kyc program is refused. */
export async function updateCardholder(
  deps: AppDeps,
  ctx: RequestCtx,
  cardholderId: string,
  body: UpdateBody,
): Promise<CardholderView> {
  const current = await requireCardholder(deps.db, ctx, cardholderId)
  const newAddress = body.address ? normalizeAddress(body.address) : undefined
  const addressChanges =
    newAddress !== undefined && !sameAddress(current.address as AddressValue | null, newAddress)
  // Checked before the transaction: the guard reads other modules' tables through deps.db.
  if (addressChanges && (await addressChangeNeedsKyc(deps, current))) {
    throw new ApiError('address_change_requires_kyc', { param: 'address' })
  }
  const now = (await onClock(deps, current.clock_id)).clock.now()
  try {
    return await withTx(deps.db, async (trx) => {
      const row = await lockCardholder(trx, ctx, cardholderId)
      const changes: repo.CardholderChanges = {}
      if (body.first_name !== undefined && body.first_name !== row.first_name)
        changes.first_name = body.first_name
      if (body.last_name !== undefined && body.last_name !== row.last_name)
        changes.last_name = body.last_name
      if (body.email !== undefined && body.email !== row.email) changes.email = body.email
      if (body.phone_number !== undefined && body.phone_number !== row.phone_number)
        changes.phone_number = body.phone_number
      if (body.reference !== undefined && body.reference !== row.reference)
        changes.reference = body.reference
      if (newAddress && !sameAddress(row.address as AddressValue | null, newAddress))
        changes.address = json(newAddress)
      if (body.identity_document)
        changes.identity_document_sealed = sealIdentityDocument(deps, body.identity_document)
      if (body.metadata !== undefined) {
        const held = (row.metadata ?? {}) as Record<string, string>
        const merged = mergeMetadata(held, body.metadata)
        if (!sameMetadata(held, merged)) changes.metadata = json(merged)
      }
      if (Object.keys(changes).length === 0) return presentCardholder(row, now)
      changes.updated_at = now
      const updated = await repo.updateCardholder(trx, row.id, changes)
      const view = presentCardholder(updated, now)
      await emit(trx, { ...ctx, clockId: updated.clock_id }, 'cardholder.updated', view, now)
      return view
    })
  } catch (err) {
    throw uniquenessError(err) ?? err
  }
}

/** What a recorded attestation changes on its cardholder. */
export interface KycOutcome {
  attestationId: string
  status: 'approved' | 'rejected' | 'pending'
  expiresAt: Date | null
  hasIdentity: boolean
  /** The attested address, applied unless the attestation reports `rejected`. */
  address: AddressValue | null
}

/**
 * Makes an attestation the cardholder's current one, inside the caller's transaction (the row must be locked):
 * kyc_status follows it; emits `cardholder.kyc_updated`, and `cardholder.updated` when the address changed.
 */
export async function applyKycOutcome(
  trx: Db,
  ctx: RequestCtx,
  row: repo.CardholderRow,
  outcome: KycOutcome,
  now: Date,
): Promise<repo.CardholderRow> {
  const changes: repo.CardholderChanges = {
    kyc_status: outcome.status,
    kyc_attestation_id: outcome.attestationId,
    kyc_expires_at: outcome.expiresAt,
    kyc_has_identity: outcome.hasIdentity,
    // An attestation already past its expiry is announced as expired by the event below (no expiry job is queued);
    // the flag also keeps it out of the list index of live statuses (listCardholders).
    kyc_expiry_notified: outcome.expiresAt !== null && outcome.expiresAt.getTime() <= now.getTime(),
    updated_at: now,
  }
  const addressChanged =
    outcome.address !== null &&
    outcome.status !== 'rejected' &&
    !sameAddress(row.address as AddressValue | null, outcome.address)
  if (addressChanged) changes.address = json(outcome.address)
  const updated = await repo.updateCardholder(trx, row.id, changes)
  const view = presentCardholder(updated, now)
  const scope = { ...ctx, clockId: updated.clock_id }
  await emit(trx, scope, 'cardholder.kyc_updated', view, now)
  if (addressChanged) await emit(trx, scope, 'cardholder.updated', view, now)
  return updated
}

/** Marks one attestation's expiry as announced and returns the row, or nothing when already done or superseded. */
export async function claimKycExpiry(
  trx: Db,
  cardholderId: string,
  attestationId: string,
  now: Date,
): Promise<repo.CardholderRow | undefined> {
  return repo.claimExpiryNotice(trx, cardholderId, attestationId, now)
}
