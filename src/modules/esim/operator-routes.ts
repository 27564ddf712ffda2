import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { inventoryCounts, loadProfiles } from './inventory.js'
import {
  createPackage,
  PLATFORM_VIEW,
  retrievePackage,
  updatePackage,
  updateTopUp,
} from './packages-service.js'
import { Country, EsimPackage, EsimTopUp, PackageIdParams, Region, SaleStatus } from './schemas.js'
import { CurrencyCode } from '../../http/schema-types.js'
import { unitOf } from '../../http/idempotency.js'

const strict = { additionalProperties: false }
const tags = ['Operator']
const Name = Type.String({ minLength: 1, maxLength: 200 })
const DataMb = Type.Union([Type.Integer({ minimum: 1, maximum: 10_000_000 }), Type.Null()])
const Days = Type.Integer({ minimum: 1, maximum: 3650 })
const Price = Type.Integer({ minimum: 0, maximum: 100_000_000 })

const TopUpInput = Type.Object(
  {
    name: Name,
    data_mb: DataMb,
    validity_days: Type.Integer({ minimum: 0, maximum: 3650 }),
    price: Price,
    status: Type.Optional(SaleStatus),
  },
  strict,
)

/** /operator/v1/esim: stock of blank profiles and the platform catalogue. */
export function registerEsimOperatorRoutes(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/operator/v1/esim/inventory',
    {
      schema: {
        tags,
        summary: 'Load blank eSIM profiles into stock',
        description:
          'Each profile: `iccid` (19 digits, 89 prefix, Luhn), `smdp_address`, `matching_id`. ICCIDs already in stock are skipped.',
        body: Type.Object(
          {
            profiles: Type.Array(
              Type.Object(
                {
                  iccid: Type.String({ maxLength: 19 }),
                  smdp_address: Type.String({ minLength: 1, maxLength: 253 }),
                  matching_id: Type.String({ minLength: 1, maxLength: 64 }),
                },
                strict,
              ),
              { minItems: 1, maxItems: 10_000 },
            ),
          },
          strict,
        ),
      },
      config: { created: true },
    },
    async (req, reply) =>
      reply.code(201).send(await loadProfiles(unitOf(req, deps), req.body.profiles)),
  )

  app.get(
    '/operator/v1/esim/inventory',
    {
      schema: { tags, summary: 'Count profiles in stock, reserved and provisioned' },
    },
    async () => inventoryCounts(deps),
  )

  app.post(
    '/operator/v1/esim/packages',
    {
      schema: {
        tags,
        summary: 'Add a package (and its add-ons) to the catalogue',
        body: Type.Object(
          {
            name: Name,
            data_mb: DataMb,
            validity_days: Days,
            countries: Type.Array(Country, { minItems: 1, maxItems: 250 }),
            region: Region,
            price: Price,
            currency: CurrencyCode(),
            status: Type.Optional(SaleStatus),
            top_ups: Type.Optional(Type.Array(TopUpInput, { maxItems: 20 })),
          },
          strict,
        ),
        response: { 201: EsimPackage },
      },
    },
    async (req, reply) => reply.code(201).send(await createPackage(unitOf(req, deps), req.body)),
  )

  app.get(
    '/operator/v1/esim/packages/:package_id',
    {
      schema: {
        tags,
        summary: 'Retrieve a package as the platform sees it',
        params: PackageIdParams,
        response: { 200: EsimPackage },
      },
      config: { errors: ['esim_package_not_found'] },
    },
    async (req) => retrievePackage(deps, PLATFORM_VIEW, req.params.package_id),
  )

  app.patch(
    '/operator/v1/esim/packages/:package_id',
    {
      schema: {
        tags,
        summary:
          'Change a package: price, name, coverage, or sale status (frozen may return; withdrawn is permanent)',
        params: PackageIdParams,
        body: Type.Object(
          {
            name: Type.Optional(Name),
            data_mb: Type.Optional(DataMb),
            validity_days: Type.Optional(Days),
            countries: Type.Optional(Type.Array(Country, { minItems: 1, maxItems: 250 })),
            region: Type.Optional(Region),
            price: Type.Optional(Price),
            status: Type.Optional(SaleStatus),
          },
          strict,
        ),
        response: { 200: EsimPackage },
      },
      config: { errors: ['esim_package_not_found', 'esim_package_unavailable'] },
    },
    async (req) => updatePackage(unitOf(req, deps), req.params.package_id, req.body),
  )

  app.patch(
    '/operator/v1/esim/top_ups/:top_up_id',
    {
      schema: {
        tags,
        summary: 'Change an add-on: price, name or sale status',
        params: Type.Object({ top_up_id: Type.String() }),
        body: Type.Object(
          {
            name: Type.Optional(Name),
            price: Type.Optional(Price),
            status: Type.Optional(SaleStatus),
          },
          strict,
        ),
        response: { 200: EsimTopUp },
      },
      config: { errors: ['esim_package_not_found', 'esim_package_unavailable'] },
    },
    async (req) => updateTopUp(unitOf(req, deps), req.params.top_up_id, req.body),
  )
}
