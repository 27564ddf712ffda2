import type { Generated } from 'kysely'
import type { Json, Timestamp } from '../../db/types.js'
import type { RuleParameters, RuleScope, ScopeLevel } from './rule.js'

/** One authorization rule of an organization and environment; `deleted_at` set once deleted (the row stays). */
export interface AuthorizationRulesTable {
  id: string
  organization_id: string
  environment: string
  name: string
  scope_level: ScopeLevel
  /** The programs, accounts, cardholders or cards (per `scope_level`) the rule applies to. */
  scope_ids: Json<string[]>
  /** Cards, accounts or cardholders under the scope that the rule skips. */
  exclude_ids: Json<string[]>
  type: RuleParameters['type']
  /** The type's parameters as validated and normalized (`parameters.ts`): every key present. */
  parameters: Json<RuleParameters['parameters']>
  mode: 'active' | 'shadow'
  status: 'enabled' | 'disabled'
  created_at: Timestamp
  updated_at: Timestamp
  deleted_at: Timestamp | null
  /** Raised when `window`, `aggregate` or `filters` change: a velocity limit's counters start again under new keys. */
  counter_generation: Generated<number>
}

/**
 * A velocity limit's counter for one aggregate (card, account or cardholder): the buckets of its window
 * (`buckets.ts`: `{"<bucket start>": [amount, count]}`). `key` is `<rule id>:<generation>:<aggregate id>`.
 */
export interface AuthorizationRuleCountersTable {
  key: string
  rule_id: string
  buckets: Json<Record<string, [number, number]>>
  /** When nothing it holds counts any more (null: never, an `all_time` window). */
  expires_at: Timestamp | null
  updated_at: Timestamp
}

/**
 * A card's last hour of authorizations in minute buckets (`buckets.ts`: `{"<minute>": [approved, declined]}`), kept for
 * the cards a rule reading `authorization_count_1h` or `decline_count_1h` applies to, written by each decision on the
 * card. While the row exists every decision on the card since it was made is in it; a decision no such rule applies to
 * deletes it, and the next one that needs it seeds it again from the card's last hour.
 */
export interface AuthorizationRuleActivityTable {
  card_id: string
  buckets: Json<Record<string, [number, number]>>
  updated_at: Timestamp
}

/** What a backtest's replay found (`results`, once completed). */
export interface BacktestResultsValue {
  evaluated: number
  would_decline: number
  approved_would_decline: number
  declined_amount: number
  examples: {
    authorization_id: string
    card_id: string
    amount: number
    merchant: { name: string | null; mcc: string | null; country: string | null }
    created_at: string
  }[]
}

/** A rule replayed over the stored authorizations of `[window_from, window_to)` by a job. */
export interface AuthorizationRuleBacktestsTable {
  id: string
  organization_id: string
  environment: string
  rule_id: string
  /** The rule as it was asked of: its type, scope and parameters (a later change does not change the replay). */
  rule: Json<RuleParameters & { scope: RuleScope }>
  window_from: Timestamp
  window_to: Timestamp
  status: 'pending' | 'completed' | 'failed'
  results: Json<BacktestResultsValue> | null
  failure_reason: string | null
  created_at: Timestamp
  updated_at: Timestamp
  completed_at: Timestamp | null
}

/**
 * One id a live rule names (migration 0131): a program, account, cardholder or card of its `scope_ids` (`excluded`
 * false) or of its `exclude_ids` (`excluded` true). Written with the rule, deleted with it; the decision reads a card's
 * rules through it by the card's four ids.
 */
export interface AuthorizationRuleTargetsTable {
  target_id: string
  rule_id: string
  excluded: boolean
}

declare module '../../db/types.js' {
  interface Database {
    authorization_rule_backtests: AuthorizationRuleBacktestsTable
    authorization_rules: AuthorizationRulesTable
    authorization_rule_activity: AuthorizationRuleActivityTable
    authorization_rule_counters: AuthorizationRuleCountersTable
    authorization_rule_targets: AuthorizationRuleTargetsTable
  }
}
