/**
 * A clock's advance expires an account's due holds together (`expireManyOfAccount`): it must leave exactly what the
 * expiries one by one (`holdExpiryOnClock.run` at each due time) leave: the same ledger entries (one `hold_release`
 * per hold, at its time, with the balances right after it), the same holds, account, authorizations (`expired`, or
 * `closed` for a partly captured one, `updated_at` at the due time) and `authorization.updated` events in time order.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { atTime } from '../../src/lib/object-clock.js'
import { HOLD_EXPIRY_ON_CLOCK } from '../../src/modules/clocks/index.js'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { ledgerEntries } from '../accounts/support.js'
import { expectApproved, post } from '../authorizations/support.js'
import { createRule, onCard } from '../authorization-rules/support.js'
import { advance, clockAt, fundedOnClock, storedEvents } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

const T0 = '2027-05-02T09:00:00.000Z'
const at = (ms: number) => new Date(new Date(T0).getTime() + ms).toISOString()
const MINUTE = 60_000
const DAY = 24 * 60 * MINUTE

/** Ids replaced by their order of first appearance, so two runs of the same story compare equal. */
function normalized(value: unknown): unknown {
  const seen = new Map<string, string>()
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string' && /^[a-z]+_[0-9A-Z]{26}$/.test(v)) {
      if (!seen.has(v)) seen.set(v, `id${seen.size}`)
      return seen.get(v)
    }
    if (Array.isArray(v)) return v.map(walk)
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]))
    return v
  }
  return walk(value)
}

/**
 * On a new clock: one account, its card under two velocity limits (a day's and a month's spend), four authorizations
 * a minute apart (the third partly captured and left open), and the clock advanced to a minute before the first
 * expires. Answers what an expiry will change.
 */
async function story() {
  const c = await clockAt(t, token, T0)
  const f = await fundedOnClock(t, tenant, token, c.id, 10_000)
  const rules = []
  for (const window of ['day', 'month'])
    rules.push(
      await createRule(t, token, {
        scope: onCard(f.card.id),
        type: 'velocity_limit',
        parameters: { window: { type: window }, aggregate: 'card', limit_amount: 100_000 },
      }),
    )
  const auths = []
  for (const amount of [800, 300, 500, 100]) {
    auths.push(await expectApproved(t, token, f.card.id, amount))
    await advance(t, token, c.id, { by: 'PT1M' })
  }
  await post(
    t,
    token,
    `/v1/simulate/authorizations/${auths[2].id}/capture`,
    { amount: 200, close_authorization: false },
    201,
  )
  await advance(t, token, c.id, { to: at(7 * DAY - MINUTE) })
  return { clock: c, account: f.account, auths, rules }
}

/** Everything the expiries wrote, ids normalized. */
async function outcome(s: Awaited<ReturnType<typeof story>>) {
  const account = (await t.api(token, 'GET', `/v1/accounts/${s.account.id}`)).json()
  const auths = []
  const events = []
  for (const a of s.auths) {
    auths.push((await t.api(token, 'GET', `/v1/authorizations/${a.id}`)).json())
    events.push(...(await storedEvents(t, a.id, 'authorization.updated')))
  }
  events.sort((x, y) => (x.id < y.id ? -1 : 1))
  const holds = await t.deps.db
    .selectFrom('holds')
    .select(['source_id', 'amount', 'remaining', 'captured', 'released', 'status', 'updated_at'])
    .where('account_id', '=', s.account.id)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  const counters = []
  for (const rule of s.rules)
    counters.push(
      (
        await t.deps.db
          .selectFrom('authorization_rule_counters')
          .select(['buckets', 'updated_at'])
          .where('rule_id', '=', rule.id)
          .orderBy('key')
          .execute()
      ).map((r) => ({ buckets: r.buckets, updated_at: new Date(r.updated_at).toISOString() })),
    )
  return normalized({
    counters,
    account,
    // The funding credit is dated on wall time: it is not part of the story.
    entries: (await ledgerEntries(t, token, s.account.id)).filter((e) => e.type !== 'credit'),
    holds: holds.map((h) => ({ ...h, updated_at: new Date(h.updated_at).toISOString() })),
    auths,
    events: events.map((e) => ({ type: e.type, clock_id: e.clock_id, object: e.object })),
  })
}

test("an advance expires an account's holds together exactly as one by one, a partly captured one closed", async () => {
  const together = await story()
  const apart = await story()

  await advance(t, token, together.clock.id, { by: 'P1D' })
  const sweep = t.deps.hooks.get(HOLD_EXPIRY_ON_CLOCK)
  for (const [i, a] of apart.auths.entries()) {
    const due = new Date(at(7 * DAY + i * MINUTE))
    assert.equal(await sweep.run(atTime(t.deps, due), apart.clock.id, a.id), true)
  }
  await advance(t, token, apart.clock.id, { by: 'P1D' })

  const one = (await outcome(together)) as any
  const other = (await outcome(apart)) as any
  assert.deepEqual(one, other)
  // And what both wrote is the expiry: every hold released at its time, the captured one closed.
  assert.deepEqual(
    one.auths.map((a: any) => [a.status, a.held_amount, a.updated_at]),
    [
      ['expired', 0, at(7 * DAY)],
      ['expired', 0, at(7 * DAY + MINUTE)],
      ['closed', 0, at(7 * DAY + 2 * MINUTE)],
      ['expired', 0, at(7 * DAY + 3 * MINUTE)],
    ],
  )
  const releases = one.entries.filter((e: any) => e.type === 'hold_release')
  assert.deepEqual(
    releases.map((e: any) => [e.amount, e.held_balance_after, e.created_at]),
    [
      [800, 700, at(7 * DAY)],
      [300, 400, at(7 * DAY + MINUTE)],
      [300, 100, at(7 * DAY + 2 * MINUTE)],
      [100, 0, at(7 * DAY + 3 * MINUTE)],
    ],
  )
  assert.deepEqual([one.account.held_balance, one.account.ledger_balance], [0, 9800])
  // The velocity counters keep what was captured (200) and the four authorizations' count, the holds freed.
  for (const rows of one.counters) {
    const kept = rows.flatMap((r: any) => Object.values(r.buckets)) as [number, number][]
    assert.deepEqual(
      kept.reduce(([a, n], [x, y]) => [a + Number(x), n + Number(y)], [0, 0]),
      [200, 4],
    )
  }
  // Events in time order: the capture's, then the four expiries'.
  assert.deepEqual(
    one.events.map((e: any) => [e.object.status, e.object.updated_at]),
    [
      ['pending', at(4 * MINUTE)],
      ['expired', at(7 * DAY)],
      ['expired', at(7 * DAY + MINUTE)],
      ['closed', at(7 * DAY + 2 * MINUTE)],
      ['expired', at(7 * DAY + 3 * MINUTE)],
    ],
  )
})
