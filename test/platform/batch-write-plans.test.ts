/**
 * A statement that writes a batch of rows named by id in a JSON parameter finds them by their primary key, whatever
 * the table holds (docs/platform.md, "Batch writes by key"). Joined to the JSON items alone, which PostgreSQL takes
 * for a hundred rows, the planner hashed the items against a sequential scan of the whole table: every hold on each
 * run of an expiry, every eSIM on each usage report. Here each table gets 5,000 other rows written straight in
 * SQL and is analyzed; the write is made through the service while the SQL the app sends is captured, and each
 * captured statement on the table is explained as a prepared statement under its generic plan (the plan a named
 * statement settles on after its first runs). A plan passes when it reads none of the tables whole.
 *
 * PostgreSQL only: the plans are PostgreSQL's.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type pg from 'pg'
import {
  type Captured,
  captureWhile,
  copyRows,
  flatten,
  genericPlan,
  withCapturingApp,
} from '../helpers/plans.js'
import { expireDue } from '../../src/modules/authorizations/service.js'
import { sweepUsage } from '../../src/modules/esim/usage.js'
import { createTenant, type TestApp } from '../helpers/app.js'
import { expectApproved, fundedCard } from '../authorizations/support.js'
import { completedOrder, esimFixture } from '../esim/support.js'

const skip = !process.env.DATABASE_URL && 'PostgreSQL only: the plans of the batch writes'
/** Other rows in each table. */
const OTHERS = 5000

let t: TestApp
let admin: pg.Client
withCapturingApp(skip, (fixture) => ({ t, admin } = fixture))

/** `OTHERS` copies of the row `id` of `table`, with the columns of `overrides` (SQL over g = 1…OTHERS). */
async function copies(table: string, id: string, overrides: Record<string, string>): Promise<void> {
  const key = table === 'esim_bundles' ? 'order_id' : 'id'
  await copyRows(admin, table, id, OTHERS, overrides, key)
  await admin.query(`ANALYZE ${table}`)
}

/** No scan of `table` in the generic plan of each statement reads the whole table. */
async function assertProbed(statements: Captured[], table: string): Promise<void> {
  assert.ok(statements.length > 0, `no statement on ${table} captured`)
  for (const q of statements) {
    // The plan a named statement gets once PostgreSQL settles on a generic one.
    const plan = await genericPlan(admin, q)
    const whole = flatten(plan).filter(
      (n) => n['Relation Name'] === table && n['Node Type'] === 'Seq Scan',
    )
    assert.equal(
      whole.length,
      0,
      `${table} read whole:\n${q.text}\n${JSON.stringify(plan, null, 1)}`,
    )
  }
}

test("the expiry of an account's holds closes them by id beside 5,000 other holds", {
  skip,
}, async () => {
  const tenant = await createTenant(t)
  const token = await tenant.token()
  const f = await fundedCard(t, tenant, token, 100_000)
  const auth = await expectApproved(t, token, f.card.id, 500)
  const { rows } = await admin.query('SELECT hold_id FROM authorizations WHERE id = $1', [auth.id])
  await copies('holds', rows[0].hold_id, { id: `'hold_other' || g`, source_id: 'NULL' })
  await admin.query(
    `UPDATE authorizations SET expires_at = now() - interval '1 minute' WHERE id = $1`,
    [auth.id],
  )
  const statements = await captureWhile(() => expireDue(t.deps), /UPDATE holds/i)
  const after = await admin.query('SELECT status FROM authorizations WHERE id = $1', [auth.id])
  assert.equal(after.rows[0].status, 'expired')
  await assertProbed(statements, 'holds')
})

test('a usage report finds its eSIM and package by key beside 5,000 other eSIMs', {
  skip,
}, async () => {
  const fx = await esimFixture(t)
  const packages = await t.api(
    fx.token,
    'GET',
    '/v1/esim/packages?country=FRA&region=local&limit=100',
  )
  const pkg = packages.json().data.find((p: any) => p.data_mb === 1024)
  const order = await completedOrder(t, fx.token, {
    package_id: pkg.id,
    cardholder_id: fx.cardholder.id,
  })
  await copies('esims', order.esim_id, {
    id: `'esim_other' || g`,
    iccid: `'8944500' || lpad(g::text, 12, '0')`,
  })
  await copies('esim_bundles', order.id, {
    order_id: `'eso_other' || g`,
    esim_id: `'esim_other' || g`,
  })
  // Reported, then applied by the usage sweep (or at once): both captured.
  const statements = await captureWhile(async () => {
    const report = await t.api(fx.token, 'POST', `/v1/simulate/esim/esims/${order.esim_id}/usage`, {
      data_used_mb: 900,
    })
    assert.ok(report.statusCode < 300, report.body)
    await sweepUsage(t.deps)
  }, /esims|esim_bundles/)
  const esim = (await t.api(fx.token, 'GET', `/v1/esim/esims/${order.esim_id}`)).json()
  assert.equal(esim.packages[0].data_used_mb, 900)
  await assertProbed(statements, 'esims')
  await assertProbed(
    statements.filter((q) => /esim_bundles/.test(q.text)),
    'esim_bundles',
  )
})
