/**
 * What an authorization rule is, as plain values: the names the interface accepts and the normalized shape the
 * service stores and evaluates (every key present, codes upper-cased). No database, no HTTP.
 */

export const SCOPE_LEVELS = ['program', 'account', 'cardholder', 'card'] as const
export type ScopeLevel = (typeof SCOPE_LEVELS)[number]

export const RULE_TYPES = ['velocity_limit', 'condition', 'merchant_lock'] as const
export type RuleType = (typeof RULE_TYPES)[number]

export const RULE_MODES = ['active', 'shadow'] as const
export type RuleMode = (typeof RULE_MODES)[number]

export const RULE_STATUSES = ['enabled', 'disabled'] as const
export type RuleStatus = (typeof RULE_STATUSES)[number]

/** Calendar windows (UTC) and the rolling one, whose length is `seconds`. */
export const WINDOW_TYPES = ['day', 'week', 'month', 'year', 'all_time', 'rolling'] as const
export type WindowType = (typeof WINDOW_TYPES)[number]

/** Whose spending a velocity limit sums: the card's own, its account's (every card) or its cardholder's. */
export const AGGREGATES = ['card', 'account', 'cardholder'] as const
export type Aggregate = (typeof AGGREGATES)[number]

/** Attributes a condition reads: text ones (compared without regard to case) and whole numbers. */
export const TEXT_ATTRIBUTES = [
  'mcc',
  'merchant_country',
  'merchant_currency',
  'merchant_name',
] as const
export const NUMBER_ATTRIBUTES = [
  'amount',
  'merchant_amount',
  'card_age_seconds',
  'authorization_count_1h',
  'decline_count_1h',
] as const
export const ATTRIBUTES = [...TEXT_ATTRIBUTES, ...NUMBER_ATTRIBUTES] as const
export type TextAttribute = (typeof TEXT_ATTRIBUTES)[number]
export type NumberAttribute = (typeof NUMBER_ATTRIBUTES)[number]
export type Attribute = (typeof ATTRIBUTES)[number]

export const OPERATORS = [
  'is',
  'is_not',
  'is_one_of',
  'is_not_one_of',
  'gt',
  'gte',
  'lt',
  'lte',
  'matches',
] as const
export type Operator = (typeof OPERATORS)[number]
/** Operators whose value is a list. */
export const LIST_OPERATORS: readonly Operator[] = ['is_one_of', 'is_not_one_of']
/** Operators only numbers take. */
export const ORDER_OPERATORS: readonly Operator[] = ['gt', 'gte', 'lt', 'lte']

export interface RuleWindow {
  type: WindowType
  /** The length of a rolling window; null for calendar windows. */
  seconds: number | null
}

/** Which authorizations a velocity limit counts (and limits); an empty list filters nothing. */
export interface VelocityFilters {
  include_mccs: string[]
  exclude_mccs: string[]
  include_countries: string[]
  exclude_countries: string[]
  merchant_currencies: string[]
}

export interface VelocityLimitParameters {
  window: RuleWindow
  aggregate: Aggregate
  /** Minor units of the account's currency; null: no amount limit. */
  limit_amount: number | null
  /** Approved authorizations; null: no count limit. */
  limit_count: number | null
  filters: VelocityFilters
}

export type ConditionValue = string | number | (string | number)[]

export interface Condition {
  attribute: Attribute
  operator: Operator
  value: ConditionValue
}

export interface ConditionParameters {
  conditions: Condition[]
}

/** A merchant a lock lets through: every part given must match (`name` as a wildcard pattern). */
export interface MerchantMatcher {
  name: string | null
  mcc: string | null
  country: string | null
}

export interface MerchantLockParameters {
  merchants: MerchantMatcher[]
}

/** A rule's type with its parameters. */
export type RuleParameters =
  | { type: 'velocity_limit'; parameters: VelocityLimitParameters }
  | { type: 'condition'; parameters: ConditionParameters }
  | { type: 'merchant_lock'; parameters: MerchantLockParameters }

/** Who a rule applies to: the level's ids, minus the cards, accounts or cardholders it excludes. */
export interface RuleScope {
  level: ScopeLevel
  ids: readonly string[]
  exclude_ids: readonly string[]
}

/** The id prefix each level's ids carry. */
export const LEVEL_PREFIX = {
  program: 'prog',
  account: 'acct',
  cardholder: 'chd',
  card: 'card',
} as const satisfies Record<ScopeLevel, string>
