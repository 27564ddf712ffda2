/**
 * The 7-day expiry sweep (`authorizations.expire`, docs/authorizations.md): an account's due holds expire together
 * in one transaction, each exactly as one expiry alone would (its `hold_release` entry, `expired` or `closed` when
 * part was captured, its `authorization.updated`, what it counted in a velocity limit freed), and nothing that is not
 * due, nor anything already settled, moves.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ensureSchedules } from '../../src/jobs/schedules.js'
import { eventsFor } from '../helpers/api.js'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { createRule } from '../authorization-rules/support.js'
import { installQueryRecorder, measure } from '../platform/budgets-support.js'
import { expireDue } from '../../src/modules/authorizations/service.js'
import {
  balances,
  entries,
  expectApproved,
  fundedCard,
  post,
  runJobs,
  secondCard,
} from './support.js'

installQueryRecorder()

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

const DAY_MS = 24 * 3600 * 1000
const get = async (id: string) => (await t.api(token, 'GET', `/v1/authorizations/${id}`)).json()

test("the sweep costs an account's five due holds the statements of one", async () => {
  /** Makes `holds` authorizations on a new account, lets them fall due, and sweeps: its cost and what is left. */
  const sweepOf = async (holds: number) => {
    const f = await fundedCard(t, tenant, token, 100_000)
    for (let i = 0; i < holds; i++) await expectApproved(t, token, f.card.id, 100 + i)
    t.clock.advance(7 * DAY_MS + 60_000)
    token = await tenant.token()
    const cost = await measure(t.deps.db, () => expireDue(t.deps))
    const left = await t.api(
      token,
      'GET',
      `/v1/authorizations?account_id=${f.account.id}&status=pending`,
    )
    return { statements: cost.statements, left: left.json().data.length }
  }
  const one = await sweepOf(1)
  const five = await sweepOf(5)
  assert.deepEqual([one.left, five.left], [0, 0])
  assert.equal(five.statements, one.statements)
})

test("an account's due holds expire together, each as it would alone; the rest stay", async () => {
  const f = await fundedCard(t, tenant, token, 100_000)
  const other = await secondCard(t, token, f)
  const g = await fundedCard(t, tenant, token, 100_000)
  const limit = await createRule(t, token, {
    name: 'All time on the account',
    scope: { level: 'account', ids: [f.account.id] },
    type: 'velocity_limit',
    parameters: { window: { type: 'all_time' }, aggregate: 'account', limit_amount: 1_000_000 },
  })
  const a1 = await expectApproved(t, token, f.card.id, 1000)
  const a2 = await expectApproved(t, token, other.id, 2000)
  const a3 = await expectApproved(t, token, f.card.id, 3000)
  await post(
    t,
    token,
    `/v1/simulate/authorizations/${a3.id}/capture`,
    {
      amount: 1000,
      close_authorization: false,
    },
    201,
  )
  const b1 = await expectApproved(t, token, g.card.id, 4000)
  const reversed = await expectApproved(t, token, f.card.id, 500)
  await post(t, token, `/v1/simulate/authorizations/${reversed.id}/reverse`, {})
  const used = async () => {
    const res = await t.api(token, 'GET', `/v1/cards/${f.card.id}/spend_limits`)
    const row = res.json().data.find((l: any) => l.source.rule_id === limit.id)
    return row.used_amount as number
  }
  assert.equal(await used(), 6000)

  await ensureSchedules(t.deps, t.jobs)
  t.clock.advance(DAY_MS)
  token = await tenant.token()
  const later = await expectApproved(t, token, f.card.id, 700)
  t.clock.advance(6 * DAY_MS + 60_000)
  token = await tenant.token()
  await runJobs(t)

  assert.deepEqual(
    await Promise.all([a1, a2, a3, b1, later].map(async (a) => (await get(a.id)).status)),
    ['expired', 'expired', 'closed', 'expired', 'pending'],
  )
  assert.equal((await get(reversed.id)).status, 'reversed')
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 99_000,
    held: 700,
    available: 98_300,
  })
  assert.deepEqual(await balances(t, token, g.account.id), {
    ledger: 100_000,
    held: 0,
    available: 100_000,
  })
  const releases = (await entries(t, token, f.account.id)).filter(
    ([type]) => type === 'hold_release',
  )
  assert.deepEqual(releases.map(([, amount]) => amount).sort(), [1000, 2000, 2000, 500].sort())
  // What the expired holds counted is freed; the capture and the pending one still count.
  assert.equal(await used(), 1700)
  for (const a of [a1, a2, b1])
    assert.deepEqual(
      (await eventsFor(t, a.id)).map((e) => [e.type, e.object.status, e.object.held_amount]),
      [
        ['authorization.created', 'pending', a.amount],
        ['authorization.updated', 'expired', 0],
      ],
    )

  // A second sweep finds nothing more to do.
  await runJobs(t)
  assert.equal((await eventsFor(t, a1.id)).length, 2)
  assert.equal((await get(later.id)).status, 'pending')
})
