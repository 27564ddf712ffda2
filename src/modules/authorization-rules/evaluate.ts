/**
 * Authorization rules evaluated as pure functions, as the decision itself is (`authorizations/decide.ts`): the caller
 * reads every fact beforehand (the authorization's merchant and amounts, the card's age and recent activity, and for a
 * velocity limit what its window has already counted) and gets a value back. A rule only ever declines: it never
 * approves what the card's own controls or the balance refuse, and a shadow rule never declines at all (it records
 * `would_decline`).
 */
import type {
  Condition,
  MerchantMatcher,
  RuleMode,
  RuleParameters,
  RuleScope,
  RuleStatus,
  VelocityFilters,
  VelocityLimitParameters,
} from './rule.js'

/** What a rule may read of one authorization request. */
export interface AuthorizationFacts {
  mcc: string | null
  merchant_country: string | null
  merchant_currency: string
  merchant_name: string | null
  /** What this request asks, in minor units of the account's currency (an increment: its increase). */
  amount: number
  /** The same in the merchant's currency. */
  merchant_amount: number
  card_age_seconds: number
  /** Approved authorizations of the card in the last hour (this one excluded). */
  authorization_count_1h: number
  /** Declined authorizations of the card in the last hour (this one excluded). */
  decline_count_1h: number
  /** An increment of an approved authorization: its amount adds to the spend, it adds no authorization to a count. */
  increment?: boolean
}

/** What a velocity limit's window already holds for the aggregate (card, account or cardholder), this request excluded. */
export interface VelocityUsage {
  used_amount: number
  used_count: number
}

export type RuleOutcome = 'passed' | 'declined' | 'would_decline'

/** A rule as the evaluation needs it: its id, mode, type and parameters. */
export type EvaluableRule = RuleParameters & { id: string; mode: RuleMode }

/** The card a decision is about, as scope matching reads it. */
export interface CardTarget {
  id: string
  account_id: string
  cardholder_id: string
  program_id: string
}

/** One line of a decision's `rule_results`. */
export interface RuleResult {
  rule_id: string
  mode: RuleMode
  outcome: RuleOutcome
}

/**
 * Whether `text` matches a wildcard pattern, ignoring case: `*` any run of characters (none too), `?` exactly one,
 * everything else itself; the whole text must match. Linear in practice, never exponential (one star remembered at a
 * time, no backtracking into earlier ones): patterns run inside the authorization decision.
 */
export function matchesPattern(pattern: string, text: string): boolean {
  const p = pattern.toUpperCase()
  const s = text.toUpperCase()
  let pi = 0
  let si = 0
  let star = -1
  let mark = 0
  while (si < s.length) {
    if (pi < p.length && (p[pi] === '?' || p[pi] === s[si])) {
      pi++
      si++
    } else if (pi < p.length && p[pi] === '*') {
      star = pi++
      mark = si
    } else if (star !== -1) {
      pi = star + 1
      si = ++mark
    } else {
      return false
    }
  }
  while (p[pi] === '*') pi++
  return pi === p.length
}

const same = (a: string, b: string) => a.toUpperCase() === b.toUpperCase()

/** Whether a velocity limit counts (and limits) this authorization: each filter given must let it through. */
export function matchesVelocityFilters(
  filters: VelocityFilters,
  facts: AuthorizationFacts,
): boolean {
  const mcc = facts.mcc
  const country = facts.merchant_country?.toUpperCase() ?? null
  if (filters.include_mccs.length > 0 && (mcc === null || !filters.include_mccs.includes(mcc)))
    return false
  if (mcc !== null && filters.exclude_mccs.includes(mcc)) return false
  if (
    filters.include_countries.length > 0 &&
    (country === null || !filters.include_countries.includes(country))
  )
    return false
  if (country !== null && filters.exclude_countries.includes(country)) return false
  if (
    filters.merchant_currencies.length > 0 &&
    !filters.merchant_currencies.includes(facts.merchant_currency.toUpperCase())
  )
    return false
  return true
}

/** True when approving this request would take the window past the limit (amount or count). */
function exceedsVelocity(
  parameters: VelocityLimitParameters,
  facts: AuthorizationFacts,
  usage: VelocityUsage,
): boolean {
  if (!matchesVelocityFilters(parameters.filters, facts)) return false
  const { limit_amount, limit_count } = parameters
  if (limit_amount !== null && usage.used_amount + facts.amount > limit_amount) return true
  const added = facts.increment ? 0 : 1
  return limit_count !== null && usage.used_count + added > limit_count
}

/** The fact a condition reads; text attributes may be unknown (null). */
function attributeValue(facts: AuthorizationFacts, condition: Condition): string | number | null {
  return facts[condition.attribute]
}

