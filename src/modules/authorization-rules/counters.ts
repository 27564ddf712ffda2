/**
 * Velocity limits' counters as values (docs/authorization-rules.md, "Counters"): which counter a rule and a card count
 * in, what a decision on the card has used of it, and what an approval adds to it. The SQL that reads, guards and
 * writes them is `decision-plan.ts`'s; this file is pure.
 */
import { bucketLeavesAt, bucketOf, type Buckets, liveFrom, sumLive } from './buckets.js'
import type { AuthorizationFacts, CardTarget, VelocityUsage } from './evaluate.js'
import { matchesVelocityFilters } from './evaluate.js'
import type { Aggregate, VelocityLimitParameters } from './rule.js'

/**
 * A counter as a decision read it: its buckets and its row's version (null: no row was found). `guarded`: a cardholder's
 * counter, whose version the write compares (a card's or an account's is guarded by its account's version).
 */
export interface CounterRead {
  buckets: Buckets
  version: string | null
  guarded: boolean
}

/** The id whose spending an aggregate sums: the card's own, its account's or its cardholder's. */
export function aggregateIdOf(aggregate: Aggregate, card: CardTarget): string {
  if (aggregate === 'card') return card.id
  if (aggregate === 'account') return card.account_id
  return card.cardholder_id
}

/** The counter a velocity limit counts `card`'s authorizations in: `<rule id>:<generation>:<aggregate id>`. */
export function counterKey(
  rule: { id: string; generation: number; parameters: Pick<VelocityLimitParameters, 'aggregate'> },
  card: CardTarget,
): string {
  return `${rule.id}:${rule.generation}:${aggregateIdOf(rule.parameters.aggregate, card)}`
}

/** What a velocity limit's window holds at `now` in the counter read (this request excluded). */
export function usageAt(
  counter: Pick<CounterRead, 'buckets'> | undefined,
  parameters: Pick<VelocityLimitParameters, 'window'>,
  now: Date,
): VelocityUsage {
  const [used_amount, used_count] = sumLive(counter?.buckets, parameters.window, now)
  return { used_amount, used_count }
}

/** Whether a velocity limit counts this request at all (its filters let it through). */
export function velocityCounts(
  parameters: VelocityLimitParameters,
  facts: AuthorizationFacts,
): boolean {
  return matchesVelocityFilters(parameters.filters, facts)
}

/** What an approval made at `at` adds to a counter: its bucket, and what the write keeps and until when. */
export interface CounterAdd {
  key: string
  bucket: number
  amount: number
  count: number
  /** The first bucket still counted at the write: older ones are dropped. */
  keep_from: number
  /** When this bucket leaves the window (ISO), or null for `all_time` (the counter then never expires). */
  expires_at: string | null
}

export function counterAdd(
  key: string,
  parameters: Pick<VelocityLimitParameters, 'window'>,
  amount: number,
  at: Date,
  now: Date,
): CounterAdd {
  const bucket = bucketOf(parameters.window, at)
  return {
    key,
    bucket,
    amount,
    count: 1,
    keep_from: Math.min(bucket, liveFrom(parameters.window, now)),
    expires_at: bucketLeavesAt(parameters.window, bucket)?.toISOString() ?? null,
  }
}
