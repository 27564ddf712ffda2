import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { ListEnvelope, PageQuery } from '../../http/pagination.js'
import { getAlertSettings, putAlertSettings } from './alerts.js'
import { listEsims, retrieveEsim } from './esims-service.js'
import { updateEsim } from './lifecycle-service.js'
import { cancelEsim, changeSuspension } from './status-service.js'
import {
  AlertSettingsRequest,
  Esim,
  EsimAlertSettings,
  EsimIdParams,
  EsimListQuery,
  EsimOrder,
  EsimSummary,
  EsimTopUp,
  EsimUpdateRequest,
  TopUpPurchaseRequest,
} from './schemas.js'
import { listTopUpOffers, purchaseTopUp } from './top-ups-service.js'
import { unitOf } from '../../http/idempotency.js'
import { NoBody } from '../../http/schema-types.js'

/** `/v1/esim/esims`, their top-ups and lifecycle, and the alert settings. */
export function registerEsimRoutes(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['eSIMs']

  app.get(
    '/v1/esim/alert_settings',
    {
      config: { scope: 'esim:read' },
      schema: {
        tags,
        summary: "Retrieve the organization's eSIM alert settings",
        description:
          'The usage thresholds (percent of a package) and validity warnings (hours before the validity ends) that apply to every ' +
          'eSIM of this environment without settings of its own. Until set: `[80, 100]` and `[24]` (`updated_at` null).',
        response: { 200: EsimAlertSettings },
      },
    },
    async (req) => getAlertSettings(deps, req.ctx),
  )

  app.put(
    '/v1/esim/alert_settings',
    {
      config: { scope: 'esim:write' },
      schema: {
        tags,
        summary: "Replace the organization's eSIM alert settings",
        description:
          'Each usage threshold emits esim.usage_threshold_reached once per package (`data.threshold_pct`, `data.data_used_mb`, ' +
          '`data.data_remaining_mb`); each warning emits esim.validity_expiring once (`data.hours_left`). Thresholds 1–100 ascending, hours ' +
          '1–720 descending, no duplicates; `[]` turns a kind off. esim.low_data keeps firing at 80 % whatever the thresholds. ' +
          "An eSIM's own settings (`PATCH /v1/esim/esims/{id}`) win over these.",
        body: AlertSettingsRequest,
        response: { 200: EsimAlertSettings },
      },
    },
    async (req) => putAlertSettings(unitOf(req, deps), req.ctx, req.body),
  )

  app.get(
    '/v1/esim/esims',
    {
      config: { scope: 'esim:read' },
      schema: {
        tags,
        summary: 'List eSIMs, newest first',
        description:
          'Without activation codes: retrieve one eSIM to get its activation code and install links. Filter: `cardholder_id`.',
        querystring: EsimListQuery,
        response: { 200: ListEnvelope(EsimSummary, 'EsimSummary') },
      },
    },
    async (req) => listEsims(deps, req.ctx, req.query),
  )

  app.get(
    '/v1/esim/esims/:esim_id',
    {
      config: { scope: 'esim:read', errors: ['esim_not_found'] },
      schema: {
        tags,
        summary: 'Retrieve an eSIM with its activation code',
        description:
          '`activation_code` (`LPA:1$<SM-DP+>$<matching id>`) is the profile itself: show it as a QR code or use the one-tap install links. ' +
          '`packages` lists what runs on the eSIM with its usage.',
        params: EsimIdParams,
        response: { 200: Esim },
      },
    },
    async (req) => retrieveEsim(deps, req.ctx, req.params.esim_id),
  )

  app.patch(
    '/v1/esim/esims/:esim_id',
    {
      config: {
        scope: 'esim:write',
        errors: [
          'esim_not_found',
          'esim_invalid_state',
          'esim_top_up_unavailable',
          'account_not_found',
          'account_cardholder_mismatch',
          'currency_mismatch',
        ],
      },
      schema: {
        tags,
        summary: "Change an eSIM's alert settings and auto top-up",
        description:
          "`alert_settings`: this eSIM's own usage thresholds and validity warnings, each field replacing its own (null: the " +
          "organization's again); null drops both. A warning already due under the new settings is sent at once. " +
          '`auto_top_up`: buy the add-on `top_up_id` from `account_id` each time usage crosses the trigger (`depleted`, or ' +
          '`threshold` at `threshold_pct` of the running package), at most `max_per_month` times per calendar month (UTC); null ' +
          'turns it off. Exactly one top-up per crossing (an order of `type: top_up`, `trigger: auto`, esim.topped_up); an ' +
          'account without funds gives esim.auto_top_up_failed and the next crossing tries again. The add-on must extend a ' +
          'package on this eSIM (`esim_top_up_unavailable`, param `auto_top_up.top_up_id`); the account must be the ' +
          "cardholder's and its currency reachable (param `auto_top_up.account_id`).",
        params: EsimIdParams,
        body: EsimUpdateRequest,
        response: { 200: Esim },
      },
    },
    async (req) => updateEsim(unitOf(req, deps), req.ctx, req.params.esim_id, req.body),
  )

  app.post(
    '/v1/esim/esims/:esim_id/cancel',
    {
      config: {
        scope: 'esim:write',
        errors: ['esim_not_found', 'esim_invalid_state', 'account_not_fundable'],
      },
      schema: {
        tags,
        summary: 'Cancel an eSIM never installed nor used, refunding it',
        description:
          'Only while the eSIM was never installed on a device and no data was used (else `esim_invalid_state`). Every order that put a ' +
          'package on it is refunded: the account that paid is credited what it was charged (ledger entry `esim_refund`, ' +
          'account.credited), an order billed to the organization gets `refunded_at` and is not billed. The eSIM and its packages become ' +
          '`canceled` (final); emits esim.canceled. Canceling again answers the canceled eSIM and refunds nothing twice.',
        params: EsimIdParams,
        body: NoBody,
        response: { 200: Esim },
      },
    },
    async (req) => cancelEsim(unitOf(req, deps), req.ctx, req.params.esim_id),
  )

  for (const operation of ['suspend', 'resume'] as const) {
    app.post(
      `/v1/esim/esims/:esim_id/${operation}`,
      {
        config: {
          scope: 'esim:write',
          errors: [
            'esim_not_found',
            'esim_invalid_state',
            'operation_unsupported',
            'processor_unavailable',
          ],
        },
        schema: {
          tags,
          summary:
            operation === 'suspend'
              ? 'Suspend an eSIM at the network'
              : 'Resume a suspended eSIM at the network',
          description:
            operation === 'suspend'
              ? 'The network bars the profile: no data flows (usage reports are refused) until resumed. The eSIM reads `suspended` and ' +
                'esim.updated is emitted. An eSIM already suspended is answered unchanged. `operation_unsupported` when the network of this ' +
                'deployment cannot suspend; `esim_invalid_state` on a canceled eSIM.'
              : 'The network lets the profile back: the eSIM returns to the status it had and esim.updated is emitted. An eSIM not ' +
                'suspended is answered unchanged. `operation_unsupported` when the network cannot resume.',
          params: EsimIdParams,
          body: NoBody,
          response: { 200: Esim },
        },
      },
      async (req) => changeSuspension(unitOf(req, deps), req.ctx, req.params.esim_id, operation),
    )
  }

  app.get(
    '/v1/esim/esims/:esim_id/top_ups',
    {
      config: { scope: 'esim:read', errors: ['esim_not_found'] },
      schema: {
        tags,
        summary: 'List the top-ups this eSIM accepts now',
        description:
          'Add-ons that are sold and extend a package running on this eSIM. Read it immediately before buying one.',
        params: EsimIdParams,
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: ListEnvelope(EsimTopUp, 'EsimTopUp') },
      },
    },
    async (req) => listTopUpOffers(deps, req.ctx, req.params.esim_id, req.query),
  )

  app.post(
    '/v1/esim/esims/:esim_id/top_ups',
    {
      config: {
        scope: 'esim:write',
        errors: [
          'esim_not_found',
          'esim_invalid_state',
          'esim_top_up_unavailable',
          'esim_order_reference_exists',
          'account_not_found',
          'insufficient_funds',
          'currency_mismatch',
          'account_blocked',
          'account_cardholder_mismatch',
          'account_not_provisioned',
        ],
      },
      schema: {
        tags,
        summary: 'Buy a top-up for an eSIM',
        description:
          'Adds data (and validity) to the running package it extends; no new activation code. Answers `201` with an order of `type: top_up`. ' +
          '`esim_top_up_unavailable` when the add-on is no longer sold or its package is not running. Emits esim_order.created and esim.topped_up.',
        params: EsimIdParams,
        body: TopUpPurchaseRequest,
        response: { 201: EsimOrder },
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(await purchaseTopUp(unitOf(req, deps), req.ctx, req.params.esim_id, req.body)),
  )
}
