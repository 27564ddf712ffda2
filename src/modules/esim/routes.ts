import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import { ListEnvelope } from '../../http/pagination.js'
import { createOrder, listOrders, retrieveOrder } from './orders-service.js'
import { listPackages, retrievePackage, viewOf } from './packages-service.js'
import {
  EsimOrder,
  EsimPackage,
  OrderCreateRequest,
  OrderIdParams,
  OrderListQuery,
  PackageIdParams,
  PackageListQuery,
} from './schemas.js'
import { unitOf } from '../../http/idempotency.js'

/** The catalogue may be cached for minutes, not days. */
const CATALOGUE_CACHE = 'max-age=300'

/** `/v1/esim/packages` and `/v1/esim/orders`. */
export function registerPackageAndOrderRoutes(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/v1/esim/packages',
    {
      config: { scope: 'esim:read' },
      schema: {
        tags: ['eSIM packages'],
        summary: 'List the eSIM package catalogue',
        description:
          'The platform catalogue, in catalogue order. Filters: `country` (three-letter code covered), `region` (local, regional, global), `status`. ' +
          'Answers carry `Cache-Control: max-age=300`: cache for minutes, and retrieve the package about to be bought right before ordering.',
        querystring: PackageListQuery,
        response: { 200: ListEnvelope(EsimPackage, 'EsimPackage') },
      },
    },
    async (req, reply) => {
      const page = await listPackages(deps, req.ctx, req.query)
      return reply.header('Cache-Control', CATALOGUE_CACHE).send(page)
    },
  )

  app.get(
    '/v1/esim/packages/:package_id',
    {
      config: { scope: 'esim:read', errors: ['esim_package_not_found'] },
      schema: {
        tags: ['eSIM packages'],
        summary: 'Retrieve an eSIM package',
        description:
          'Read it immediately before ordering: a frozen or withdrawn package cannot be ordered.',
        params: PackageIdParams,
        response: { 200: EsimPackage },
      },
    },
    async (req, reply) => {
      const pkg = await retrievePackage(deps, viewOf(req.ctx), req.params.package_id)
      return reply.header('Cache-Control', CATALOGUE_CACHE).send(pkg)
    },
  )

  app.post(
    '/v1/esim/orders',
    {
      config: {
        scope: 'esim:write',
        errors: [
          'esim_package_not_found',
          'esim_package_unavailable',
          'esim_inventory_exhausted',
          'esim_order_reference_exists',
          'cardholder_not_found',
          'account_not_found',
          'insufficient_funds',
          'currency_mismatch',
          'account_blocked',
          'account_cardholder_mismatch',
          'account_not_provisioned',
          'processor_unavailable',
        ],
      },
      schema: {
        tags: ['eSIM orders'],
        summary: 'Order an eSIM package',
        description:
          'Allocates an eSIM from stock and provisions the package before answering: `201` means the eSIM is ready (`esim_id`). ' +
          'Any refusal or failure means nothing was bought, except `502 processor_unavailable` after a network timeout: the order is then listed ' +
          '`unsettled` without `esim_id` until the service settles it (`completed` or `failed`); find it with `GET /v1/esim/orders?reference=`. ' +
          '`reference` is unique per organization across orders and top-ups. With `account_id` the price is debited from that account in the ' +
          'transaction that completes the order; without it the organization is billed. Emits esim_order.created.',
        body: OrderCreateRequest,
        response: { 201: EsimOrder },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await createOrder(unitOf(req, deps), req.ctx, req.body)),
  )

  app.get(
    '/v1/esim/orders',
    {
      config: { scope: 'esim:read' },
      schema: {
        tags: ['eSIM orders'],
        summary: 'List eSIM orders, newest first',
        description:
          'Filters: `reference` (recover an order after a timed-out create), `status`, `cardholder_id`, `trigger` (`auto`: auto top-ups). ' +
          'Package orders and top-ups alike.',
        querystring: OrderListQuery,
        response: { 200: ListEnvelope(EsimOrder, 'EsimOrder') },
      },
    },
    async (req) => listOrders(deps, req.ctx, req.query),
  )

  app.get(
    '/v1/esim/orders/:order_id',
    {
      config: { scope: 'esim:read', errors: ['esim_order_not_found'] },
      schema: {
        tags: ['eSIM orders'],
        summary: 'Retrieve an eSIM order',
        params: OrderIdParams,
        response: { 200: EsimOrder },
      },
    },
    async (req) => retrieveOrder(deps, req.ctx, req.params.order_id),
  )
}
