import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppDeps } from '../app-deps.js'
import { fxRefusal } from '../http/fx-errors.js'
import { CurrencyCode } from '../http/schema-types.js'
import { pinSandboxFxRate, sandboxFxRate, type SandboxRate } from './sandbox-fx.js'

export const FxRate = Type.Object(
  {
    object: Type.Literal('fx_rate'),
    base: Type.String({ description: "The currency converted from (a merchant's), ISO 4217" }),
    quote: Type.String({ description: "The currency converted into (an account's), ISO 4217" }),
    rate: Type.String({
      pattern: '^[0-9]+(\\.[0-9]+)?$',
      description:
        'Units of `quote` one unit of `base` buys (major units), as a decimal string: at most 12 significant digits and ' +
        '18 decimals, never a binary float. An authorization in `base` on an account in `quote` converts at it: amount = ' +
        "merchant_amount × rate × (1 + markup_bps / 10 000), rounded half away from zero in the account currency's minor units.",
    }),
    source: Type.Literal('sandbox', {
      description: 'The sandbox rate table (or a rate your organization pinned in it)',
    }),
    pinned: Type.Boolean({
      description:
        'True when your organization pinned this rate (PUT /v1/simulate/fx_rates/{base}/{quote})',
    }),
    rate_at: Type.String({
      format: 'date-time',
      description:
        'When the rate was set: when it was pinned, else the time of the request (the built-in table does not move)',
    }),
  },
  {
    title: 'FxRate',
    examples: [
      {
        object: 'fx_rate',
        base: 'EUR',
        quote: 'USD',
        rate: '1.08695652174',
        source: 'sandbox',
        pinned: false,
        rate_at: '2026-11-20T09:30:00.000Z',
      },
    ],
  },
)

const Currency = (description: string) => CurrencyCode(description)

function present(rate: SandboxRate) {
  return {
    object: 'fx_rate' as const,
    base: rate.base,
    quote: rate.quote,
    rate: rate.rate,
    source: rate.source,
    pinned: rate.pinned,
    rate_at: rate.rateAt.toISOString(),
  }
}

/**
 * The sandbox rate table: `GET /v1/fx_rates` reads a rate, `PUT /v1/simulate/fx_rates/{base}/{quote}` pins one for the
 * calling organization's sandbox. Both need the transactions scopes: the rate is what authorizations convert at.
 */
export function registerFxRateRoutes(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/v1/fx_rates',
    {
      config: { scope: 'transactions:read' },
      schema: {
        tags: ['FX rates'],
        summary: 'Retrieve the rate from one currency to another',
        description:
          "The rate a card spend in `base` (the merchant's currency) converts into `quote` (the account's) at in the sandbox: " +
          "your organization's pinned rate, else the built-in sandbox rate table (a fixed, realistic rate for every ISO 4217 currency the " +
          'service knows, crossed through the US dollar). The simulated processors convert at exactly this rate. In production a ' +
          'processor gives the rate with each authorization (its `fx.source` is `network`); this operation answers the same table there, ' +
          'as a reference, without pinned rates. Scope `transactions:read`. A currency the service does not know, or `quote` equal to ' +
          '`base`: `400 invalid_parameter` naming it.',
        querystring: Type.Object(
          {
            base: Currency('The currency converted from (three letters, either case)'),
            quote: Currency('The currency converted into (three letters, either case)'),
          },
          { additionalProperties: false },
        ),
        response: { 200: FxRate },
      },
    },
    async (req) => {
      const rate = await sandboxFxRate(
        deps.db,
        req.ctx,
        req.query.base,
        req.query.quote,
        deps.clock.now(),
      ).catch(fxRefusal)
      return present(rate)
    },
  )

  app.put(
    '/v1/simulate/fx_rates/:base/:quote',
    {
      config: { simulator: true, scope: 'transactions:write' },
      schema: {
        tags: ['Simulator'],
        summary: 'Pin a rate for your sandbox (sandbox only)',
        description:
          'From now on the simulated processors convert spends in `base` into accounts in `quote` at `rate` for your organization, ' +
          'and `GET /v1/fx_rates` answers it with `pinned: true`; pinning again replaces it. Only this direction is pinned: the rate from ' +
          "`quote` to `base` stays the table's (or its own pin). A currency the service does not know, `quote` equal to `base`, or a rate " +
          'that is zero, negative or not a decimal string: `400 invalid_parameter` naming it.',
        params: Type.Object({
          base: Currency('The currency converted from'),
          quote: Currency('The currency converted into'),
        }),
        body: Type.Object(
          {
            rate: Type.String({
              maxLength: 40,
              description:
                'Units of `quote` per unit of `base`, a positive decimal string such as "1.0825": digits and at most one decimal ' +
                'point, at most 12 significant digits and 18 decimals',
            }),
          },
          {
            additionalProperties: false,
            title: 'FxRatePinRequest',
            examples: [{ rate: '1.0825' }],
          },
        ),
        response: { 200: FxRate },
      },
    },
    async (req) => {
      const rate = await pinSandboxFxRate(
        deps.db,
        req.ctx,
        req.params.base,
        req.params.quote,
        req.body.rate,
        deps.clock.now(),
      ).catch(fxRefusal)
      return present(rate)
    },
  )
}
