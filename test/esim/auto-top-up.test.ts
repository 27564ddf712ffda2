/**
 * Auto top-up from stored value: `PATCH /v1/esim/esims/{id} {auto_top_up}` buys an add-on from the cardholder's account
 * exactly once each time usage crosses the trigger (an order of `type: top_up`, `trigger: auto`), at most
 * `max_per_month` a month; an account without funds gives esim.auto_top_up_failed and only the next crossing tries
 * again; a run interrupted between the debit and the network call is completed by settlement, once.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { JobRunner } from '../../src/jobs/runner.js'
import { openAutoTopUp } from '../../src/modules/esim/auto-top-up.js'
import { presentAutoTopUp } from '../../src/modules/esim/esims-service.js'
import { settleOpenOrders } from '../../src/modules/esim/settlement.js'
import { sweepUsage } from '../../src/modules/esim/usage.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { eventsFor } from '../helpers/api.js'
import {
  completedOrder,
  esimFixture,
  expectError,
  fundedAccount,
  newCardholder,
  packageFor,
  reference,
  type EsimFixture,
} from './support.js'

let t: TestApp
let fx: EsimFixture
let pkg: any
let offer: any

before(async () => {
  t = await startTestApp()
  fx = await esimFixture(t)
  pkg = await packageFor(t, fx.token, 'country=DEU&region=local', 5 * 1024)
  const esim = await newEsim()
  const offers = (await api('GET', `/v1/esim/esims/${esim.id}/top_ups`)).json().data
  offer = offers.find((o: any) => o.data_mb !== null)
  assert.ok(offer, 'the package sells an add-on with data')
})
after(() => t.close())

const api = (method: string, url: string, body?: unknown) => t.api(fx.token, method, url, body)
const usage = (esimId: string, mb: number) =>
  api('POST', `/v1/simulate/esim/esims/${esimId}/usage`, { data_used_mb: mb })
const patch = (esimId: string, autoTopUp: unknown) =>
  api('PATCH', `/v1/esim/esims/${esimId}`, { auto_top_up: autoTopUp })
const getEsim = async (esimId: string) => (await api('GET', `/v1/esim/esims/${esimId}`)).json()
const balance = async (accountId: string) =>
  (await api('GET', `/v1/accounts/${accountId}`)).json().available_balance
const purchases = async (accountId: string) =>
  (await api('GET', `/v1/accounts/${accountId}/entries?limit=100`))
    .json()
    .data.filter((e: any) => e.type === 'esim_purchase')
/** Runs the queued jobs as a worker does. */
const runJobs = () => new JobRunner(t.deps, t.jobs).drain()

async function newEsim(): Promise<any> {
  const o = await completedOrder(t, fx.token, {
    package_id: pkg.id,
    cardholder_id: fx.cardholder.id,
  })
  return getEsim(o.esim_id)
}

/** Every auto top-up started on this eSIM (whatever its status), straight from the database, oldest first. */
async function autoOrders(esimId: string): Promise<any[]> {
  return t.deps.db
    .selectFrom('esim_orders as o')
    .innerJoin('esim_bundles as b', 'b.order_id', 'o.crossing_order_id')
    .selectAll('o')
    .where('b.esim_id', '=', esimId)
    .orderBy('o.created_at')
    .execute()
}

const events = async (esimId: string, type: string) => eventsFor(t, esimId, type)

function settings(accountId: string, extra: Record<string, unknown> = {}) {
  return {
    top_up_id: offer.id,
    account_id: accountId,
    trigger: 'depleted',
    max_per_month: 5,
    ...extra,
  }
}

