import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppDeps } from '../app-deps.js'
import { withTx } from '../db/tx.js'
import { FAULT_ERRORS, setFault } from './faults.js'
import { PROCESSOR_OPERATIONS } from './port.js'
import { unitOf } from '../http/idempotency.js'

const FaultObject = Type.Object(
  {
    object: Type.Literal('processor_fault'),
    operation: Type.String(),
    error: Type.String(),
    remaining: Type.Integer({ description: 'Calls of the operation that will still fail' }),
  },
  {
    title: 'ProcessorFault',
    examples: [
      {
        object: 'processor_fault',
        operation: 'issue_card',
        error: 'processor_unavailable',
        remaining: 3,
      },
    ],
  },
)

const FaultRequest = Type.Object(
  {
    operation: Type.Enum([...PROCESSOR_OPERATIONS], {
      description: `Processor operation: ${PROCESSOR_OPERATIONS.join(', ')}`,
    }),
    error: Type.Enum([...FAULT_ERRORS], { description: 'The error the failing calls answer' }),
    count: Type.Integer({
      minimum: 0,
      maximum: 1000,
      description: 'How many of the next calls fail (0 disarms)',
    }),
  },
  { additionalProperties: false, title: 'ProcessorFaultRequest' },
)

/** Sandbox simulator: make the next N calls of a processor operation fail, for the calling organization only. */
export function registerProcessorFaultRoutes(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Simulator']

  app.post(
    '/v1/simulate/processor_faults',
    {
      config: { simulator: true },
      schema: {
        tags,
        summary: 'Inject processor faults (sandbox only)',
        description:
          'The next `count` calls of `operation` made for your organization in sandbox fail with `error` (502). Setting it again replaces the count; 0 disarms. Answers 200 with the armed fault.',
        body: FaultRequest,
        response: { 200: FaultObject },
      },
    },
    async (req) => {
      const { operation, error, count } = req.body
      const fault = await withTx(unitOf(req, deps).db, (trx) =>
        setFault(trx, req.ctx, operation, error, count, deps.clock.now()),
      )
      return { object: 'processor_fault' as const, ...fault }
    },
  )
}
