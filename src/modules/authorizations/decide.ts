/**
 * The authorization decision as a pure function: every fact it needs is read beforehand (the card and
 * account in one statement whose row versions guard the write, or under the account's row lock) and
 * handed in, so the rules are unit-tested without a database and the outcome is a value, never an exception.
 */
import {
  type AuthorizationFacts,
  type EvaluableRule,
  evaluateRules,
  type RuleResult,
  type VelocityUsage,
} from '../authorization-rules/index.js'

export const DECLINE_REASONS = [
  'card_inactive',
  'card_frozen',
  'card_closed',
  'card_expired',
  'invalid_expiry',
  'invalid_cvc',
  'token_inactive',
  'account_blocked',
  'currency_mismatch',
  'mcc_blocked',
  'country_blocked',
  'spending_limit',
  // An active authorization rule (docs/authorization-rules.md) declined: the authorization names it (`rule_id`).
  'rule_declined',
  'insufficient_funds',
  // Given by the organization's authorization endpoint (never by `decide`): it declined, or it did not answer and its stand-in declines.
  'integrator_declined',
  'integrator_unavailable',
] as const
export type DeclineReason = (typeof DECLINE_REASONS)[number]

/**
 * `rules`: what each authorization rule said, when the decision reached them (absent when none applies, or when an
 * earlier check declined); `ruleId`: the active rule that declined (`rule_declined`).
 */
export type Decision =
  | { approved: true; rules?: RuleResult[] }
  | { approved: false; reason: DeclineReason; ruleId?: string; rules?: RuleResult[] }

/** The authorization rules that apply to the card, the facts they read, and each velocity limit's usage. */
export interface RulesInput {
  rules: readonly EvaluableRule[]
  facts: AuthorizationFacts
  usageOf?: (rule: EvaluableRule) => VelocityUsage | undefined
}

/** Windowed limit intervals: each counts approved spend since the start of its UTC calendar period. */
export const WINDOW_INTERVALS = ['daily', 'weekly', 'monthly', 'all_time'] as const
export type WindowInterval = (typeof WINDOW_INTERVALS)[number]

export interface SpendingRules {
  spending_limits: { amount: number; interval: string }[]
  allowed_mccs: string[]
  blocked_mccs: string[]
  allowed_countries: string[]
  blocked_countries: string[]
}

export interface DecisionInput {
  /** What this request asks for: the whole amount of a new authorization, or the increase of an increment. */
  amount: number
  currency: string
  merchant: { mcc: string | null; country: string | null }
  card: { status: string; expMonth: number | null; expYear: number | null; controls: SpendingRules }
  account: { status: string; currency: string; available: number }
  /** Status of the network token the request came through; null when it came with the plain card. */
  tokenStatus: string | null
  /** Whether the expiry and security code presented match the card; null when none was presented. */
  expiryMatches: boolean | null
  cvcMatches: boolean | null
  /** Approved spend of the card already counted in each window the card limits (this request excluded). */
  spent: Partial<Record<WindowInterval, number>>
  /** For an increment: what the authorization already holds approved (per_authorization counts the total). */
  alreadyAuthorized: number
  /** The authorization rules that apply to the card (none: absent or empty). */
  rules?: RulesInput
  now: Date
}

/** The first instant a card is expired: the day after the last day of its expiry month (UTC). */
function pastExpiry(expMonth: number | null, expYear: number | null, now: Date): boolean {
  if (expMonth === null || expYear === null) return false
  return now.getTime() >= Date.UTC(expYear, expMonth, 1)
}

function cardStatusReason(status: string): DeclineReason | null {
  switch (status) {
    case 'active':
      return null
    case 'frozen':
      return 'card_frozen'
    case 'closed':
      return 'card_closed'
    case 'expired':
      return 'card_expired'
    default:
      return 'card_inactive' // pending (not yet issued) and inactive (awaiting activation)
  }
}

function listRefuses(value: string | null, allowed: string[], blocked: string[]): boolean {
  if (allowed.length > 0 && (value === null || !allowed.includes(value))) return true
  return value !== null && blocked.includes(value)
}

/** True when some spending limit would be exceeded by approving `amount` more. */
export function exceedsLimits(
  input: Pick<DecisionInput, 'amount' | 'card' | 'spent' | 'alreadyAuthorized'>,
): boolean {
  for (const limit of input.card.controls.spending_limits) {
    if (limit.interval === 'per_authorization') {
      if (input.alreadyAuthorized + input.amount > limit.amount) return true
    } else if ((input.spent[limit.interval as WindowInterval] ?? 0) + input.amount > limit.amount) {
      return true
    }
  }
  return false
}

/**
 * Approve or decline, checking in this order: card status and expiry, presented expiry and security code,
 * network token, account status, currency, merchant category and country rules, spending limits, the
 * authorization rules that apply to the card (after the card's own controls: a rule only declines more), and
 * finally the available balance. The first check that fails names the decline.
 */
export function decide(input: DecisionInput): Decision {
  const decline = (reason: DeclineReason): Decision => ({ approved: false, reason })
  const status = cardStatusReason(input.card.status)
  if (status) return decline(status)
  if (pastExpiry(input.card.expMonth, input.card.expYear, input.now)) return decline('card_expired')
  if (input.expiryMatches === false) return decline('invalid_expiry')
  if (input.cvcMatches === false) return decline('invalid_cvc')
  if (input.tokenStatus !== null && input.tokenStatus !== 'active') return decline('token_inactive')
  if (input.account.status !== 'open') return decline('account_blocked')
  if (input.currency.toUpperCase() !== input.account.currency) return decline('currency_mismatch')
  const rules = input.card.controls
  if (listRefuses(input.merchant.mcc, rules.allowed_mccs, rules.blocked_mccs))
    return decline('mcc_blocked')
  if (listRefuses(input.merchant.country, rules.allowed_countries, rules.blocked_countries))
    return decline('country_blocked')
  if (exceedsLimits(input)) return decline('spending_limit')
  const verdict = input.rules?.rules.length
    ? evaluateRules(input.rules.rules, input.rules.facts, input.rules.usageOf)
    : null
  if (verdict?.declinedBy)
    return {
      approved: false,
      reason: 'rule_declined',
      ruleId: verdict.declinedBy,
      rules: verdict.results,
    }
  const evaluated = verdict ? { rules: verdict.results } : {}
  if (input.account.available < input.amount)
    return { ...decline('insufficient_funds'), ...evaluated }
  return { approved: true, ...evaluated }
}

/** The windowed intervals a card's limits use: only those sums need reading. */
export function windowsNeeded(rules: SpendingRules): WindowInterval[] {
  const wanted = new Set(rules.spending_limits.map((l) => l.interval))
  return WINDOW_INTERVALS.filter((w) => wanted.has(w))
}

/**
 * Where each window starts (UTC calendar periods): the day at midnight, the ISO week on Monday, the month
 * on its first day; all_time has no start.
 */
export function windowStart(interval: WindowInterval, now: Date): Date | null {
  const y = now.getUTCFullYear()
  const m = now.getUTCMonth()
  const d = now.getUTCDate()
  switch (interval) {
    case 'daily':
      return new Date(Date.UTC(y, m, d))
    case 'weekly':
      return new Date(Date.UTC(y, m, d - ((now.getUTCDay() + 6) % 7)))
    case 'monthly':
      return new Date(Date.UTC(y, m, 1))
    case 'all_time':
      return null
  }
}
