import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import { CardIdParams, SpendLimitList } from './spend-limits-schemas.js'
import { cardSpendLimits } from './spend-limits-service.js'

/** `GET /v1/cards/{id}/spend_limits`: what is left of each limit on a card (its controls and the rules' limits). */
export function registerSpendLimits(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  app.get(
    '/v1/cards/:card_id/spend_limits',
    {
      config: { scope: 'cards:read', errors: ['card_not_found'] },
      schema: {
        tags: ['Cards'],
        summary: "List what is left of a card's spending limits",
        description:
          'Every limit that applies to the card: its own spending controls (`source.type: "card_control"`), then ' +
          'the enabled velocity limits of the authorization rules that apply to it, active and shadow (`source.mode`), ' +
          'in id order. `used_*` is what the next authorization would be compared with (held plus captured; a ' +
          'reversal frees its amount); an account or cardholder rule counts every card of it. `resets_at`: a calendar ' +
          "window's next start (00:00 UTC; the week on Monday), a rolling window's oldest counted spend leaving it.",
        params: CardIdParams,
        response: { 200: SpendLimitList },
      },
    },
    async (req) => cardSpendLimits(deps, req.ctx, req.params.card_id),
  )
}
