/**
 * Sandbox clocks, the eSIM side (docs/sandbox-clocks.md): orders, eSIMs, packages, top-ups and usage of a cardholder on
 * a clock are on the clock's time; the validity warnings and expiry run in the clock's advance in time order (the
 * wall-time sweep leaves them alone), auto top-ups started under the clock wait for its advance, and their events carry
 * `clock_id`. eSIMs without a clock, and another organization's, are untouched by an advance.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { sweepUsage } from '../../src/modules/esim/usage.js'
import { sweepValidity } from '../../src/modules/esim/validity.js'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { post } from '../authorizations/support.js'
import { runJobs } from '../cards/support.js'
import {
  completedOrder,
  esimFixture,
  newCardholder,
  packageFor,
  reference,
  type EsimFixture,
} from '../esim/support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

const HOUR = 3_600_000
const DAY = 24 * HOUR
const F = '2026-03-01T00:00:00.000Z'
const at = (ms: number) => new Date(new Date(F).getTime() + ms).toISOString()
let counter = 0

async function clock(): Promise<any> {
  const sim = await t.api(token, 'POST', '/v1/simulate/esim/provisioning', { latency_ms: 0 })
  assert.equal(sim.statusCode, 200, sim.body)
  return post(t, token, '/v1/simulate/clocks', { frozen_time: F }, 201)
}

const advance = (clockId: string, by: string) =>
  post(t, token, `/v1/simulate/clocks/${clockId}/advance`, { by }, 200)

async function holderOn(clockId: string): Promise<any> {
  const res = await t.api(token, 'POST', '/v1/cardholders', {
    type: 'individual',
    first_name: 'Eve',
    last_name: 'Clock',
    email: `esim-clock.${process.pid}.${++counter}.${Date.now()}@example.com`,
    address: { line1: '1 Rue de Rivoli', city: 'Paris', postal_code: '75001', country: 'FRA' },
    clock_id: clockId,
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** A funded USD account of the cardholder (KYC verified before the clock's time when it is on one). */
async function fundedAccount(holderId: string, verifiedAt: string, tok = token): Promise<any> {
  const kyc = await t.api(tok, 'POST', `/v1/cardholders/${holderId}/kyc`, {
    status: 'approved',
    provider: 'acme-kyc',
    verified_at: verifiedAt,
  })
  assert.equal(kyc.statusCode, 201, kyc.body)
  const res = await t.api(tok, 'POST', '/v1/accounts', {
    program_id: tenant.programs.full.id,
    cardholder_id: holderId,
    currency: 'USD',
  })
  assert.equal(res.statusCode, 201, res.body)
  const account = res.json()
  await post(t, tok, `/v1/accounts/${account.id}/credit`, { amount: 100_000 }, 200)
  return account
}

const getEsim = async (id: string, tok = token) =>
  (await t.api(tok, 'GET', `/v1/esim/esims/${id}`)).json()

/** Stored events about these objects, oldest first: [type, object id, clock_id]. */
async function eventsAbout(
  ids: readonly string[],
  types?: readonly string[],
): Promise<[string, string, string | null][]> {
  let q = t.deps.db.selectFrom('events').select(['type', 'data', 'clock_id']).orderBy('id')
  if (types) q = q.where('type', 'in', [...types])
  return (await q.execute())
    .map((r) => {
      const data = typeof r.data === 'string' ? JSON.parse(r.data) : (r.data as any)
      return [r.type, data.object?.id as string, r.clock_id] as [string, string, string | null]
    })
    .filter(([, id]) => ids.includes(id))
}

const VALIDITY = ['esim.validity_expiring', 'esim.expired']

/** Moves an eSIM's validity into wall time's past (as if bought long ago), so that the wall-time sweep has it due. */
async function endedOnWallTime(esimId: string): Promise<void> {
  const past = new Date(t.clock.now().getTime() - HOUR)
  await sql`UPDATE esims SET valid_until = ${past} WHERE id = ${esimId}`.execute(t.deps.db)
  await sql`UPDATE esim_bundles SET expires_at = ${past} WHERE esim_id = ${esimId}`.execute(
    t.deps.db,
  )
}

