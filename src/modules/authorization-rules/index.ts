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
  replayRule,
  type StoredAuthorization,
} from './replay.js'
export * from './rule.js'
export { countsInWindow, rollingResetsAt, windowResetsAt, windowStart } from './windows.js'
// The console's rules page (a later step) calls the same use cases as /v1.
export { createRule, deleteRule, listRules, retrieveRule, updateRule } from './service.js'
export type { AuthorizationRuleView } from './schemas.js'
