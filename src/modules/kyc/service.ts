import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { json } from '../../db/types.js'
import { withTx } from '../../db/tx.js'
import type { RequestCtx } from '../../http/context.js'
import { fieldErrors, type FieldError } from '../../http/errors.js'
import { iso } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { decryptField, encryptField } from '../../lib/crypto.js'
import { newId } from '../../lib/ids.js'
import { onClock } from '../../lib/object-clock.js'
import { enqueue } from '../../jobs/queue.js'
import {
  normalizeAddress,
  presentAddress,
  applyKycOutcome,
  lockCardholder,
  requireCardholder,
  type AddressValue,
} from '../cardholders/index.js'
import { checkDocumentContent, sealDocument } from './documents.js'
import { KYC_EXPIRY_JOB } from './expiry.js'
import * as repo from './repo.js'
import type { KycAttestation, KycAttestationRequest } from './schemas.js'

type AttestationBody = Static<typeof KycAttestationRequest>
export type KycAttestationView = Static<typeof KycAttestation>

const IDENTITY_PURPOSE = 'kyc-identity'
/**
 * Clock skew allowed between the caller's verifier and this service before verified_at counts as future:
 * a few seconds for clocks kept by NTP, so that "a minute from now" is already refused.
 */
export const VERIFIED_AT_TOLERANCE_MS = 5_000

type IdentityValue = Static<typeof KycAttestation>['identity']

function presentAttestation(
  deps: AppDeps,
  row: repo.AttestationRow,
  documents: repo.DocumentMetadataRow[],
): KycAttestationView {
  const identity = row.identity_sealed
    ? (JSON.parse(
        decryptField(deps.config.masterKey, IDENTITY_PURPOSE, row.identity_sealed),
      ) as IdentityValue)
    : null
  return {
    id: row.id,
    object: 'kyc_attestation',
    cardholder_id: row.cardholder_id,
    status: row.status,
    provider: row.provider,
    provider_reference: row.provider_reference,
    method: row.method,
    verified_at: iso(row.verified_at)!,
    expires_at: iso(row.expires_at),
    reference: row.reference,
    identity,
    address: presentAddress(row.address as AddressValue | null),
    documents: documents.map((d) => ({
      kind: d.kind,
      file_name: d.file_name,
      content_type: d.content_type,
      size_bytes: Number(d.size_bytes),
      sha256: d.sha256,
    })),
    created_at: iso(row.created_at)!,
  }
}

/** The rules the schema cannot express: verified_at not in the future, expires_at after it, documents valid base64 ≤ 20 MiB. */
function checkAttestation(body: AttestationBody, now: Date): void {
  const problems: FieldError[] = []
  const verifiedAt = new Date(body.verified_at)
  if (verifiedAt.getTime() > now.getTime() + VERIFIED_AT_TOLERANCE_MS) {
    problems.push({
      code: 'invalid_parameter',
      param: 'verified_at',
      message: 'verified_at must not be in the future.',
    })
  }
  if (
    body.expires_at !== undefined &&
    new Date(body.expires_at).getTime() <= verifiedAt.getTime()
  ) {
    problems.push({
      code: 'invalid_parameter',
      param: 'expires_at',
      message: 'expires_at must be after verified_at.',
    })
  }
  body.documents?.forEach((doc, i) => {
    const problem = checkDocumentContent(doc.content, `documents[${i}].content`)
    if (problem) problems.push(problem)
  })
  if (problems.length > 0) throw fieldErrors(problems)
}

/**
 * Records a verification the caller performed and makes it the current one. Documents are sealed one at a
 * time (each under its own data key, decoded and encrypted in small steps, never as a whole decoded copy) and
 * their base64 text is released from the body as soon as it is stored, so memory holds at most one document's
 * ciphertext beside the parsed request. How many uploads run at once is bounded by the route (upload-slots.ts).
 */