/**
 * Whether one condition holds. An unknown text value (a merchant without a country) equals nothing: `is`,
 * `is_one_of` and `matches` do not hold, `is_not` and `is_not_one_of` do.
 */
export function conditionHolds(condition: Condition, facts: AuthorizationFacts): boolean {
  const actual = attributeValue(facts, condition)
  const { operator, value } = condition
  const equals = (v: string | number) =>
    actual !== null &&
    (typeof actual === 'number' ? actual === v : typeof v === 'string' && same(actual, v))
  switch (operator) {
    case 'is':
      return equals(value as string | number)
    case 'is_not':
      return !equals(value as string | number)
    case 'is_one_of':
      return (value as (string | number)[]).some(equals)
    case 'is_not_one_of':
      return !(value as (string | number)[]).some(equals)
    case 'matches':
      return typeof actual === 'string' && matchesPattern(value as string, actual)
    case 'gt':
      return typeof actual === 'number' && actual > (value as number)
    case 'gte':
      return typeof actual === 'number' && actual >= (value as number)
    case 'lt':
      return typeof actual === 'number' && actual < (value as number)
    case 'lte':
      return typeof actual === 'number' && actual <= (value as number)
  }
}

/** Whether a merchant lock lets this merchant through: every part the entry names matches. */
export function merchantMatches(entry: MerchantMatcher, facts: AuthorizationFacts): boolean {
  if (
    entry.name !== null &&
    (facts.merchant_name === null || !matchesPattern(entry.name, facts.merchant_name))
  )
    return false
  if (entry.mcc !== null && entry.mcc !== facts.mcc) return false
  if (
    entry.country !== null &&
    (facts.merchant_country === null || !same(entry.country, facts.merchant_country))
  )
    return false
  return true
}

/**
 * Whether the rule, were it active, would decline this request: a velocity limit when the request takes its window
 * past a limit (`usage` is required), a condition rule when every condition holds, a merchant lock when no merchant it
 * names matches.
 */
export function ruleDeclines(
  rule: RuleParameters,
  facts: AuthorizationFacts,
  usage?: VelocityUsage,
): boolean {
  switch (rule.type) {
    case 'velocity_limit':
      if (!usage) throw new TypeError('a velocity limit is evaluated with the usage of its window')
      return exceedsVelocity(rule.parameters, facts, usage)
    case 'condition':
      return rule.parameters.conditions.every((c) => conditionHolds(c, facts))
    case 'merchant_lock':
      return !rule.parameters.merchants.some((m) => merchantMatches(m, facts))
  }
}

/** `passed`, `declined`, or, for a shadow rule that would have declined, `would_decline`. */
export function evaluateRule(
  rule: EvaluableRule,
  facts: AuthorizationFacts,
  usage?: VelocityUsage,
): RuleOutcome {
  if (!ruleDeclines(rule, facts, usage)) return 'passed'
  return rule.mode === 'shadow' ? 'would_decline' : 'declined'
}

/**
 * Every rule that applies, evaluated: one result per rule, in the order given (every rule is recorded, also after a
 * decline), and the first active rule that declines, which names the decision's `rule_id`. `usageOf` answers the
 * window usage of each velocity limit.
 */
export function evaluateRules(
  rules: readonly EvaluableRule[],
  facts: AuthorizationFacts,
  usageOf: (rule: EvaluableRule) => VelocityUsage | undefined = () => undefined,
): { results: RuleResult[]; declinedBy: string | null } {
  const results = rules.map((rule) => ({
    rule_id: rule.id,
    mode: rule.mode,
    outcome: evaluateRule(rule, facts, rule.type === 'velocity_limit' ? usageOf(rule) : undefined),
  }))
  return { results, declinedBy: results.find((r) => r.outcome === 'declined')?.rule_id ?? null }
}

/** Whether a rule's scope takes in the card: the level's id of the card is named, and nothing of it is excluded. */
export function scopeIncludes(scope: RuleScope, card: CardTarget): boolean {
  const target = {
    program: card.program_id,
    account: card.account_id,
    cardholder: card.cardholder_id,
    card: card.id,
  }[scope.level]
  if (!scope.ids.includes(target)) return false
  return ![card.id, card.account_id, card.cardholder_id].some((id) =>
    scope.exclude_ids.includes(id),
  )
}

/** The rules a decision on the card evaluates: enabled ones whose scope takes it in. */
export function rulesThatApply<R extends { scope: RuleScope; status: RuleStatus }>(
  rules: readonly R[],
  card: CardTarget,
): R[] {
  return rules.filter((r) => r.status === 'enabled' && scopeIncludes(r.scope, card))
}
