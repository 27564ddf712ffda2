/**
 * What each velocity limit that applies to a card has used of its window and has left, read from the counters the
 * decision reads (`GET /v1/cards/{id}/spend_limits`, docs/authorization-rules.md, "Remaining"): the same sums at the
 * same instant, so what is answered here is what the next decision would compare with the limit.
 */
import type { Db } from '../../db/types.js'
import type { Scope } from '../../http/context.js'
import { oldestLeavesAt } from './buckets.js'
import { counterKey, usageAt } from './counters.js'
import { findCounters } from './counters-repo.js'
import type { CardTarget } from './evaluate.js'
import { velocityRulesOf } from './repo.js'
import type { Aggregate, RuleMode, RuleWindow, VelocityLimitParameters } from './rule.js'

/** One velocity limit on a card, with its window's usage at `now` for the card's aggregate. */
export interface RuleLimit {
  rule_id: string
  name: string
  mode: RuleMode
  window: RuleWindow
  aggregate: Aggregate
  limit_amount: number | null
  limit_count: number | null
  used_amount: number
  used_count: number
  /**
   * When what the window counts stops counting: the next calendar window's start; for a rolling window, when the
   * oldest bucket still counted leaves it (null when it counts nothing); null for `all_time`.
   */
  resets_at: Date | null
}

/** The enabled velocity limits (active and shadow) that apply to `card`, in id order, with their usage at `now`. */
export async function ruleLimitsOf(
  db: Db,
  scope: Scope,
  card: CardTarget,
  now: Date,
): Promise<RuleLimit[]> {
  const rules = await velocityRulesOf(db, scope.organizationId, scope.environment, card)
  const keyed = rules.map((rule) => {
    const parameters = rule.parameters as VelocityLimitParameters
    const key = counterKey({ id: rule.id, generation: rule.counter_generation, parameters }, card)
    return { rule, parameters, key }
  })
  const counters = await findCounters(
    db,
    keyed.map((k) => k.key),
  )
  return keyed.map(({ rule, parameters, key }) => {
    const buckets = counters.get(key)
    const usage = usageAt(buckets && { buckets }, parameters, now)
    return {
      rule_id: rule.id,
      name: rule.name,
      mode: rule.mode,
      window: parameters.window,
      aggregate: parameters.aggregate,
      limit_amount: parameters.limit_amount,
      limit_count: parameters.limit_count,
      used_amount: usage.used_amount,
      used_count: usage.used_count,
      resets_at: oldestLeavesAt(buckets, parameters.window, now),
    }
  })
}
