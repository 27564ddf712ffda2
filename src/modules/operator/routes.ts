import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import type { Db } from '../../db/types.js'
import {
  createClient,
  createOrganization,
  getClient,
  getOrganization,
  listClients,
  listOrganizations,
  presentClient,
  putNetworkPolicy,
  revokeClient,
  updateClient,
  SCOPES,
} from '../oauth/index.js'
import {
  createProgram,
  ForeignSpend,
  FxFee,
  FxMarkupBps,
  getProgram,
  listOrganizationPrograms,
  presentProgram,
  updateProgram,
} from '../programs/index.js'
import { audit, inviteUser } from '../users/index.js'
import { clientAddress } from '../../http/ip.js'
import { PageQuery } from '../../http/pagination.js'
import { CurrencyCode } from '../../http/schema-types.js'
import { unitOf } from '../../http/idempotency.js'

const Environment = Type.Union([Type.Literal('sandbox'), Type.Literal('production')])
const Currency = CurrencyCode()
const Cidrs = Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 })
const Jwks = Type.Object(
  { keys: Type.Array(Type.Object({}, { additionalProperties: true })) },
  { additionalProperties: true },
)
const tags = ['Operator']
const strict = { additionalProperties: false }

const Role = Type.Union([
  Type.Literal('owner'),
  Type.Literal('developer'),
  Type.Literal('viewer'),
  Type.Literal('operator'),
])
const UserInvitation = Type.Object(
  {
    object: Type.Literal('user_invitation'),
    id: Type.String({ description: 'inv_ id' }),
    user_id: Type.String({ description: 'usr_ id of the invited person' }),
    email: Type.String(),
    role: Role,
    organization_id: Type.Union([Type.String(), Type.Null()], {
      description: 'null for a platform operator',
    }),
    url: Type.String({
      description: 'The one-time link that sets the password; its token is shown only here',
    }),
    expires_at: Type.String({ format: 'date-time', description: '72 hours after creation' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { title: 'UserInvitation' },
)

/** /operator/v1: the platform operator's API (organizations, programs, clients, network policies, console invitations). */
export function registerOperator(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  /**
   * A client change through the operator API (`svc client …`) in its organization's audit log, as the console's own
   * changes are: the operator as the actor (no user), in the change's transaction.
   */
  const audited =
    (req: FastifyRequest, action: string) =>
    (trx: Db, client: { id: string; organization_id: string }) =>
      audit(
        trx,
        { userId: null, organizationId: client.organization_id, now: deps.clock.now() },
        action,
        client.id,
        clientAddress(req),
      )

  app.post(
    '/operator/v1/organizations',
    {
      schema: {
        tags,
        summary: 'Create an organization',
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, strict),
      },
      config: { created: true },
    },
    async (req, reply) =>
      reply.code(201).send(await createOrganization(unitOf(req, deps), req.body.name)),
  )

  app.get(
    '/operator/v1/organizations',
    {
      schema: {
        tags,
        summary: 'List organizations, oldest first',
        querystring: Type.Object(PageQuery, strict),
      },
    },
    async (req) => listOrganizations(deps, req.query),
  )

  app.get(
    '/operator/v1/organizations/:id',
    {
      schema: {
        tags,
        summary: 'Retrieve an organization',
        params: Type.Object({ id: Type.String() }),
      },
      config: { errors: ['organization_not_found'] },
    },
    async (req) => getOrganization(deps, req.params.id),
  )

  app.put(
    '/operator/v1/organizations/:id/network_policy',
    {
      schema: {
        tags,
        summary: "Set an organization's IP allowlist for one environment (empty: no restriction)",
        params: Type.Object({ id: Type.String() }),
        body: Type.Object({ environment: Environment, ip_allowlist: Cidrs }, strict),
      },
      config: { errors: ['organization_not_found'] },
    },
    async (req) =>
      putNetworkPolicy(deps, req.params.id, req.body.environment, req.body.ip_allowlist),
  )

  app.post(
    '/operator/v1/programs',
    {
      schema: {
        tags,
        summary: 'Create a program for an organization',
        body: Type.Object(
          {
            organization_id: Type.String(),
            environment: Environment,
            name: Type.String({ minLength: 1, maxLength: 200 }),
            processor: Type.Union(deps.processors.names().map((p) => Type.Literal(p))),
            currencies: Type.Array(Currency, { minItems: 1, maxItems: 20 }),
            form_factors: Type.Optional(
              Type.Array(Type.Union([Type.Literal('virtual'), Type.Literal('physical')]), {
                minItems: 1,
              }),
            ),
            card_types: Type.Optional(
              Type.Array(
                Type.Union([
                  Type.Literal('debit'),
                  Type.Literal('prepaid'),
                  Type.Literal('credit'),
                ]),
                { minItems: 1 },
              ),
            ),
            card_brand: Type.Optional(
              Type.Union([Type.Literal('visa'), Type.Literal('mastercard')]),
            ),
            bin: Type.Optional(Type.String({ pattern: '^[0-9]{6,8}$' })),
            kyc_initial_status: Type.Optional(
              Type.Union([Type.Literal('not_started'), Type.Literal('pending')]),
            ),
            pin_key_configured: Type.Optional(Type.Boolean()),
            foreign_spend: Type.Optional(ForeignSpend),
            fx_markup_bps: Type.Optional(FxMarkupBps),
            fx_fee: Type.Optional(FxFee),
          },
          strict,
        ),
      },
      config: { created: true, errors: ['organization_not_found'] },
    },
    async (req, reply) => {
      await getOrganization(unitOf(req, deps), req.body.organization_id)
      return reply.code(201).send(presentProgram(await createProgram(unitOf(req, deps), req.body)))
    },
  )

  app.get(
    '/operator/v1/programs/:id',
    {
      schema: { tags, summary: 'Retrieve a program', params: Type.Object({ id: Type.String() }) },
      config: { errors: ['program_not_found'] },
    },
    async (req) => presentProgram(await getProgram(deps, req.params.id)),
  )

  app.patch(
    '/operator/v1/programs/:id',
    {
      schema: {
        tags,
        summary: "Change a program's name or foreign-exchange settings",
        description:
          'Fields left out stay as they are. Applies to the authorizations that come after; what the processor gives the ' +
          'program (capabilities, form factors, card traits) and its currencies do not change.',
        params: Type.Object({ id: Type.String() }),
        body: Type.Object(
          {
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            foreign_spend: Type.Optional(ForeignSpend),
            fx_markup_bps: Type.Optional(FxMarkupBps),
            fx_fee: Type.Optional(FxFee),
          },
          strict,
        ),
      },
      config: { errors: ['program_not_found'] },
    },
    async (req) => presentProgram(await updateProgram(unitOf(req, deps), req.params.id, req.body)),
  )

  app.get(
    '/operator/v1/programs',
    {
      schema: {
        tags,
        summary: 'List programs of an organization, oldest first',
        querystring: Type.Object({ organization_id: Type.String(), ...PageQuery }, strict),
      },
    },
    async (req) => {
      const { organization_id, ...page } = req.query
      return listOrganizationPrograms(deps, organization_id, page)
    },
  )

  app.post(
    '/operator/v1/clients',
    {
      schema: {
        tags,
        summary: 'Register an OAuth client (public keys only)',
        body: Type.Object(
          {
            organization_id: Type.String(),
            environment: Environment,
            label: Type.String({ minLength: 1, maxLength: 200 }),
            scopes: Type.Optional(
              Type.Array(Type.String(), { description: `Any of: ${SCOPES.join(', ')}` }),
            ),
            jwks: Jwks,
            ip_allowlist: Type.Optional(Type.Union([Cidrs, Type.Null()])),
          },
          strict,
        ),
      },
      config: { created: true, errors: ['organization_not_found', 'invalid_public_key'] },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(
          presentClient(
            await createClient(unitOf(req, deps), req.body, audited(req, 'client.created')),
          ),
        ),
  )

  app.get(
    '/operator/v1/clients',
    {
      schema: {
        tags,
        summary: 'List clients of an organization, oldest first',
        querystring: Type.Object({ organization_id: Type.String(), ...PageQuery }, strict),
      },
    },
    async (req) => {
      const { organization_id, ...page } = req.query
      return listClients(deps, organization_id, page)
    },
  )

  app.get(
    '/operator/v1/clients/:id',
    {
      schema: { tags, summary: 'Retrieve a client', params: Type.Object({ id: Type.String() }) },
      config: { errors: ['client_not_found'] },
    },
    async (req) => presentClient(await getClient(deps, req.params.id)),
  )

  app.patch(
    '/operator/v1/clients/:id',
    {
      schema: {
        tags,
        summary: 'Change label, scopes, keys or allowlist (applies to the next token)',
        params: Type.Object({ id: Type.String() }),
        body: Type.Object(
          {
            label: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            scopes: Type.Optional(Type.Array(Type.String())),
            jwks: Type.Optional(Jwks),
            ip_allowlist: Type.Optional(Type.Union([Cidrs, Type.Null()])),
          },
          strict,
        ),
      },
      config: { errors: ['client_not_found', 'invalid_public_key'] },
    },
    async (req) =>
      presentClient(
        await updateClient(
          unitOf(req, deps),
          req.params.id,
          req.body,
          audited(req, 'client.updated'),
        ),
      ),
  )

  app.post(
    '/operator/v1/clients/:id/revoke',
    {
      schema: {
        tags,
        summary: 'Revoke a client: immediate and final',
        params: Type.Object({ id: Type.String() }),
      },
      config: { errors: ['client_not_found'] },
    },
    async (req) =>
      presentClient(
        await revokeClient(unitOf(req, deps), req.params.id, audited(req, 'client.revoked')),
      ),
  )

  app.post(
    '/operator/v1/users/invitations',
    {
      schema: {
        tags,
        summary:
          'Invite a person to the management console (a one-time link, valid 72 hours, that sets their password)',
        description:
          'An organization member (`owner`, `developer`, `viewer`, with `organization_id`) or a platform operator (`operator`, without ' +
          'it). Inviting again someone who has not set a password yet retires their earlier links. `svc user invite` calls this.',
        body: Type.Object(
          {
            email: Type.String({ format: 'email', maxLength: 254 }),
            role: Role,
            organization_id: Type.Optional(Type.String({ maxLength: 64 })),
          },
          strict,
        ),
        response: { 201: UserInvitation },
      },
      config: { created: true, errors: ['organization_not_found', 'user_already_exists'] },
    },
    async (req, reply) => {
      const organizationId = req.body.organization_id ?? null
      if (organizationId !== null && req.body.role !== 'operator')
        await getOrganization(unitOf(req, deps), organizationId)
      const actor = { userId: null, organizationId: null, now: deps.clock.now() }
      return reply
        .code(201)
        .send(
          await inviteUser(
            unitOf(req, deps),
            { email: req.body.email, role: req.body.role, organizationId },
            actor,
            clientAddress(req),
          ),
        )
    },
  )
}
