/**
 * `GET /v1/cards/{id}/spend_limits`: every limit that applies to a card and what is left of it (docs/cards.md,
 * "What is left of each limit"). The card's own spending limits are summed as the decision sums them (`spendSince`,
 * the same windows), the authorization rules' velocity limits read from the counters the decision reads; so what is
 * answered is what the next decision would compare with each limit.
 */
import type { AppDeps } from '../../app-deps.js'
import type { RequestCtx } from '../../http/context.js'
import { requireAccount } from '../accounts/index.js'
import { ruleLimitsOf, windowResetsAt } from '../authorization-rules/index.js'
import { requireCardOnClock } from '../cards/index.js'
import { WINDOW_INTERVALS, type WindowInterval, windowStart } from './decide.js'
import { spendSince } from './repo.js'
import type { SpendLimitListView, SpendLimitView } from './spend-limits-schemas.js'

/** The rules' window each windowed card interval counts in (the same UTC periods). */
const WINDOW_OF = {
  daily: 'day',
  weekly: 'week',
  monthly: 'month',
  all_time: 'all_time',
} as const satisfies Record<WindowInterval, string>

const left = (limit: number | null, used: number | null) =>
  limit === null ? null : Math.max(0, limit - (used ?? 0))

export async function cardSpendLimits(
  deps: AppDeps,
  ctx: RequestCtx,
  cardId: string,
): Promise<SpendLimitListView> {
  // A card under a sandbox clock: its windows are the clock's (docs/sandbox-clocks.md).
  const { card, deps: clocked, clockId } = await requireCardOnClock(deps, ctx, cardId)
  const account = await requireAccount(deps.db, ctx, card.account_id)
  const now = clocked.clock.now()
  const limits = (card.spending_controls?.spending_limits ?? []) as {
    amount: number
    interval: string
  }[]
  const windowed = WINDOW_INTERVALS.filter((w) => limits.some((l) => l.interval === w))
  const spent = await spendSince(
    deps.db,
    card.id,
    windowed.map((interval) => ({ interval, from: windowStart(interval, now) })),
    clockId !== null,
  )
  const controls = limits.map((limit): SpendLimitView => {
    const interval = limit.interval as WindowInterval | 'per_authorization'
    const window =
      interval === 'per_authorization'
        ? ({ type: 'per_authorization', seconds: null } as const)
        : ({ type: WINDOW_OF[interval], seconds: null } as const)
    const used = interval === 'per_authorization' ? null : (spent[interval] ?? 0)
    return {
      source: { type: 'card_control', interval, rule_id: null, name: null, mode: null },
      window,
      aggregate: 'card',
      currency: account.currency,
      limit_amount: limit.amount,
      used_amount: used,
      remaining_amount: left(limit.amount, used),
      limit_count: null,
      used_count: null,
      remaining_count: null,
      resets_at:
        window.type === 'per_authorization'
          ? null
          : (windowResetsAt(window, now)?.toISOString() ?? null),
    }
  })
  const rules = (await ruleLimitsOf(deps.db, ctx, card, now)).map(
    (r): SpendLimitView => ({
      source: {
        type: 'authorization_rule',
        interval: null,
        rule_id: r.rule_id,
        name: r.name,
        mode: r.mode,
      },
      window: r.window,
      aggregate: r.aggregate,
      currency: account.currency,
      limit_amount: r.limit_amount,
      used_amount: r.used_amount,
      remaining_amount: left(r.limit_amount, r.used_amount),
      limit_count: r.limit_count,
      used_count: r.used_count,
      remaining_count: left(r.limit_count, r.used_count),
      resets_at: r.resets_at?.toISOString() ?? null,
    }),
  )
  return { object: 'list', data: [...controls, ...rules] }
}
