import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import type { ErrorCode } from '../../http/errors.js'
import { unitOf } from '../../http/idempotency.js'
import { ListEnvelope, type PageParams } from '../../http/pagination.js'
import {
  SandboxClock,
  SandboxClockAdvance,
  SandboxClockCreate,
  SandboxClockDeleted,
  SandboxClockListQuery,
  SandboxClockParams,
} from './schemas.js'
import { advanceClock, createClock, deleteClock, listClocks, retrieveClock } from './service.js'

const tags = ['Simulator']
const write = (errors: ErrorCode[] = []) => ({
  simulator: true,
  scope: 'cardholders:write',
  errors,
})
const read = (errors: ErrorCode[] = []) => ({
  simulator: true,
  scope: 'cardholders:read',
  errors,
})

/** Sandbox only (production answers the same 404 as an unknown path): clocks that move time per test. */
export function registerClockRoutes(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/v1/simulate/clocks',
    {
      config: write(),
      schema: {
        tags,
        summary: 'Create a sandbox clock',
        description:
          'A clock at `frozen_time` (default now) that cardholders join with `clock_id` on creation; advancing it ' +
          'runs what falls due for their objects (docs/sandbox-clocks.md). Deleted on its own after 30 days ' +
          '(`deletes_after`). Emits sandbox_clock.created.',
        body: SandboxClockCreate,
        response: { 201: SandboxClock },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await createClock(unitOf(req, deps), req.ctx, req.body)),
  )

  app.get(
    '/v1/simulate/clocks',
    {
      config: read(),
      schema: {
        tags,
        summary: 'List sandbox clocks, most recently created first',
        querystring: SandboxClockListQuery,
        response: { 200: ListEnvelope(SandboxClock, 'SandboxClock') },
      },
    },
    async (req) => listClocks(deps, req.ctx, req.query as PageParams),
  )

  app.get(
    '/v1/simulate/clocks/:clock_id',
    {
      config: read(['sandbox_clock_not_found']),
      schema: {
        tags,
        summary: 'Retrieve a sandbox clock',
        params: SandboxClockParams,
        response: { 200: SandboxClock },
      },
    },
    async (req) => retrieveClock(deps, req.ctx, req.params.clock_id),
  )

  app.post(
    '/v1/simulate/clocks/:clock_id/advance',
    {
      config: write(['sandbox_clock_not_found', 'sandbox_clock_advancing']),
      schema: {
        tags,
        summary: 'Advance a sandbox clock',
        description:
          'Moves the clock to `to` (RFC 3339, after its frozen_time) or forward `by` an ISO 8601 duration (P1D, ' +
          'PT36H, P1M); exactly one, at most 730 days a step, else 400 invalid_parameter naming the field. The clock ' +
          "is `advancing` while the holds of its cardholders' authorizations that fall due expire, earliest first " +
          '(reversed, balance released, authorization.updated); then it is `ready` at the new time and emits ' +
          'sandbox_clock.ready. Answers once done. While another advance of the clock runs: 409 ' +
          'sandbox_clock_advancing. An advance that was interrupted is finished by the worker or by the next ' +
          'advance, and nothing runs twice.',
        params: SandboxClockParams,
        body: SandboxClockAdvance,
        response: { 200: SandboxClock },
      },
    },
    async (req) => advanceClock(deps, req.ctx, req.params.clock_id, req.body),
  )

  app.delete(
    '/v1/simulate/clocks/:clock_id',
    {
      config: write(['sandbox_clock_not_found', 'sandbox_clock_advancing']),
      schema: {
        tags,
        summary: 'Delete a sandbox clock',
        description:
          'Deletes the clock and its objects: the cardholders on it and everything under them (accounts and their ' +
          'ledger, cards and their secrets, authorizations, transactions, disputes, 3-D Secure authentications, ' +
          'KYC records, eSIMs and orders), which answer 404 afterwards; the events already emitted stay. Emits ' +
          'sandbox_clock.deleted. While an advance of the clock runs: 409 sandbox_clock_advancing.',
        params: SandboxClockParams,
        response: { 200: SandboxClockDeleted },
      },
    },
    async (req) => deleteClock(deps, req.ctx, req.params.clock_id),
  )
}