test('an order, its eSIM and package, a top-up and usage under a clock are on the clock time; events carry clock_id', async () => {
  const c = await clock()
  const holder = await holderOn(c.id)
  const pkg = await packageFor(t, token, 'country=FRA&region=local&status=on_sale')
  const order = await completedOrder(t, token, { package_id: pkg.id, cardholder_id: holder.id })
  assert.deepEqual([order.created_at, order.updated_at, order.settled_at], [F, F, F])
  const esim = await getEsim(order.esim_id)
  const valid = at(pkg.validity_days * DAY)
  assert.deepEqual(
    [esim.created_at, esim.valid_until, esim.packages[0].activated_at, esim.packages[0].expires_at],
    [F, valid, F, valid],
  )

  // Paid from the cardholder's account (no cardholder_id in the order): the account's cardholder's clock.
  await advance(c.id, 'PT2H')
  const account = await fundedAccount(holder.id, at(-DAY))
  const paid = await completedOrder(t, token, { package_id: pkg.id, account_id: account.id })
  assert.deepEqual([paid.created_at, paid.settled_at], [at(2 * HOUR), at(2 * HOUR)])

  const offers = (await t.api(token, 'GET', `/v1/esim/esims/${esim.id}/top_ups`)).json().data
  const offer = offers.find((o: any) => o.validity_days > 0)
  assert.ok(offer, 'an add-on with its own validity')
  const topUp = await post(
    t,
    token,
    `/v1/esim/esims/${esim.id}/top_ups`,
    { top_up_id: offer.id, reference: reference('top') },
    201,
  )
  assert.equal(topUp.created_at, at(2 * HOUR))
  const topped = await getEsim(esim.id)
  assert.equal(topped.packages[1].expires_at, at(2 * HOUR + offer.validity_days * DAY))

  const used = await post(t, token, `/v1/simulate/esim/esims/${esim.id}/usage`, { data_used_mb: 1 })
  assert.deepEqual(
    [used.installed_at, used.first_used_at, used.updated_at],
    [at(2 * HOUR), at(2 * HOUR), at(2 * HOUR)],
  )
  const types = new Set((await eventsAbout([esim.id, order.id, topUp.id])).map(([ty]) => ty))
  for (const ty of ['esim_order.created', 'esim.topped_up', 'esim.installed', 'esim.first_used'])
    assert.ok(types.has(ty), ty)
  for (const [ty, , clockId] of await eventsAbout([esim.id, order.id, topUp.id, paid.id]))
    assert.equal(clockId, c.id, ty)
  const debited = await t.deps.db
    .selectFrom('events')
    .select('clock_id')
    .where('type', '=', 'account.debited')
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow()
  assert.equal(debited.clock_id, c.id)
})

test('eSIM validity: warnings and expiry under the clock run in its advance, in time order; the wall-time sweep and other eSIMs are apart', async () => {
  const c = await clock()
  const holder = await holderOn(c.id)
  const pkg = await packageFor(t, token, 'country=FRA&region=local&status=on_sale')
  const days = pkg.validity_days
  const first = (await completedOrder(t, token, { package_id: pkg.id, cardholder_id: holder.id }))
    .esim_id
  await advance(c.id, 'P1D')
  const second = (await completedOrder(t, token, { package_id: pkg.id, cardholder_id: holder.id }))
    .esim_id
  // Without a clock, and in another organization: eSIMs whose validity has ended on wall time.
  const wallHolder = await newCardholder(t, token)
  const wall = (
    await completedOrder(t, token, { package_id: pkg.id, cardholder_id: wallHolder.id })
  ).esim_id
  await endedOnWallTime(wall)
  const other: EsimFixture = await esimFixture(t)
  const elsewhere = (
    await completedOrder(t, other.token, { package_id: pkg.id, cardholder_id: other.cardholder.id })
  ).esim_id
  await endedOnWallTime(elsewhere)

  // The clock's eSIMs end long before wall time: the wall-time sweep leaves them to the clock.
  await sweepValidity(t.deps)
  assert.deepEqual(await eventsAbout([first, second], VALIDITY), [])
  const wallDone = await eventsAbout([wall, elsewhere], VALIDITY)
  assert.deepEqual(
    wallDone.map(([ty, id, clockId]) => [ty, id, clockId]).sort(),
    [
      ['esim.expired', elsewhere, null],
      ['esim.expired', wall, null],
    ].sort(),
  )

  await advance(c.id, `P${days + 2}D`)
  assert.deepEqual(await eventsAbout([first, second], VALIDITY), [
    ['esim.validity_expiring', first, c.id],
    ['esim.expired', first, c.id],
    ['esim.validity_expiring', second, c.id],
    ['esim.expired', second, c.id],
  ])
  const ended = await getEsim(first)
  assert.deepEqual([ended.packages[0].status, ended.updated_at], ['expired', at(days * DAY)])
  const warned = (await t.api(token, 'GET', '/v1/events?type=esim.validity_expiring')).json()
  const warning = warned.data.find((e: any) => e.data.object.id === second)
  assert.deepEqual([warning.clock_id, warning.data.hours_left], [c.id, 24])
  // Nothing twice, and the eSIMs without a clock saw nothing more.
  await advance(c.id, 'P1D')
  assert.equal((await eventsAbout([first, second, wall, elsewhere], VALIDITY)).length, 6)
})

