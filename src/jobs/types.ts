/**
 * Every job type that code enqueues: one catalogue, so `enqueue` takes only these and a test
 * (test/platform/composition.test.ts) proves each has exactly one handler among the modules.
 */
export const JOB_TYPES = [
  'account.provision',
  'authentication.expire',
  'authorization_rule.backtest',
  'card.expire',
  'card.issue',
  'dispute.review',
  'esim.auto_top_up',
  'kyc.expiry',
  'report.generate',
  'webhook.deliver',
] as const
export type JobType = (typeof JOB_TYPES)[number]

/** Every recurring job: one self-rescheduling row per type (`schedules.ts`). */
export const SCHEDULE_TYPES = [
  'housekeeping',
  'oauth.purge_credentials',
  'events.purge',
  'authorizations.expire',
  'sandbox_clocks.sweep',
  'authorizations.purge_endpoint_attempts',
  'authorization_rules.purge_counters',
  'transactions.settle',
  'esim.settle_orders',
  'esim.apply_usage',
  'esim.check_validity',
  'users.purge',
  'h5.purge_links',
  'cards.purge_pin_keys',
] as const
export type ScheduleType = (typeof SCHEDULE_TYPES)[number]
