import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import { ApiError } from '../../http/errors.js'
import { ListEnvelope } from '../../http/pagination.js'
import { KycAttestation, KycAttestationRequest, KycListQuery, KycParams } from './schemas.js'
import { listAttestations, recordAttestation } from './service.js'
import {
  KYC_UPLOAD_MIN_BYTES_PER_SECOND,
  KYC_UPLOAD_PACE_WINDOW_MS,
  pacedBody,
} from './upload-pace.js'
import {
  KYC_UPLOAD_RETRY_AFTER_SECONDS,
  KYC_UPLOAD_WAIT_MS,
  KYC_UPLOADS_AT_ONCE,
  KYC_UPLOADS_PER_ORGANIZATION,
  UploadSlots,
} from './upload-slots.js'
import { unitOf } from '../../http/idempotency.js'

export function registerKyc(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Cardholders']
  const uploads = new UploadSlots()

  app.post(
    '/v1/cardholders/:cardholder_id/kyc',
    {
      // The only endpoint that accepts files: 3 × 20 MiB in base64 plus the rest of the attestation.
      bodyLimit: deps.config.kycBodyLimitBytes,
      config: { scope: 'cardholders:write', errors: ['cardholder_not_found'] },
      // After authentication and before the body is read: a slot bounds the memory uploads take together, and one
      // organization holds at most half of them. It is given back when the response is done or the connection
      // drops, whichever comes first.
      onRequest: async (req, reply) => {
        const organization = req.ctx.organizationId
        const slot = uploads.claim(organization)
        reply.raw.once('close', slot.release)
        if (await slot.granted) return
        const own = uploads.heldBy(organization) >= KYC_UPLOADS_PER_ORGANIZATION
        throw new ApiError('rate_limited', {
          message: own
            ? `This organization already has ${KYC_UPLOADS_PER_ORGANIZATION} KYC uploads in progress on this server, its share of ` +
              `${KYC_UPLOADS_AT_ONCE}; retry after Retry-After seconds.`
            : `${KYC_UPLOADS_AT_ONCE} KYC uploads are already in progress on this server; retry after Retry-After seconds.`,
          headers: { 'Retry-After': String(KYC_UPLOAD_RETRY_AFTER_SECONDS) },
        })
      },
      // Once it holds a slot the body must keep arriving: one that trickles is cut off and frees the slot.
      preParsing: async (_req, _reply, payload) => pacedBody(payload),
      schema: {
        tags,
        summary: 'Report a KYC outcome',
        description:
          'Records a verification you performed; it becomes the current attestation and kyc_status follows its status ' +
          '(`expired` once expires_at passes). Earlier attestations are kept. Up to 3 documents, each at most 20 MiB decoded, ' +
          'stored encrypted (AES-256-GCM, per-document data key) and never returned: responses carry metadata only. ' +
          `Request size limit 85 MiB (1 MiB elsewhere); the body must arrive within 30 s, at no less than ${KYC_UPLOAD_MIN_BYTES_PER_SECOND / 1024} KiB/s ` +
          `in any ${KYC_UPLOAD_PACE_WINDOW_MS / 1000} s (slower: 408 request_timeout, the connection closed). At most ${KYC_UPLOADS_AT_ONCE} uploads ` +
          `are received at once per server process, at most ${KYC_UPLOADS_PER_ORGANIZATION} of one organization: another waits up to ` +
          `${KYC_UPLOAD_WAIT_MS / 1000} s for its turn, then answers 429 rate_limited with Retry-After. ` +
          'On programs whose processor runs its own identity checks an attestation ' +
          'without `identity` is recorded, but account opening and card issuance answer kyc_identity_required. Emits cardholder.kyc_updated.',
        params: KycParams,
        body: KycAttestationRequest,
        response: { 201: KycAttestation },
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(
          await recordAttestation(unitOf(req, deps), req.ctx, req.params.cardholder_id, req.body),
        ),
  )

  app.get(
    '/v1/cardholders/:cardholder_id/kyc',
    {
      config: { scope: 'cardholders:read', errors: ['cardholder_not_found'] },
      schema: {
        tags,
        summary:
          "List a cardholder's KYC attestations, newest first (the first is the current one)",
        params: KycParams,
        querystring: KycListQuery,
        response: { 200: ListEnvelope(KycAttestation, 'KycAttestation') },
      },
    },
    async (req) => listAttestations(deps, req.ctx, req.params.cardholder_id, req.query),
  )
}
