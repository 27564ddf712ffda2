import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { ApiError } from '../../src/http/errors.js'

const ThingBody = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    amount: Type.Optional(Type.Integer()),
    tags: Type.Optional(Type.Array(Type.String())),
    meta: Type.Optional(
      Type.Object(
        { a: Type.Optional(Type.Integer()), b: Type.Optional(Type.Integer()) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
)

/** Side effects of the test routes: how many times each handler really ran. */
export const calls = {
  create: 0,
  other: 0,
  refuse: 0,
  patch: 0,
  get: 0,
  slow: 0,
  race: 0,
  flaky: 0,
  busy: 0,
}
/** The slow route signals `entered` when its handler starts and waits for `release`. */
export const slow = { entered: () => {}, release: () => {} }

/** Test-only /v1 routes for the idempotency tests (registered on every node a test boots). */
export function addRoutes(app: FastifyInstance): void {
  app.post('/v1/test/idem/things', { schema: { body: ThingBody } }, async (req, reply) => {
    calls.create++
    return reply.code(201).send({
      object: 'thing',
      id: `thg_${randomUUID()}`,
      ...(req.body as object),
      call: calls.create,
    })
  })
  app.post('/v1/test/idem/others', { schema: { body: ThingBody } }, async (req, reply) => {
    calls.other++
    return reply.code(201).send({ object: 'other', id: `oth_${randomUUID()}` })
  })
  app.post('/v1/test/idem/refusals', { schema: { body: ThingBody } }, async () => {
    calls.refuse++
    throw new ApiError('kyc_not_approved', { message: `refused on call ${calls.refuse}` })
  })
  app.patch(
    '/v1/test/idem/things/:id',
    { schema: { params: Type.Object({ id: Type.String() }), body: ThingBody } },
    async (req) => {
      calls.patch++
      return { object: 'thing', id: (req.params as { id: string }).id, call: calls.patch }
    },
  )
  app.get('/v1/test/idem/things', async () => {
    calls.get++
    return { object: 'count', call: calls.get }
  })
  app.post('/v1/test/idem/slow', { schema: { body: ThingBody } }, async (_req, reply) => {
    calls.slow++
    slow.entered()
    await new Promise<void>((resolve) => {
      slow.release = resolve
    })
    return reply.code(201).send({ object: 'slow', call: calls.slow })
  })
  app.post('/v1/test/idem/race', { schema: { body: ThingBody } }, async (_req, reply) => {
    calls.race++
    await new Promise((r) => setTimeout(r, 30))
    return reply.code(201).send({ object: 'race', call: calls.race })
  })
  app.post('/v1/test/idem/busy', { schema: { body: ThingBody } }, async (_req, reply) => {
    calls.busy++
    if (calls.busy === 1)
      throw new ApiError('idempotency_request_in_progress', { param: 'client_transaction_id' })
    return reply.code(201).send({ object: 'busy', call: calls.busy })
  })
  app.post('/v1/test/idem/flaky', { schema: { body: ThingBody } }, async (_req, reply) => {
    calls.flaky++
    if (calls.flaky === 1) throw new Error('transient failure')
    return reply.code(201).send({ object: 'flaky', call: calls.flaky })
  })
}