describe('auto top-up settings', () => {
  test('PATCH sets them, the eSIM shows them with the runs of this month, null turns them off', async () => {
    const account = await fundedAccount(t, fx, 10_000)
    const esim = await newEsim()
    assert.equal(esim.auto_top_up, null)
    const res = await patch(
      esim.id,
      settings(account.id, { trigger: 'threshold', threshold_pct: 90, max_per_month: 3 }),
    )
    assert.equal(res.statusCode, 200, res.body)
    const expected = {
      top_up_id: offer.id,
      account_id: account.id,
      trigger: 'threshold',
      max_per_month: 3,
      threshold_pct: 90,
      runs_this_month: 0,
    }
    assert.deepEqual(res.json().auto_top_up, expected)
    assert.deepEqual((await getEsim(esim.id)).auto_top_up, expected)
    const listed = (await api('GET', `/v1/esim/esims?cardholder_id=${fx.cardholder.id}`))
      .json()
      .data.find((e: any) => e.id === esim.id)
    assert.deepEqual(listed.auto_top_up, expected)
    const off = await patch(esim.id, null)
    assert.equal(off.statusCode, 200, off.body)
    assert.equal(off.json().auto_top_up, null)
  })

  test('the hosted page says when auto top-up is on, and nothing when it is off', async () => {
    const account = await fundedAccount(t, fx, 0)
    const esim = await newEsim()
    const page = async () => {
      const link = (
        await api('POST', '/v1/esim/h5_links', { cardholder_id: fx.cardholder.id })
      ).json()
      const res = await t.app.inject({ method: 'GET', url: new URL(link.url).pathname })
      assert.equal(res.statusCode, 200)
      const card = new RegExp(`data-esim-id="${esim.id}"[\\s\\S]*?</article>`).exec(res.body)
      assert.ok(card, 'the page shows the eSIM')
      return card[0]
    }
    assert.doesNotMatch(await page(), /Auto top-up/)
    await patch(esim.id, settings(account.id, { trigger: 'threshold', threshold_pct: 85 }))
    assert.match(
      await page(),
      /Auto top-up is on: more data is added when you have used 85 % of your data/,
    )
    await patch(esim.id, settings(account.id))
    assert.match(await page(), /Auto top-up is on: more data is added when your data runs out/)
  })

  test('bad input is refused naming the field', async () => {
    const account = await fundedAccount(t, fx, 0)
    const esim = await newEsim()
    const field = (body: unknown, status: number, code: string, param: string) =>
      patch(esim.id, body).then((res) => expectError(res, status, code, param))
    await field(
      settings(account.id, { trigger: 'threshold' }),
      400,
      'invalid_parameter',
      'auto_top_up.threshold_pct',
    )
    for (const pct of [0, 101, 50.5])
      await field(
        settings(account.id, { trigger: 'threshold', threshold_pct: pct }),
        400,
        'invalid_parameter',
        'auto_top_up.threshold_pct',
      )
    for (const max of [0, -1, 1.5, '2'])
      await field(
        settings(account.id, { max_per_month: max }),
        400,
        'invalid_parameter',
        'auto_top_up.max_per_month',
      )
    await field(
      settings(account.id, { trigger: 'sometimes' }),
      400,
      'invalid_parameter',
      'auto_top_up.trigger',
    )
    // An add-on of another package: this eSIM does not accept it (the purchase path's error).
    const others = (await api('GET', '/v1/esim/packages?limit=100')).json().data
    const other = others.find((p: any) => p.id !== pkg.id && p.top_up_ids.length > 0)
    await field(
      settings(account.id, { top_up_id: other.top_up_ids[0] }),
      422,
      'esim_top_up_unavailable',
      'auto_top_up.top_up_id',
    )
    // Another cardholder's account.
    const stranger = await newCardholder(t, fx.token)
    const theirs = await fundedAccount(t, { ...fx, cardholder: stranger }, 0)
    await field(settings(theirs.id), 422, 'account_cardholder_mismatch', 'auto_top_up.account_id')
    await field(
      settings('acct_00000000000000000000000000'),
      404,
      'account_not_found',
      'auto_top_up.account_id',
    )
    // An account in a currency the price cannot reach (its program does not spend abroad).
    const euro = await fundedAccount(t, fx, 0, 'EUR')
    const program = `/operator/v1/programs/${fx.tenant.programs.full.id}`
    await t.operator('PATCH', program, { foreign_spend: 'blocked' })
    try {
      await field(settings(euro.id), 422, 'currency_mismatch', 'auto_top_up.account_id')
    } finally {
      await t.operator('PATCH', program, { foreign_spend: 'allowed' })
    }
    assert.equal((await getEsim(esim.id)).auto_top_up, null, 'nothing was set')
  })
})