export async function recordAttestation(
  deps: AppDeps,
  ctx: RequestCtx,
  cardholderId: string,
  body: AttestationBody,
): Promise<KycAttestationView> {
  const holder = await requireCardholder(deps.db, ctx, cardholderId)
  // Under a sandbox clock the attestation is recorded, checked and expires on the clock's time.
  const now = (await onClock(deps, holder.clock_id)).clock.now()
  checkAttestation(body, now)
  const address = body.address ? normalizeAddress(body.address) : null
  const identity = body.identity
    ? {
        legal_name: body.identity.legal_name,
        gender: body.identity.gender ?? null,
        nationality: body.identity.nationality?.toUpperCase() ?? null,
        country_of_birth: body.identity.country_of_birth?.toUpperCase() ?? null,
        document_expires_on: body.identity.document_expires_on ?? null,
      }
    : null
  const expiresAt = body.expires_at !== undefined ? new Date(body.expires_at) : null

  const embedded = deps.config.databaseUrl === null
  const result = await withTx(deps.db, async (trx) => {
    const cardholder = await lockCardholder(trx, ctx, cardholderId)
    // The id is taken under the row lock, so the newest id is always the current attestation.
    const attestation = await repo.insertAttestation(trx, {
      id: newId('kyc'),
      cardholder_id: cardholder.id,
      organization_id: ctx.organizationId,
      environment: ctx.environment,
      status: body.status,
      provider: body.provider,
      provider_reference: body.provider_reference ?? null,
      method: body.method ?? null,
      verified_at: new Date(body.verified_at),
      expires_at: expiresAt,
      reference: body.reference ?? null,
      identity_sealed: identity
        ? encryptField(deps.config.masterKey, IDENTITY_PURPOSE, JSON.stringify(identity))
        : null,
      address: address ? json(address) : null,
      created_at: now,
    })
    const documents: repo.DocumentMetadataRow[] = []
    const inputs = body.documents ?? []
    for (let position = 0; position < inputs.length; position++) {
      const doc = inputs[position]
      const id = newId('kycdoc')
      const sealed = sealDocument(deps.config.masterKey, id, doc.content)
      // Drop the request's copy of the base64 text: it is the largest thing this request holds.
      doc.content = ''
      const meta = {
        id,
        attestation_id: attestation.id,
        position,
        kind: doc.kind,
        file_name: doc.file_name,
        content_type: doc.content_type,
        size_bytes: sealed.sizeBytes,
        sha256: sealed.sha256,
      }
      await repo.insertDocument(
        trx,
        { ...meta, wrapped_key: sealed.wrappedKey, ciphertext: sealed.ciphertext, created_at: now },
        embedded,
      )
      documents.push(meta)
    }
    await applyKycOutcome(
      trx,
      ctx,
      cardholder,
      {
        attestationId: attestation.id,
        status: body.status,
        expiresAt,
        hasIdentity: identity !== null,
        address,
      },
      now,
    )
    if (expiresAt && expiresAt.getTime() > now.getTime()) {
      await enqueue(trx, {
        type: KYC_EXPIRY_JOB,
        payload: { cardholder_id: cardholder.id, attestation_id: attestation.id },
        runAt: expiresAt,
        organizationId: ctx.organizationId,
        environment: ctx.environment,
        clockId: cardholder.clock_id,
      })
    }
    return { attestation, documents }
  })
  return presentAttestation(deps, result.attestation, result.documents)
}

export async function listAttestations(
  deps: AppDeps,
  ctx: RequestCtx,
  cardholderId: string,
  page: PageParams,
): Promise<ListResult<KycAttestationView>> {
  const cardholder = await requireCardholder(deps.db, ctx, cardholderId)
  let docs = new Map<string, repo.DocumentMetadataRow[]>()
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: `/v1/cardholders/${cardholder.id}/kyc`,
    page,
    sortKey: (r: repo.AttestationRow) => r.id,
    fetch: async (bounds) => {
      const rows = await repo.listAttestations(deps.db, cardholder.id, bounds)
      docs = new Map()
      for (const d of await repo.documentMetadata(
        deps.db,
        rows.map((r) => r.id),
      )) {
        docs.set(d.attestation_id, [...(docs.get(d.attestation_id) ?? []), d])
      }
      return rows
    },
    present: (row) => presentAttestation(deps, row, docs.get(row.id) ?? []),
  })
}
