import type { Purge } from '../../jobs/registry.js'
import { purgeSchedule } from '../../jobs/retention.js'
import type { ServiceModule } from '../module.js'
import { COUNTER_PURGE_EVERY_MS, purgeActivity, purgeCounters } from './counters-repo.js'
import { BACKTEST_JOB, runBacktestJob } from './backtests.js'
import { registerAuthorizationRules } from './routes.js'
import { answer } from '../../lib/slots.js'
import { DELETE_RULE_STATE_OF } from '../clocks/index.js'
import { deleteRuleStateOf } from './clock-deletion.js'

/** Velocity counters and cards' activity rows whose contents have all left their windows. */
const AUTHORIZATION_RULES_PURGES: readonly Purge[] = [
  {
    name: 'authorization_rule_counters',
    run: (deps, options) => purgeCounters(deps.db, deps.clock.now(), options),
  },
  {
    name: 'authorization_rule_activity',
    run: (deps, options) => purgeActivity(deps.db, deps.clock.now(), options),
  },
]

/** Authorization rules: velocity limits, conditions and merchant locks on an organization's cards. */
export const authorizationRulesModule: ServiceModule = {
  name: 'authorization-rules',
  routes: registerAuthorizationRules,
  jobs: { [BACKTEST_JOB]: runBacktestJob },
  purges: AUTHORIZATION_RULES_PURGES,
  schedules: [
    purgeSchedule(
      'authorization_rules.purge_counters',
      COUNTER_PURGE_EVERY_MS,
      AUTHORIZATION_RULES_PURGES,
    ),
  ],
  hooks: [answer(DELETE_RULE_STATE_OF, deleteRuleStateOf)],
}