test('eSIM alerts: usage reports of the network feed land at the clock time, their alerts carry clock_id; others stay on wall time', async () => {
  const c = await clock()
  const holder = await holderOn(c.id)
  const pkg = await packageFor(t, token, 'country=FRA&region=local&status=on_sale', 1024)
  const onClock = (await completedOrder(t, token, { package_id: pkg.id, cardholder_id: holder.id }))
    .esim_id
  const wallHolder = await newCardholder(t, token)
  const wall = (
    await completedOrder(t, token, { package_id: pkg.id, cardholder_id: wallHolder.id })
  ).esim_id
  await advance(c.id, 'PT5H')
  const mb = Math.ceil(pkg.data_mb * 0.85)
  await post(
    t,
    token,
    '/v1/simulate/esim/usage_reports',
    {
      reports: [
        { esim_id: onClock, data_used_mb: mb },
        { esim_id: wall, data_used_mb: mb },
      ],
    },
    202,
  )
  await sweepUsage(t.deps)
  const alerts = ['esim.usage_threshold_reached', 'esim.low_data']
  assert.deepEqual(await eventsAbout([onClock, wall], alerts), [
    ['esim.usage_threshold_reached', onClock, c.id],
    ['esim.low_data', onClock, c.id],
    ['esim.usage_threshold_reached', wall, null],
    ['esim.low_data', wall, null],
  ])
  const used = await getEsim(onClock)
  assert.deepEqual([used.first_used_at, used.updated_at], [at(5 * HOUR), at(5 * HOUR)])
  const wallUsed = await getEsim(wall)
  assert.notEqual(wallUsed.first_used_at, at(5 * HOUR))
})

test('auto top-up: a crossing under the clock waits for its advance and buys at the crossing time; one without a clock runs on wall time', async () => {
  const c = await clock()
  const holder = await holderOn(c.id)
  const account = await fundedAccount(holder.id, at(-DAY))
  const pkg = await packageFor(t, token, 'country=DEU&region=local&status=on_sale', 5 * 1024)
  const esim = await getEsim(
    (await completedOrder(t, token, { package_id: pkg.id, cardholder_id: holder.id })).esim_id,
  )
  const offers = (await t.api(token, 'GET', `/v1/esim/esims/${esim.id}/top_ups`)).json().data
  const offer = offers.find((o: any) => o.data_mb !== null)
  const autoTopUp = (accountId: string) => ({
    auto_top_up: {
      top_up_id: offer.id,
      account_id: accountId,
      trigger: 'depleted',
      max_per_month: 3,
    },
  })
  const set = await t.api(token, 'PATCH', `/v1/esim/esims/${esim.id}`, autoTopUp(account.id))
  assert.equal(set.statusCode, 200, set.body)
  // The same without a clock.
  const wallHolder = await newCardholder(t, token)
  const wallAccount = await fundedAccount(
    wallHolder.id,
    new Date(t.clock.now().getTime() - HOUR).toISOString(),
  )
  const wallEsim = await getEsim(
    (await completedOrder(t, token, { package_id: pkg.id, cardholder_id: wallHolder.id })).esim_id,
  )
  const wallSet = await t.api(
    token,
    'PATCH',
    `/v1/esim/esims/${wallEsim.id}`,
    autoTopUp(wallAccount.id),
  )
  assert.equal(wallSet.statusCode, 200, wallSet.body)

  await advance(c.id, 'PT3H')
  const volume = esim.packages[0].data_mb
  await post(
    t,
    token,
    '/v1/simulate/esim/usage_reports',
    {
      reports: [
        { esim_id: esim.id, data_used_mb: volume },
        { esim_id: wallEsim.id, data_used_mb: volume },
      ],
    },
    202,
  )
  await sweepUsage(t.deps)
  await runJobs(t)
  const autoOrders = async () =>
    (await t.api(token, 'GET', '/v1/esim/orders?trigger=auto&limit=100')).json().data
  const ofEsim = async (id: string) => (await autoOrders()).filter((o: any) => o.esim_id === id)
  // The wall-time job ran; the clock's waits on the clock.
  assert.equal((await ofEsim(wallEsim.id)).length, 1)
  assert.equal((await ofEsim(esim.id)).length, 0)
  const waiting = await t.deps.db
    .selectFrom('jobs')
    .select(['state', 'clock_id', 'run_at'])
    .where('type', '=', 'esim.auto_top_up')
    .where('clock_id', '=', c.id)
    .execute()
  assert.deepEqual(
    waiting.map((j) => [j.state, new Date(j.run_at).toISOString()]),
    [['on_clock', at(3 * HOUR)]],
  )

  await advance(c.id, 'PT1H')
  const [bought] = await ofEsim(esim.id)
  assert.ok(bought, 'the advance ran the auto top-up')
  assert.deepEqual([bought.status, bought.created_at], ['completed', at(3 * HOUR)])
  const after = await getEsim(esim.id)
  assert.equal(after.packages[1].activated_at, at(3 * HOUR))
  assert.deepEqual(await eventsAbout([bought.id], ['esim_order.created']), [
    ['esim_order.created', bought.id, c.id],
  ])
  assert.deepEqual(await eventsAbout([esim.id], ['esim.topped_up']), [
    ['esim.topped_up', esim.id, c.id],
  ])
  const [wallBought] = await ofEsim(wallEsim.id)
  assert.deepEqual(await eventsAbout([wallBought.id], ['esim_order.created']), [
    ['esim_order.created', wallBought.id, null],
  ])
})
