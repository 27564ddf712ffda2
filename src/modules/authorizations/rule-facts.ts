import {
  ACTIVITY_WINDOW,
  type AuthorizationFacts,
  bucketOf,
  type CounterAdd,
  counterAdd,
  counterKey,
  velocityCounts,
  type DecisionRule,
  type EvaluableRule,
  liveFrom,
  sumLive,
  usageAt,
  type VelocityLimitParameters,
  type VelocityUsage,
} from '../authorization-rules/index.js'
import type { Decision, RulesInput } from './decide.js'
import type { DecisionFacts, DecisionWrite } from './repo.js'
import type { MerchantValue } from '../transactions/index.js'

/** What one request asks, as the rules read it. */
export interface RuleRequest {
  merchant: MerchantValue
  merchantCurrency: string
  /** In the account's currency (an increment: its increase). */
  amount: number
  merchantAmount: number
  increment?: boolean
}

/** What a decision's write does for the rules: its guards, what it adds to counters, its card's activity. */
export interface RulesWrite {
  guards: { key: string; version: string | null }[]
  counts: CounterAdd[]
  activity: DecisionWrite['activity']
}

type Velocity = DecisionRule & { type: 'velocity_limit'; parameters: VelocityLimitParameters }

const isVelocity = (rule: DecisionRule): rule is Velocity => rule.type === 'velocity_limit'

/**
 * The authorization rules' side of deciding a batch (docs/authorization-rules.md, "In the decision"): the facts each
 * request gives the rules, the usage of each velocity limit's counter as read plus the batch's approvals before it,
 * and the card's last hour as read plus the batch's decisions on the card before it. Pure: it works on what the
 * decision statement read, and answers what the write must guard and add.
 */
export class BatchRules {
  private readonly hour = new Map<string, { approved: number; declined: number }>()
  private readonly used = new Map<string, VelocityUsage>()

  constructor(private readonly now: Date) {}

  /** The rules' input of one request on the card of `f`, and the facts they read. */
  judge(
    f: DecisionFacts,
    request: RuleRequest,
  ): { input: RulesInput | undefined; facts: AuthorizationFacts } {
    const earlier = this.hour.get(f.card.id) ?? { approved: 0, declined: 0 }
    const stored = lastHourOf(f, this.now)
    const facts: AuthorizationFacts = {
      mcc: request.merchant.mcc,
      merchant_country: request.merchant.country,
      merchant_currency: request.merchantCurrency,
      merchant_name: request.merchant.name,
      amount: request.amount,
      merchant_amount: request.merchantAmount,
      card_age_seconds: Math.max(
        0,
        Math.floor((this.now.getTime() - new Date(f.card.created_at).getTime()) / 1000),
      ),
      authorization_count_1h: stored.approved + earlier.approved,
      decline_count_1h: stored.declined + earlier.declined,
      ...(request.increment ? { increment: true } : {}),
    }
    if (f.rules.length === 0) return { input: undefined, facts }
    const usageOf = (rule: EvaluableRule): VelocityUsage => {
      const velocity = rule as Velocity
      const key = counterKey(velocity, f.card)
      const read = usageAt(f.counters.get(key), velocity.parameters, this.now)
      const added = this.used.get(key)
      return {
        used_amount: read.used_amount + (added?.used_amount ?? 0),
        used_count: read.used_count + (added?.used_count ?? 0),
      }
    }
    return { input: { rules: f.rules, facts, usageOf }, facts }
  }

  /**
   * After a new authorization's decision: the cardholders' counters whose usage its verdict rested on (the velocity
   * limits whose filters let it through, when the decision reached the rules), what an approval adds to them (counted in the
   * bucket of `at`, its creation), and its card's activity; later requests of the batch count it.
   */
  decided(
    f: DecisionFacts,
    facts: AuthorizationFacts,
    decision: Decision,
    amount: number,
    at: Date,
  ): RulesWrite {
    const earlier = this.hour.get(f.card.id) ?? { approved: 0, declined: 0 }
    this.hour.set(f.card.id, {
      approved: earlier.approved + (decision.approved ? 1 : 0),
      declined: earlier.declined + (decision.approved ? 0 : 1),
    })
    const write: RulesWrite = {
      guards: [],
      counts: [],
      activity: activityWrite(f, at, this.now),
    }
    if (!decision.rules) return write
    for (const rule of f.rules.filter(isVelocity)) {
      if (!velocityCounts(rule.parameters, facts)) continue
      const key = counterKey(rule, f.card)
      // A cardholder's counter is guarded by its version; a card's or an account's by its account's.
      if (rule.parameters.aggregate === 'cardholder')
        write.guards.push({ key, version: f.counters.get(key)?.version ?? null })
      if (!decision.approved) continue
      write.counts.push(counterAdd(key, rule.parameters, amount, at, this.now))
      const added = this.used.get(key) ?? { used_amount: 0, used_count: 0 }
      this.used.set(key, {
        used_amount: added.used_amount + amount,
        used_count: added.used_count + 1,
      })
    }
    return write
  }
}

/** The card's authorizations of the last hour as its facts read them (zero when no rule reads them). */
function lastHourOf(facts: Pick<DecisionFacts, 'activity'>, now: Date) {
  if (!facts.activity.needed) return { approved: 0, declined: 0 }
  const [approved, declined] = sumLive(facts.activity.buckets, ACTIVITY_WINDOW, now)
  return { approved, declined }
}

/**
 * What a new authorization's write does to its card's activity row: counted in it when a rule reads it (the row made
 * from what was read when the card had none), the row deleted when none does any more; nothing otherwise.
 */
function activityWrite(
  facts: Pick<DecisionFacts, 'activity'>,
  at: Date,
  now: Date,
): DecisionWrite['activity'] {
  const { needed, tracked, buckets } = facts.activity
  if (!needed && !tracked) return undefined
  return {
    mode: needed ? 'track' : 'drop',
    bucket: bucketOf(ACTIVITY_WINDOW, at),
    keepFrom: liveFrom(ACTIVITY_WINDOW, now),
    // Only a card without a row sends what it read: the write adds a row's decisions to the row as it is.
    seed: needed && !tracked ? (buckets ?? {}) : null,
  }
}

/** The rule results and declining rule a decision records (none when it did not reach the rules). */
export function ruleRecord(decision: Decision): {
  rule_results: NonNullable<Decision['rules']>
  rule_id: string | null
} {
  return {
    rule_results: decision.rules ?? [],
    rule_id: decision.approved ? null : (decision.ruleId ?? null),
  }
}
