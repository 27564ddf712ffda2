/**
 * The decision's statements read the rules' tables by key, whatever they hold (docs/authorization-rules.md, "In the
 * decision"): a card's activity row, its counters, its rules and their targets are each a probe of a primary key, so
 * a decision costs the same beside a thousand other cards' rows as on an empty table. The tables get a thousand rows
 * of other cards written straight in SQL and are analyzed (the size at which PostgreSQL found hashing the whole
 * activity table cheaper than probing it); then a decision is made through the API while the SQL the app sends is
 * captured, and each of its statements that names a rules table is run again as a prepared statement after a few
 * executions (the generic plan a named statement settles on, as the app names its statements), inside a transaction
 * that is rolled back. A plan passes when each scan of a rules table reads a few rows at most (a table of a few rows
 * may be read whole).
 *
 * PostgreSQL only: the plans are PostgreSQL's.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type pg from 'pg'
import { captureWhile, flatten, settledPlan, withCapturingApp } from '../helpers/plans.js'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { expectApproved, fundedCard } from '../authorizations/support.js'
import { condition, createRule } from './support.js'

const skip = !process.env.DATABASE_URL && 'PostgreSQL only: the plans of the decision statements'
const RULE_TABLES = new Set([
  'authorization_rule_activity',
  'authorization_rule_counters',
  'authorization_rule_targets',
  'authorization_rules',
])
/** Other cards' rows in each table. */
const OTHERS = 1000
/** The most rows one scan of a rules table may read, over all its loops (a batch of one card here). */
const MOST_READ = 20

let t: TestApp
let tenant: TestClient
let token: string
let admin: pg.Client

withCapturingApp(skip, async (fixture) => {
  ;({ t, admin } = fixture)
  tenant = await createTenant(t)
  token = await tenant.token()
})

test("a decision under rules probes the rules' tables by key beside a thousand other cards' rows", {
  skip,
}, async () => {
  const f = await fundedCard(t, tenant, token, 1_000_000)
  const program = { level: 'program', ids: [tenant.programs.full.id] }
  const velocity = await createRule(t, token, {
    scope: program,
    type: 'velocity_limit',
    parameters: { window: { type: 'day' }, aggregate: 'card', limit_amount: 10_000_000 },
  })
  await createRule(t, token, {
    scope: program,
    ...condition(['authorization_count_1h', 'gt', 1000]),
  })
  await createRule(t, token, {
    scope: { level: 'card', ids: [f.card.id] },
    ...condition(['mcc', 'is', '7995']),
  })
  await expectApproved(t, token, f.card.id, 100)

  await admin.query(
    `INSERT INTO authorization_rule_activity (card_id, buckets, updated_at)
      SELECT 'card_other' || g, '{}'::jsonb, now() FROM generate_series(1, ${OTHERS}) AS g`,
  )
  await admin.query(
    `INSERT INTO authorization_rule_counters (key, rule_id, buckets, expires_at, updated_at)
      SELECT $1 || ':0:card_other' || g, $1, '{}'::jsonb, now() + interval '1 day', now()
      FROM generate_series(1, ${OTHERS}) AS g`,
    [velocity.id],
  )
  await admin.query(
    'ANALYZE authorization_rule_activity, authorization_rule_counters, authorization_rule_targets, authorization_rules',
  )

  const statements = await captureWhile(
    () => expectApproved(t, token, f.card.id, 100),
    /authorization_rule_(activity|counters)/,
  )
  assert.ok(statements.length >= 2, 'the decision read and wrote the rules tables')
  for (const q of statements) {
    const plan = await settledPlan(admin, q)
    const scans = flatten(plan).filter((n) => RULE_TABLES.has(n['Relation Name'] ?? ''))
    const where = `${q.text}\n${JSON.stringify(plan, null, 1)}`
    for (const scan of scans) {
      const read =
        ((scan['Actual Rows'] ?? 0) + (scan['Rows Removed by Filter'] ?? 0)) *
        (scan['Actual Loops'] ?? 1)
      assert.ok(read <= MOST_READ, `${scan['Relation Name']}: ${read} rows read\n${where}`)
    }
  }
})
