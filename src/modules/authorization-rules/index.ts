/** What the authorization-rules module publishes to other modules: they import it only through this file. */
export {
  type AuthorizationFacts,
  type CardTarget,
  conditionHolds,
  type EvaluableRule,
  evaluateRule,
  evaluateRules,
  matchesPattern,
  matchesVelocityFilters,
  merchantMatches,
  type RuleOutcome,
  type RuleResult,
  ruleDeclines,
  rulesThatApply,
  scopeIncludes,
  type VelocityUsage,
} from './evaluate.js'
export {
  type ReplayableRule,
  type ReplayExample,
  type ReplayReport,
  replayFrom,
  replayRule,
  RuleReplay,
  type StoredAuthorization,
} from './replay.js'
// Backtests read the stored authorizations through this hook, answered by the authorizations module.
export { STORED_AUTHORIZATIONS, type StoredAuthorizationsPage } from './hooks.js'
export { BACKTEST_PAGE, type BacktestRun, runBacktest } from './backtests.js'
export * from './rule.js'
export {
  ACTIVITY_WINDOW,
  addToBuckets,
  bucketLeavesAt,
  bucketOf,
  type Buckets,
  bucketSeconds,
  liveFrom,
  sumLive,
} from './buckets.js'
// The decision's statements (authorizations/repo.ts) read and write this module's tables through these.
export {
  activityCte,
  activityTrackedSql,
  activityWriteCtes,
  countersCtes,
  countersGuardCtes,
  countersJsonSql,
  countersOf,
  countersWriteCtes,
  type DecisionRule,
  decisionRuleDefsOf,
  decisionRulesOf,
  mergedBucketsSql,
  ruleDefsJsonSql,
  rulesCte,
  rulesExistSql,
  rulesJsonSql,
} from './decision-plan.js'
export {
  aggregateIdOf,
  type CounterAdd,
  counterAdd,
  counterKey,
  type CounterRead,
  usageAt,
  velocityCounts,
} from './counters.js'
// Moves of an authorization (reversal, capture, increment, expiry) adjust what it counts for.
export { adjustCounters, type CountedIn, moveCounterBuckets } from './counters-repo.js'
export { type RuleLimit, ruleLimitsOf } from './limits.js'
export { countsInWindow, rollingResetsAt, windowResetsAt, windowStart } from './windows.js'
// The console's rules pages call the same use cases as /v1, with the same body schemas.
export { createRule, deleteRule, listRules, retrieveRule, updateRule } from './service.js'
export {
  AuthorizationRuleCreate,
  type AuthorizationRuleView,
  AuthorizationRuleUpdate,
} from './schemas.js'
export { MAX_CONDITIONS, MAX_MERCHANTS } from './parameters.js'
// The rule page's backtests: the same use cases and body schema as /v1/authorization_rules/{id}/backtests.
export { createBacktest, listBacktests } from './backtests.js'
export { AuthorizationRuleBacktestCreate, type BacktestView } from './backtest-schemas.js'
