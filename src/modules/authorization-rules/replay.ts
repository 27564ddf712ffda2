/**
 * A rule replayed over stored authorizations, as a pure function: what a backtest reports (how many of a window's
 * authorizations the rule would have declined, with examples). Every type: conditions and merchant locks judge each
 * authorization alone; a velocity limit judges it against its window's usage as it was then, kept here in counters
 * of the same buckets the decision keeps (`buckets.ts`), per aggregate (card, account or cardholder).
 *
 * The caller streams the authorizations oldest first, from early enough for what the rule reads (`replayFrom`): an hour
 * before the window for a card's last hour (`authorization_count_1h`, `decline_count_1h`), the start of a velocity
 * window current at `from` (all of history for `all_time`). Only those inside the window `[from, to)` whose card the
 * rule's scope takes in are evaluated; those before it only count.
 *
 * What a velocity limit counts is what the live counters count (docs/authorization-rules.md, "Counters"), as if the
 * rule had been active: an approved authorization the rule lets through adds its amount and a count of 1 to the bucket
 * of its creation time; one it would have declined counts for nothing (it would not have been approved), and neither
 * does one declined then. Its later changes of spend (`spend_changes`: an increment adds its increase, a reversal, an
 * expiry or a smaller capture frees, a larger capture adds) move that bucket by as much at their own time, while it is
 * still counted.
 */
import { addToBuckets, bucketOf, liveFrom, sumLive } from './buckets.js'
import { aggregateIdOf } from './counters.js'
import {
  type AuthorizationFacts,
  type CardTarget,
  matchesVelocityFilters,
  ruleDeclines,
  scopeIncludes,
} from './evaluate.js'
import type { RuleParameters, RuleScope } from './rule.js'

const HOUR_MS = 60 * 60 * 1000

/** One stored authorization, as the replay reads it. */
export interface StoredAuthorization {
  id: string
  card: CardTarget
  /** When its card was created (for `card_age_seconds`). */
  card_created_at: Date
  created_at: Date
  approved: boolean
  /** What its first request asked, in minor units of the account currency (an increment's increase is a spend change). */
  amount: number
  merchant_amount: number
  merchant_currency: string
  merchant: { name: string | null; mcc: string | null; country: string | null }
  /** Later changes of what an approved one holds plus captured (minor units, negative to free), oldest first. */
  spend_changes?: readonly { at: Date; amount: number }[]
}

export type ReplayableRule = { scope: RuleScope } & RuleParameters

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
  /** What those approved ones asked, in all (minor units of their accounts' currencies). */
  approved_would_decline_amount: number
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

/** Whether a rule reads a card's last hour. */
function readsActivity(rule: ReplayableRule): boolean {
  return (
    rule.type === 'condition' &&
    rule.parameters.conditions.some(
      (c) => c.attribute === 'authorization_count_1h' || c.attribute === 'decline_count_1h',
    )
  )
}

/**
 * The first instant the stream must start at for the rule to be replayed over a window starting at `from`: an hour
 * before it (a card's last hour), or a velocity window's start current at `from` (its first counted bucket), or null
 * for an `all_time` window (the whole history).
 */
export function replayFrom(rule: RuleParameters, from: Date): Date | null {
  if (rule.type !== 'velocity_limit') return new Date(from.getTime() - HOUR_MS)
  const window = rule.parameters.window
  if (window.type === 'all_time') return null
  return new Date(liveFrom(window, from) * 1000)
}

/** A later change of an authorization's spend, waiting for its time: it moves one counter's bucket. */
interface PendingChange {
  at: number
  counter: string
  bucket: string
  amount: number
}

/** A binary min-heap of spend changes by time: replays hold many, and take them out in time order. */
class ChangeQueue {
  private readonly items: PendingChange[] = []

  get size(): number {
    return this.items.length
  }

  peek(): PendingChange | undefined {
    return this.items[0]
  }

  push(item: PendingChange): void {
    const a = this.items
    a.push(item)
    let i = a.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (a[parent].at <= a[i].at) break
      ;[a[parent], a[i]] = [a[i], a[parent]]
      i = parent
    }
  }

  pop(): PendingChange | undefined {
    const a = this.items
    const top = a[0]
    const last = a.pop()
    if (a.length > 0 && last) {
      a[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < a.length && a[l].at < a[m].at) m = l
        if (r < a.length && a[r].at < a[m].at) m = r
        if (m === i) break
        ;[a[m], a[i]] = [a[i], a[m]]
        i = m
      }
    }
    return top
  }
}

/**
 * A replay fed page by page (`add`, oldest first), for a reader that streams the stored authorizations; `report`
 * answers what it found. Holds the counters of a velocity limit and the last hour of the cards a condition reads, never
 * the stream itself.
 */
export class RuleReplay {
  private readonly result: ReplayReport = {
    evaluated_count: 0,
    would_decline_count: 0,
    approved_would_decline_count: 0,
    approved_would_decline_amount: 0,
    examples: [],
  }
  private readonly recent = new Map<string, StoredAuthorization[]>()
  private readonly counters = new Map<string, Record<string, [number, number]>>()
  private readonly changes = new ChangeQueue()
  private readonly tracksActivity: boolean
  private previous = Number.NEGATIVE_INFINITY
  private ended = false