describe('auto top-up runs', () => {
  test('exactly one top-up per crossing, with concurrent usage reports and several workers', async () => {
    const account = await fundedAccount(t, fx, 100_000)
    const esim = await newEsim()
    const body = settings(account.id, { trigger: 'threshold', threshold_pct: 50 })
    assert.equal((await patch(esim.id, body)).statusCode, 200)
    const volume = esim.packages[0].data_mb
    // Several reports past 50 % at once (some repeated): one crosses (and, in the sandbox, runs the top-up before
    // answering); the others find the crossing claimed. Usage stays on the package: no other crossing.
    const shares = [0.6, 0.6, 0.7, 0.55, 0.6, 0.6]
    await Promise.all(shares.map((share) => usage(esim.id, Math.ceil(volume * share))))
    await usage(esim.id, Math.ceil(volume * 0.8))
    // Several workers, and the crossing's job run twice more by hand.
    const jobs = await t.deps.db
      .selectFrom('jobs')
      .select('payload')
      .where('type', '=', 'esim.auto_top_up')
      .execute()
    const queued = jobs.filter((j) => j.payload.crossing_order_id === esim.order_id)
    assert.equal(queued.length, 1, 'the crossing queued one job')
    await Promise.all([
      runJobs(),
      runJobs(),
      runJobs(),
      openAutoTopUp(t.deps, esim.order_id),
      openAutoTopUp(t.deps, esim.order_id),
    ])
    await runJobs()

    const orders = await autoOrders(esim.id)
    assert.equal(orders.length, 1)
    const order = (await api('GET', `/v1/esim/orders/${orders[0].id}`)).json()
    assert.equal(order.type, 'top_up')
    assert.equal(order.trigger, 'auto')
    assert.equal(order.status, 'completed')
    assert.equal(order.top_up_id, offer.id)
    assert.equal(order.esim_id, esim.id)
    assert.equal(order.account_id, account.id)
    assert.equal(await balance(account.id), 100_000 - offer.price)
    const debits = (await purchases(account.id)).filter((e: any) => e.source_id === order.id)
    assert.equal(debits.length, 1)
    assert.equal(debits[0].amount, -offer.price)
    const after = await getEsim(esim.id)
    assert.equal(after.packages.length, 2)
    assert.equal(after.packages[0].data_used_mb, Math.ceil(volume * 0.8))
    assert.equal(after.packages[1].top_up_id, offer.id)
    assert.equal(after.packages[1].status, 'running')
    assert.equal(after.packages[1].order_id, order.id)
    assert.equal(after.auto_top_up.runs_this_month, 1)
    assert.equal((await events(esim.id, 'esim.topped_up')).length, 1)
    const created = await eventsFor(t, order.id, 'esim_order.created')
    assert.equal(created.length, 1)
    assert.equal(created[0].object.trigger, 'auto')
    // The list filters by trigger.
    const listed = (await api('GET', `/v1/esim/orders?trigger=auto&limit=100`)).json().data
    assert.ok(listed.some((o: any) => o.id === order.id))
    assert.ok(listed.every((o: any) => o.trigger === 'auto'))
    const manual = (await api('GET', `/v1/esim/orders?trigger=manual&limit=100`)).json().data
    assert.ok(manual.some((o: any) => o.id === esim.order_id))
    assert.ok(manual.every((o: any) => o.trigger === 'manual'))
  })

  test('the batched usage sweep, in parallel batches, starts one top-up per crossing; the top-up crossing again starts the next', async () => {
    const account = await fundedAccount(t, fx, 100_000)
    const esim = await newEsim()
    const volume = esim.packages[0].data_mb
    assert.equal(
      (await patch(esim.id, settings(account.id, { trigger: 'threshold', threshold_pct: 50 })))
        .statusCode,
      200,
    )
    const queue = (reports: { esim_id: string; data_used_mb: number }[]) =>
      api('POST', '/v1/simulate/esim/usage_reports', { reports })
    const half = Math.ceil(volume / 2)
    await queue([
      { esim_id: esim.id, data_used_mb: half - 1 },
      { esim_id: esim.id, data_used_mb: half },
      { esim_id: esim.id, data_used_mb: half + 1 },
      { esim_id: esim.id, data_used_mb: half + 2 },
    ])
    await sweepUsage(t.deps, { parallel: 2, batchSize: 1 })
    await runJobs()
    assert.equal((await autoOrders(esim.id)).length, 1)
    // Usage goes on past the threshold on the same package: no new crossing.
    await usage(esim.id, volume - 1)
    await runJobs()
    assert.equal((await autoOrders(esim.id)).length, 1)
    // The package runs out; usage moves to the top-up, which crosses 50 % of its own volume: the next top-up.
    await usage(esim.id, volume)
    await usage(esim.id, Math.ceil(offer.data_mb / 2))
    await runJobs()
    const orders = await autoOrders(esim.id)
    assert.equal(orders.length, 2)
    assert.ok(orders.every((o) => o.status === 'completed'))
    assert.equal(await balance(account.id), 100_000 - 2 * offer.price)
  })

  test('max_per_month caps the runs in a calendar month: the crossing past it gives esim.auto_top_up_failed', async () => {
    const account = await fundedAccount(t, fx, 100_000)
    const esim = await newEsim()
    assert.equal((await patch(esim.id, settings(account.id, { max_per_month: 1 }))).statusCode, 200)
    // In the sandbox the usage report runs the top-up it starts before answering.
    const answer = (await usage(esim.id, esim.packages[0].data_mb)).json()
    assert.equal(answer.packages.length, 2)
    assert.equal(answer.auto_top_up.runs_this_month, 1)
    await runJobs()
    assert.equal((await autoOrders(esim.id)).length, 1)
    await usage(esim.id, offer.data_mb)
    await runJobs()
    assert.equal((await autoOrders(esim.id)).length, 1, 'the cap holds')
    const [failed] = await events(esim.id, 'esim.auto_top_up_failed')
    assert.equal(failed.data.reason, 'max_per_month_reached')
    assert.equal(failed.object.id, esim.id)
    assert.equal(await balance(account.id), 100_000 - offer.price)
    assert.equal((await getEsim(esim.id)).auto_top_up.runs_this_month, 1)
    // In the next calendar month (UTC) the count starts again.
    const row = (await t.deps.db
      .selectFrom('esims')
      .selectAll()
      .where('id', '=', esim.id)
      .executeTakeFirstOrThrow()) as any
    const now = t.clock.now()
    const lastMoment = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - 1)
    assert.equal(presentAutoTopUp(row, lastMoment)!.runs_this_month, 1)
    assert.equal(presentAutoTopUp(row, new Date(lastMoment.getTime() + 1))!.runs_this_month, 0)
  })

  test('an account without funds gives esim.auto_top_up_failed {reason}; only the next crossing tries again', async () => {
    const account = await fundedAccount(t, fx, 0)
    const esim = await newEsim()
    const volume = esim.packages[0].data_mb
    const body = settings(account.id, { trigger: 'threshold', threshold_pct: 50 })
    assert.equal((await patch(esim.id, body)).statusCode, 200)
    await usage(esim.id, Math.ceil(volume * 0.6))
    await runJobs()
    assert.equal((await autoOrders(esim.id)).length, 0)
    const [failed] = await events(esim.id, 'esim.auto_top_up_failed')
    assert.equal(failed.data.reason, 'insufficient_funds')
    assert.deepEqual(failed.object.auto_top_up.runs_this_month, 0)
    assert.equal((await purchases(account.id)).length, 0)
    // Funds arrive: nothing runs until the next crossing (not the same package again, however much more is used).
    await api('POST', `/v1/accounts/${account.id}/credit`, { amount: 100_000 })
    await usage(esim.id, Math.ceil(volume * 0.7))
    await runJobs()
    assert.equal((await autoOrders(esim.id)).length, 0)
    assert.equal((await events(esim.id, 'esim.auto_top_up_failed')).length, 1)
    // A top-up bought by hand is the next package to cross 50 %: this time the auto top-up runs.
    const bought = await api('POST', `/v1/esim/esims/${esim.id}/top_ups`, {
      top_up_id: offer.id,
      reference: reference('top'),
    })
    assert.equal(bought.statusCode, 201, bought.body)
    await usage(esim.id, volume)
    await usage(esim.id, Math.ceil(offer.data_mb / 2))
    await runJobs()
    const orders = await autoOrders(esim.id)
    assert.equal(orders.length, 1)
    assert.equal(orders[0].status, 'completed')
    assert.equal(await balance(account.id), 100_000 - offer.price)
  })

  test('a run interrupted after the debit (the process killed before the network call) is completed by settlement, once', async () => {
    const account = await fundedAccount(t, fx, 100_000)
    const esim = await newEsim()
    assert.equal((await patch(esim.id, settings(account.id))).statusCode, 200)
    // The network's feed reports the depletion: the sweep claims the crossing and queues its job.
    await api('POST', '/v1/simulate/esim/usage_reports', {
      reports: [{ esim_id: esim.id, data_used_mb: esim.packages[0].data_mb }],
    })
    await sweepUsage(t.deps)
    // The job's first half commits (debit and order in one transaction); then the process dies.
    const open = await openAutoTopUp(t.deps, esim.order_id)
    assert.ok(open)
    assert.equal(open.status, 'pending')
    assert.equal(await balance(account.id), 100_000 - offer.price, 'debited with the order')
    assert.equal((await getEsim(esim.id)).packages.length, 1, 'nothing provisioned yet')
    // Settlement finds the order whose process died, provisions it under its id, and completes it once.
    t.clock.advance(25_000)
    try {
      await settleOpenOrders(t.deps)
      await settleOpenOrders(t.deps)
      // The job comes back too (its lease ran out): it finds the order settled.
      await runJobs()
      await openAutoTopUp(t.deps, esim.order_id)
    } finally {
      t.clock.reset()
    }
    const orders = await autoOrders(esim.id)
    assert.equal(orders.length, 1)
    assert.equal(orders[0].status, 'completed')
    assert.equal(await balance(account.id), 100_000 - offer.price)
    assert.equal((await purchases(account.id)).length, 1)
    assert.equal((await getEsim(esim.id)).packages.length, 2)
    assert.equal((await events(esim.id, 'esim.topped_up')).length, 1)
  })

  test('a network call that times out leaves the order unsettled; settlement completes it once', async () => {
    const account = await fundedAccount(t, fx, 100_000)
    const esim = await newEsim()
    assert.equal((await patch(esim.id, settings(account.id))).statusCode, 200)
    await api('POST', '/v1/simulate/esim/provisioning', { next_outcome: 'timeout' })
    await usage(esim.id, esim.packages[0].data_mb)
    await runJobs()
    const [order] = await autoOrders(esim.id)
    assert.equal(order.status, 'unsettled')
    assert.equal(await balance(account.id), 100_000 - offer.price)
    t.clock.advance(10_000)
    try {
      await settleOpenOrders(t.deps)
      await settleOpenOrders(t.deps)
    } finally {
      t.clock.reset()
    }
    const orders = await autoOrders(esim.id)
    assert.equal(orders.length, 1)
    assert.equal(orders[0].status, 'completed')
    assert.equal((await eventsFor(t, order.id, 'esim_order.settled')).length, 1)
    assert.equal((await getEsim(esim.id)).packages.length, 2)
    assert.equal(await balance(account.id), 100_000 - offer.price)
  })

  test('a top-up the network fails is credited back, leaves the month count, and says so', async () => {
    const account = await fundedAccount(t, fx, 100_000)
    const esim = await newEsim()
    assert.equal((await patch(esim.id, settings(account.id))).statusCode, 200)
    await api('POST', '/v1/simulate/esim/provisioning', { next_outcome: 'failure' })
    await usage(esim.id, esim.packages[0].data_mb)
    await runJobs()
    const [order] = await autoOrders(esim.id)
    assert.equal(order.status, 'failed')
    assert.equal(order.failure_reason, 'provisioning_failed')
    assert.equal(await balance(account.id), 100_000)
    const [failed] = await events(esim.id, 'esim.auto_top_up_failed')
    assert.equal(failed.data.reason, 'provisioning_failed')
    const after = await getEsim(esim.id)
    assert.equal(after.packages.length, 1)
    assert.equal(after.auto_top_up.runs_this_month, 0)
  })
})
