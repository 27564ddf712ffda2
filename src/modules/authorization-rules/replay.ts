/**
 * A rule replayed over stored authorizations, as a pure function: what a backtest reports (how many of a window's
 * authorizations the rule would have declined, with examples). Condition rules and merchant locks only: a velocity
 * limit needs the window usage as it was at each authorization (holds, captures and reversals over time), which the
 * counters of a later step keep.
 *
 * The caller streams the authorizations oldest first, from an hour before the window on, so that each one's
 * `authorization_count_1h` and `decline_count_1h` are counted from the stream itself as the decision would have read
 * them; only those inside the window `[from, to)` whose card the rule's scope takes in are evaluated.
 */
import {
  type AuthorizationFacts,
  type CardTarget,
  ruleDeclines,
  scopeIncludes,
} from './evaluate.js'
import type { ConditionParameters, MerchantLockParameters, RuleScope } from './rule.js'

const HOUR_MS = 60 * 60 * 1000

/** One stored authorization, as the replay reads it. */
export interface StoredAuthorization {
  id: string
  card: CardTarget
  /** When its card was created (for `card_age_seconds`). */
  card_created_at: Date
  created_at: Date
  approved: boolean
  /** Minor units of the account currency. */
  amount: number
  merchant_amount: number
  merchant_currency: string
  merchant: { name: string | null; mcc: string | null; country: string | null }
}

export type ReplayableRule = { scope: RuleScope } & (
  | { type: 'condition'; parameters: ConditionParameters }
  | { type: 'merchant_lock'; parameters: MerchantLockParameters }
)

export interface ReplayExample {
  authorization_id: string
  card_id: string
  amount: number
  merchant: StoredAuthorization['merchant']
  created_at: Date
}

export interface ReplayReport {
  /** Authorizations of the window on cards the rule applies to. */
  evaluated_count: number
  /** Of those, how many the rule would have declined (whatever was answered then). */
  would_decline_count: number
  /** Of those, the ones that were approved: what turning the rule on would have changed. */
  approved_would_decline_count: number
  /** The first approved ones it would have declined, oldest first. */
  examples: ReplayExample[]
}

/** The facts a decision on `auth` would have read, with the card's last hour as counted from the stream. */
function factsOf(
  auth: StoredAuthorization,
  lastHour: { approved: number; declined: number },
): AuthorizationFacts {
  return {
    mcc: auth.merchant.mcc,
    merchant_country: auth.merchant.country,
    merchant_currency: auth.merchant_currency,
    merchant_name: auth.merchant.name,
    amount: auth.amount,
    merchant_amount: auth.merchant_amount,
    card_age_seconds: Math.max(
      0,
      Math.floor((auth.created_at.getTime() - auth.card_created_at.getTime()) / 1000),
    ),
    authorization_count_1h: lastHour.approved,
    decline_count_1h: lastHour.declined,
  }
}

/** Replays `rule` over `stream` (oldest first); see the file's comment. */
export function replayRule(
  rule: ReplayableRule,
  stream: Iterable<StoredAuthorization>,
  window: { from: Date; to: Date },
  maxExamples = 10,
): ReplayReport {
  const recent = new Map<string, StoredAuthorization[]>()
  const report: ReplayReport = {
    evaluated_count: 0,
    would_decline_count: 0,
    approved_would_decline_count: 0,
    examples: [],
  }
  let previous = Number.NEGATIVE_INFINITY
  for (const auth of stream) {
    const at = auth.created_at.getTime()
    if (at < previous) throw new RangeError('the stored authorizations must come oldest first')
    previous = at
    if (at >= window.to.getTime()) break
    // The card's authorizations of the hour before this one (this one excluded), as the decision counts them.
    const kept = (recent.get(auth.card.id) ?? []).filter(
      (a) => a.created_at.getTime() > at - HOUR_MS,
    )
    if (at >= window.from.getTime() && scopeIncludes(rule.scope, auth.card)) {
      const lastHour = {
        approved: kept.filter((a) => a.approved).length,
        declined: kept.filter((a) => !a.approved).length,
      }
      report.evaluated_count++
      if (ruleDeclines(rule, factsOf(auth, lastHour))) {
        report.would_decline_count++
        if (auth.approved) {
          report.approved_would_decline_count++
          if (report.examples.length < maxExamples)
            report.examples.push({
              authorization_id: auth.id,
              card_id: auth.card.id,
              amount: auth.amount,
              merchant: auth.merchant,
              created_at: auth.created_at,
            })
        }
      }
    }
    kept.push(auth)
    recent.set(auth.card.id, kept)
  }
  return report
}
