import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import { setSimDirective } from '../../esim-network/simulator.js'
import { queueUsageReports, recordUsage } from './usage.js'
import { simulateInstall, simulateLocation } from './lifecycle-service.js'
import { requireOrder } from './orders-service.js'
import { simulateSaleStatus } from './packages-service.js'
import { presentOrder } from './present.js'
import {
  Esim,
  EsimIdParams,
  EsimOrder,
  EsimPackage,
  EsimTopUp,
  OrderIdParams,
  PackageIdParams,
  SaleStatus,
  UsageReportBatch,
  UsageReportBatchRequest,
} from './schemas.js'
import { CountryCode } from '../../http/schema-types.js'
import { settleOrder } from './settlement.js'
import { unitOf } from '../../http/idempotency.js'

const strict = { additionalProperties: false }

const ProvisioningDirective = Type.Object(
  {
    object: Type.Literal('esim_provisioning_simulation'),
    next_outcome: Type.Union([
      Type.Literal('success'),
      Type.Literal('timeout'),
      Type.Literal('failure'),
      Type.Null(),
    ]),
    settles_as: Type.Union([Type.Literal('completed'), Type.Literal('failed'), Type.Null()]),
    latency_ms: Type.Union([Type.Integer(), Type.Null()]),
  },
  {
    title: 'EsimProvisioningSimulation',
    examples: [
      {
        object: 'esim_provisioning_simulation',
        next_outcome: 'timeout',
        settles_as: 'completed',
        latency_ms: 300,
      },
    ],
  },
)