  constructor(
    private readonly rule: ReplayableRule,
    private readonly window: { from: Date; to: Date },
    private readonly maxExamples = 10,
  ) {
    this.tracksActivity = readsActivity(rule)
  }

  /** Replays the next authorizations of the stream (oldest first; an authorization older than the last is refused). */
  add(stream: Iterable<StoredAuthorization>): void {
    for (const auth of stream) {
      const at = auth.created_at.getTime()
      if (at < this.previous)
        throw new RangeError('the stored authorizations must come oldest first')
      this.previous = at
      if (at >= this.window.to.getTime()) this.ended = true
      if (this.ended) return
      this.replayOne(auth, at)
    }
  }

  /** What the replay found so far. */
  report(): ReplayReport {
    return { ...this.result, examples: [...this.result.examples] }
  }

  private replayOne(auth: StoredAuthorization, at: number): void {
    this.applyChangesUntil(at)
    const applies = scopeIncludes(this.rule.scope, auth.card)
    const kept = this.tracksActivity ? this.lastHourOf(auth.card.id, at) : []
    let declines = false
    const facts = factsOf(auth, {
      approved: kept.filter((a) => a.approved).length,
      declined: kept.filter((a) => !a.approved).length,
    })
    const counter =
      this.rule.type === 'velocity_limit'
        ? aggregateIdOf(this.rule.parameters.aggregate, auth.card)
        : null
    const counts =
      applies &&
      this.rule.type === 'velocity_limit' &&
      matchesVelocityFilters(this.rule.parameters.filters, facts)
    if (applies && at >= this.window.from.getTime()) {
      const usage =
        this.rule.type === 'velocity_limit' && counter !== null
          ? this.usageOf(counter, at)
          : undefined
      declines = ruleDeclines(this.rule, facts, usage)
      this.record(auth, declines)
    }
    if (counts && counter !== null && auth.approved && !declines) this.count(auth, counter, at)
    if (this.tracksActivity) {
      kept.push(auth)
      this.recent.set(auth.card.id, kept)
    }
  }

  private record(auth: StoredAuthorization, declines: boolean): void {
    const r = this.result
    r.evaluated_count++
    if (!declines) return
    r.would_decline_count++
    if (!auth.approved) return
    r.approved_would_decline_count++
    r.approved_would_decline_amount += auth.amount
    if (r.examples.length < this.maxExamples)
      r.examples.push({
        authorization_id: auth.id,
        card_id: auth.card.id,
        amount: auth.amount,
        merchant: auth.merchant,
        created_at: auth.created_at,
      })
  }

  /** The card's authorizations of the hour before `at` (this one excluded), as the decision counts them. */
  private lastHourOf(cardId: string, at: number): StoredAuthorization[] {
    return (this.recent.get(cardId) ?? []).filter((a) => a.created_at.getTime() > at - HOUR_MS)
  }

  private get velocityWindow() {
    if (this.rule.type !== 'velocity_limit') throw new TypeError('not a velocity limit')
    return this.rule.parameters.window
  }

  private usageOf(counter: string, at: number): { used_amount: number; used_count: number } {
    const [used_amount, used_count] = sumLive(
      this.counters.get(counter),
      this.velocityWindow,
      new Date(at),
    )
    return { used_amount, used_count }
  }

  /** Counts an approved authorization in its bucket, and queues its later changes of spend. */
  private count(auth: StoredAuthorization, counter: string, at: number): void {
    const window = this.velocityWindow
    const now = new Date(at)
    const bucket = String(bucketOf(window, now))
    const held = addToBuckets(
      this.counters.get(counter) ?? {},
      { [bucket]: [auth.amount, 1] },
      liveFrom(window, now),
    )
    this.counters.set(counter, held as Record<string, [number, number]>)
    for (const change of auth.spend_changes ?? [])
      if (change.amount !== 0)
        this.changes.push({ at: change.at.getTime(), counter, bucket, amount: change.amount })
  }

  /** Applies the spend changes made up to `at`, in time order, to the buckets still counted. */
  private applyChangesUntil(at: number): void {
    for (let next = this.changes.peek(); next && next.at <= at; next = this.changes.peek()) {
      this.changes.pop()
      const buckets = this.counters.get(next.counter)
      const pair = buckets?.[next.bucket]
      if (!pair) continue
      pair[0] = Math.max(0, pair[0] + next.amount)
    }
  }
}

/** Replays `rule` over `stream` (oldest first) at once; see the file's comment. */
export function replayRule(
  rule: ReplayableRule,
  stream: Iterable<StoredAuthorization>,
  window: { from: Date; to: Date },
  maxExamples = 10,
): ReplayReport {
  const replay = new RuleReplay(rule, window, maxExamples)
  replay.add(stream)
  return replay.report()
}
