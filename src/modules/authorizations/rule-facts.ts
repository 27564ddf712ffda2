import {
  ACTIVITY_WINDOW,
  type AuthorizationFacts,
  bucketOf,
  liveFrom,
  sumLive,
} from '../authorization-rules/index.js'
import type { Decision, RulesInput } from './decide.js'
import type { DecisionFacts, DecisionWrite } from './repo.js'
import type { MerchantValue } from '../transactions/index.js'

/**
 * What the authorization rules read of one request (docs/authorization-rules.md): the merchant, the amount in the
 * account's currency and in the merchant's, the card's age, and its last hour (from its activity row, plus the
 * decisions on it earlier in the same batch). A pure function of what the decision already read.
 */
export function ruleFacts(input: {
  merchant: MerchantValue
  merchantCurrency: string
  amount: number
  merchantAmount: number
  cardCreatedAt: Date
  lastHour: { approved: number; declined: number }
  increment?: boolean
  now: Date
}): AuthorizationFacts {
  return {
    mcc: input.merchant.mcc,
    merchant_country: input.merchant.country,
    merchant_currency: input.merchantCurrency,
    merchant_name: input.merchant.name,
    amount: input.amount,
    merchant_amount: input.merchantAmount,
    card_age_seconds: Math.max(
      0,
      Math.floor((input.now.getTime() - new Date(input.cardCreatedAt).getTime()) / 1000),
    ),
    authorization_count_1h: input.lastHour.approved,
    decline_count_1h: input.lastHour.declined,
    ...(input.increment ? { increment: true } : {}),
  }
}

/** The card's authorizations of the last hour as its facts read them (zero when no rule reads them). */
export function lastHourOf(facts: Pick<DecisionFacts, 'activity'>, now: Date) {
  if (!facts.activity.needed) return { approved: 0, declined: 0 }
  const [approved, declined] = sumLive(facts.activity.buckets, ACTIVITY_WINDOW, now)
  return { approved, declined }
}

/** The rules of the decision, with their facts. */
export function rulesInput(
  facts: Pick<DecisionFacts, 'rules'>,
  ruleFactsValue: AuthorizationFacts,
): RulesInput | undefined {
  // Velocity limits are evaluated with the counters of their windows (a later step); the others read the facts alone.
  const rules = facts.rules.filter((r) => r.type !== 'velocity_limit')
  return rules.length === 0 ? undefined : { rules, facts: ruleFactsValue }
}

/**
 * What a new authorization's write does to its card's activity row: counted in it when a rule reads it (the row made
 * from what was read when the card had none), the row deleted when none does any more; nothing otherwise.
 */
export function activityWrite(
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
    seed: needed ? (buckets ?? {}) : null,
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
