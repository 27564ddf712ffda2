import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import type { ErrorCode } from '../../http/errors.js'
import { revealCardDetails } from './details.js'
import { createPinKey, setPin, verifyPin } from './pin.js'
import {
  Card,
  CardDetails,
  CardIdParams,
  DetailsRequest,
  PinKey,
  PinSubmit,
  PinVerification,
} from './schemas.js'
import { NoBody } from '../../http/schema-types.js'
import { cardProgramOf } from './service.js'
import { unitOf } from '../../http/idempotency.js'

const tags = ['Card secrets']
const PIN_ERRORS: ErrorCode[] = [
  'card_not_found',
  'card_not_provisioned',
  'card_closed',
  'card_invalid_state',
  'program_not_configured',
  'processor_unavailable',
  'processor_permission_denied',
]

/** PIN and card details: scope cards:secrets, each use audited; mounted only where the program's processor can do them. */
export function registerCardSecretRoutes(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const programOf = (req: FastifyRequest) => cardProgramOf(deps, req)

  app.post(
    '/v1/cards/:card_id/pin-key',
    {
      config: {
        scope: 'cards:secrets',
        capability: { name: 'card_pin', programOf },
        idempotent: false,
        errors: PIN_ERRORS,
      },
      schema: {
        tags,
        summary: 'Get a one-time RSA key to encrypt a PIN for this card',
        description:
          'Every call mints a new 2048-bit RSA-OAEP-256 key that expires after 5 minutes and is spent by its first use ' +
          'with pin or pin/verify, whatever the outcome. Only an active physical card. Idempotency-Key is accepted but unused. Audited.',
        params: CardIdParams,
        body: NoBody,
        response: { 201: PinKey },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await createPinKey(unitOf(req, deps), req.ctx, req.params.card_id)),
  )

  app.post(
    '/v1/cards/:card_id/pin',
    {
      config: {
        scope: 'cards:secrets',
        capability: { name: 'card_pin', programOf },
        errors: [...PIN_ERRORS, 'pin_invalid', 'token_not_found'],
      },
      schema: {
        tags,
        summary: 'Set the PIN of an active physical card',
        description:
          '`encrypted_pin` is the base64 RSA-OAEP-256 (SHA-256) encryption of the 4–12 digit PIN to the key from pin-key. ' +
          'A key of another card or program, or an expired or spent key, answers token_not_found. Emits card.pin_set. Audited.',
        params: CardIdParams,
        body: PinSubmit,
        response: { 200: Card },
      },
    },
    async (req) => setPin(unitOf(req, deps), req.ctx, req.params.card_id, req.body),
  )

  app.post(
    '/v1/cards/:card_id/pin/verify',
    {
      config: {
        scope: 'cards:secrets',
        capability: { name: 'card_pin', programOf },
        errors: [...PIN_ERRORS, 'pin_invalid', 'token_not_found'],
      },
      schema: {
        tags,
        summary: 'Verify a PIN',
        description:
          'Same body as pin; answers whether it matches the PIN the processor holds (false when none is set). Audited.',
        params: CardIdParams,
        body: PinSubmit,
        response: { 200: PinVerification },
      },
    },
    async (req) => verifyPin(unitOf(req, deps), req.ctx, req.params.card_id, req.body),
  )

  app.post(
    '/v1/cards/:card_id/details',
    {
      config: {
        scope: 'cards:secrets',
        capability: { name: 'card_details', programOf },
        idempotent: false,
        errors: [
          'card_not_found',
          'card_not_provisioned',
          'card_closed',
          'invalid_public_key',
          'processor_unavailable',
          'processor_permission_denied',
        ],
      },
      schema: {
        tags,
        summary: 'Reveal the card number, CVC and expiry, encrypted to your key',
        description:
          '`encrypted_details` is a compact JWE (alg RSA-OAEP-256, enc A256GCM) of {number, cvc, exp_month, exp_year}, ' +
          'encrypted to `public_key` (RSA, at least 2048 bits, JWK or PEM). Idempotency-Key is accepted but unused (nothing is cached). Audited.',
        params: CardIdParams,
        body: DetailsRequest,
        response: { 200: CardDetails },
      },
    },
    async (req) =>
      revealCardDetails(unitOf(req, deps), req.ctx, req.params.card_id, req.body.public_key),
  )
}