/** Sandbox-only controls of the eSIM network and catalogue, scoped to the calling organization. */
export function registerEsimSimulatorRoutes(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Simulator']

  app.post(
    '/v1/simulate/esim/provisioning',
    {
      config: { simulator: true, scope: 'esim:write' },
      schema: {
        tags,
        summary: 'Decide the outcome of the next eSIM provisioning (sandbox only)',
        description:
          '`next_outcome` applies to the next order of your organization only: `timeout` answers 502 and leaves the order unsettled until it ' +
          'settles as `settles_as` (default completed); `failure` refuses it (nothing bought). `latency_ms` sets the simulated network latency for ' +
          'your organization until changed (default 300 ms).',
        body: Type.Object(
          {
            next_outcome: Type.Optional(
              Type.Union([
                Type.Literal('success'),
                Type.Literal('timeout'),
                Type.Literal('failure'),
              ]),
            ),
            settles_as: Type.Optional(
              Type.Union([Type.Literal('completed'), Type.Literal('failed')]),
            ),
            latency_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
          },
          strict,
        ),
        response: { 200: ProvisioningDirective },
      },
    },
    async (req) => {
      const { next_outcome, settles_as, latency_ms } = req.body
      const directive = await withTx(unitOf(req, deps).db, (trx) =>
        setSimDirective(
          trx,
          req.ctx,
          {
            ...(next_outcome !== undefined ? { next_outcome } : {}),
            ...(settles_as !== undefined ? { settles_as } : {}),
            ...(latency_ms !== undefined ? { latency_ms } : {}),
          },
          deps.clock.now(),
        ),
      )
      return { object: 'esim_provisioning_simulation' as const, ...directive }
    },
  )

  app.post(
    '/v1/simulate/esim/orders/:order_id/settle',
    {
      config: { simulator: true, scope: 'esim:write', errors: ['esim_order_not_found'] },
      schema: {
        tags,
        summary: 'Settle an unsettled eSIM order now (sandbox only)',
        description:
          'Runs the settlement the background job would run: the order becomes `completed` (with `esim_id`) or `failed` (profile returned to stock), ' +
          'as the network recorded it. An order already settled is answered unchanged.',
        params: OrderIdParams,
        body: Type.Object({}, strict),
        response: { 200: EsimOrder },
      },
    },
    async (req) => {
      const order = await requireOrder(unitOf(req, deps), req.ctx, req.params.order_id)
      await settleOrder(unitOf(req, deps), order.id, { force: true })
      return presentOrder(await requireOrder(unitOf(req, deps), req.ctx, order.id))
    },
  )

  app.post(
    '/v1/simulate/esim/packages/:package_id/status',
    {
      config: {
        simulator: true,
        scope: 'esim:write',
        errors: ['esim_package_not_found', 'esim_package_unavailable'],
      },
      schema: {
        tags,
        summary:
          'Change the sale status of a package or add-on, for your organization (sandbox only)',
        description:
          'Accepts a pkg_ or topup_ id. `frozen` may return to `on_sale`; `withdrawn` is permanent (a later change answers esim_package_unavailable).',
        params: PackageIdParams,
        body: Type.Object({ status: SaleStatus }, strict),
        response: { 200: Type.Union([EsimPackage, EsimTopUp]) },
      },
    },
    async (req) =>
      simulateSaleStatus(unitOf(req, deps), req.ctx, req.params.package_id, req.body.status),
  )

  app.post(
    '/v1/simulate/esim/esims/:esim_id/usage',
    {
      config: {
        simulator: true,
        scope: 'esim:write',
        errors: ['esim_not_found', 'esim_invalid_state'],
      },
      schema: {
        tags,
        summary: 'Report data used on an eSIM (sandbox only)',
        description:
          '`data_used_mb` is the running total on the running package (capped at its volume), applied at once by the same path as the ' +
          'usage sweep. Each usage threshold of the alert settings it reaches emits esim.usage_threshold_reached (once per package); ' +
          'crossing 80 % emits esim.low_data; reaching the volume depletes the package and emits esim.depleted. The first report also ' +
          'marks the eSIM installed (esim.installed, unless it was) and the first with data used emits esim.first_used. ' +
          '`esim_invalid_state` on a suspended or canceled eSIM.',
        params: EsimIdParams,
        body: Type.Object(
          { data_used_mb: Type.Integer({ minimum: 0, maximum: 10_000_000 }) },
          strict,
        ),
        response: { 200: Esim },
      },
    },
    async (req) =>
      recordUsage(unitOf(req, deps), req.ctx, req.params.esim_id, req.body.data_used_mb),
  )

  app.post(
    '/v1/simulate/esim/usage_reports',
    {
      config: { simulator: true, scope: 'esim:write' },
      schema: {
        tags,
        summary:
          'Queue usage reports of many eSIMs, as a network feed delivers them (sandbox only)',
        description:
          'Up to 10,000 reports (`esim_id`, `data_used_mb`: the running total on its running package) wait for the usage sweep ' +
          '(`esim.apply_usage`, every 2 s), which applies them in batches with the same rules and events as a single report. A report ' +
          'about an eSIM you do not have, lower than what is recorded, or on an eSIM with nothing running is dropped. Answers `202`.',
        body: UsageReportBatchRequest,
        response: { 202: UsageReportBatch },
      },
    },
    async (req, reply) =>
      reply.code(202).send(await queueUsageReports(unitOf(req, deps), req.ctx, req.body)),
  )

  app.post(
    '/v1/simulate/esim/esims/:esim_id/install',
    {
      config: {
        simulator: true,
        scope: 'esim:write',
        errors: ['esim_not_found', 'esim_invalid_state'],
      },
      schema: {
        tags,
        summary: 'Install an eSIM on a device (sandbox only)',
        description:
          'As the network reports it: `released` becomes `installed` and esim.installed is emitted, once (again: answered unchanged).',
        params: EsimIdParams,
        body: Type.Object({}, strict),
        response: { 200: Esim },
      },
    },
    async (req) => simulateInstall(unitOf(req, deps), req.ctx, req.params.esim_id),
  )

  app.post(
    '/v1/simulate/esim/esims/:esim_id/location',
    {
      config: {
        simulator: true,
        scope: 'esim:write',
        errors: ['esim_not_found', 'esim_invalid_state'],
      },
      schema: {
        tags,
        summary: 'Move an eSIM to another country (sandbox only)',
        description:
          "The device attaches to a network in `country`: the eSIM's `country` changes and esim.country_changed is emitted with " +
          '`data.country` and `data.previous_country` (the same country again changes nothing). An eSIM not yet installed is installed first.',
        params: EsimIdParams,
        body: Type.Object({ country: CountryCode() }, strict),
        response: { 200: Esim },
      },
    },
    async (req) =>
      simulateLocation(unitOf(req, deps), req.ctx, req.params.esim_id, req.body.country),
  )
}
