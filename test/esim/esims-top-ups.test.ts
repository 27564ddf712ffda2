import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { isValidIccid } from '../../src/modules/esim/iccid.js'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import {
  availableProfiles,
  completedOrder,
  esimFixture,
  eventsOf,
  expectError,
  fundedAccount,
  newCardholder,
  order,
  packageFor,
  reference,
  type EsimFixture,
} from './support.js'

let t: TestApp
let fx: EsimFixture
let pkg: any

before(async () => {
  t = await startTestApp()
  fx = await esimFixture(t)
  pkg = await packageFor(t, fx.token, 'country=DEU&region=local', 5 * 1024)
})
after(async () => {
  await t.close()
})

const usage = (esimId: string, mb: number) =>
  t.api(fx.token, 'POST', `/v1/simulate/esim/esims/${esimId}/usage`, { data_used_mb: mb })
const offers = async (esimId: string) =>
  (await t.api(fx.token, 'GET', `/v1/esim/esims/${esimId}/top_ups`)).json()
const topUp = (esimId: string, body: Record<string, unknown>) =>
  t.api(fx.token, 'POST', `/v1/esim/esims/${esimId}/top_ups`, {
    reference: reference('top'),
    ...body,
  })

async function newEsim(): Promise<any> {
  const o = await completedOrder(t, fx.token, {
    package_id: pkg.id,
    cardholder_id: fx.cardholder.id,
  })
  return (await t.api(fx.token, 'GET', `/v1/esim/esims/${o.esim_id}`)).json()
}

describe('eSIM profiles', () => {
  test('retrieve carries the activation code LPA:1$<smdp>$<matching id> and install links; listings never carry it', async () => {
    const esim = await newEsim()
    assert.equal(esim.object, 'esim')
    assert.ok(isValidIccid(esim.iccid), esim.iccid)
    assert.equal(esim.status, 'released')
    assert.equal(esim.cardholder_id, fx.cardholder.id)
    assert.equal(esim.activation_code, `LPA:1$${esim.smdp_address}$${esim.matching_id}`)
    assert.equal(
      esim.ios_install_url,
      `https://esimsetup.apple.com/esim_qrcode_provisioning?carddata=${encodeURIComponent(esim.activation_code)}`,
    )
    assert.equal(
      esim.android_install_url,
      `https://esimsetup.android.com/esim_qrcode_provisioning?carddata=${encodeURIComponent(esim.activation_code)}`,
    )
    const [running] = esim.packages
    assert.deepEqual(Object.keys(running).sort(), [
      'activated_at',
      'data_mb',
      'data_remaining_mb',
      'data_used_mb',
      'expires_at',
      'name',
      'order_id',
      'package_id',
      'status',
      'top_up_id',
    ])
    assert.equal(running.top_up_id, null)
    assert.equal(running.order_id, esim.order_id)
    assert.equal(
      new Date(running.expires_at).getTime() - new Date(running.activated_at).getTime(),
      pkg.validity_days * 86_400_000,
    )
    const list = (
      await t.api(fx.token, 'GET', `/v1/esim/esims?cardholder_id=${fx.cardholder.id}`)
    ).json()
    const listed = list.data.find((e: any) => e.id === esim.id)
    assert.ok(listed)
    for (const secret of [
      'activation_code',
      'matching_id',
      'smdp_address',
      'ios_install_url',
      'android_install_url',
    ])
      assert.equal(secret in listed, false, secret)
    assert.equal(JSON.stringify(list).includes(esim.matching_id), false)
    const stranger = await (await createTenant(t)).token()
    expectError(await t.api(stranger, 'GET', `/v1/esim/esims/${esim.id}`), 404, 'esim_not_found')
  })

  test('usage crossing 80 % emits esim.low_data once; reaching the volume depletes the package and emits esim.depleted', async () => {
    const esim = await newEsim()
    const volume = esim.packages[0].data_mb
    const r1 = await usage(esim.id, Math.floor(volume * 0.5))
    assert.equal(r1.statusCode, 200, r1.body)
    assert.equal(r1.json().status, 'enabled')
    assert.equal(r1.json().packages[0].data_remaining_mb, volume - Math.floor(volume * 0.5))
    const mine = async (type: string) =>
      (await eventsOf(t, fx.tenant.organizationId, type)).filter((e) => e.object.id === esim.id)
    assert.equal((await mine('esim.low_data')).length, 0)
    await usage(esim.id, Math.ceil(volume * 0.8))
    await usage(esim.id, Math.ceil(volume * 0.9))
    assert.equal((await mine('esim.low_data')).length, 1)
    assert.equal(
      'activation_code' in (await mine('esim.low_data'))[0].object,
      false,
      'events never carry the activation code',
    )
    const done = await usage(esim.id, volume + 500)
    assert.equal(done.json().packages[0].status, 'depleted')
    assert.equal(done.json().packages[0].data_used_mb, volume)
    assert.equal((await mine('esim.depleted')).length, 1)
    expectError(await usage(esim.id, volume), 400, 'invalid_parameter', 'data_used_mb')
    expectError(await usage('esim_00000000000000000000000000', 1), 404, 'esim_not_found')
  })

  test('one usage report that uses the whole volume emits esim.low_data and then esim.depleted (after installation, first use and the default thresholds)', async () => {
    const esim = await newEsim()
    const res = await usage(esim.id, esim.packages[0].data_mb)
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().packages[0].status, 'depleted')
    const types = (await eventsOf(t, fx.tenant.organizationId))
      .filter((e) => e.object.id === esim.id && e.type.startsWith('esim.'))
      .map((e) => e.type)
    assert.deepEqual(types, [
      'esim.installed',
      'esim.first_used',
      'esim.usage_threshold_reached',
      'esim.usage_threshold_reached',
      'esim.low_data',
      'esim.depleted',
    ])
  })
})

describe('top-ups', () => {
  test('the offers are the add-ons of the running package; buying one adds a package to the eSIM without a new activation code', async () => {
    const esim = await newEsim()
    const list = await offers(esim.id)
    assert.equal(list.object, 'list')
    assert.ok(list.data.length >= 1)
    assert.ok(
      list.data.every(
        (o: any) =>
          o.package_id === pkg.id &&
          o.status === 'on_sale' &&
          o.object === 'esim_top_up' &&
          o.id.startsWith('topup_'),
      ),
    )
    assert.deepEqual(list.data.map((o: any) => o.id).sort(), [...pkg.top_up_ids].sort())
    for (const o of list.data)
      assert.ok(
        !Number.isNaN(Date.parse(o.created_at)) && !Number.isNaN(Date.parse(o.updated_at)),
        'every object carries created_at and updated_at',
      )
    const addOn = list.data.find((o: any) => o.validity_days === 0) ?? list.data[0]
    const ref = reference('top')
    const res = await topUp(esim.id, { top_up_id: addOn.id, reference: ref })
    assert.equal(res.statusCode, 201, res.body)
    const o = res.json()
    assert.equal(o.type, 'top_up')
    assert.equal(o.status, 'completed')
    assert.equal(o.esim_id, esim.id)
    assert.equal(o.top_up_id, addOn.id)
    assert.equal(o.package_id, pkg.id)
    assert.equal(o.price, addOn.price)
    const after = (await t.api(fx.token, 'GET', `/v1/esim/esims/${esim.id}`)).json()
    // The eSIM accumulates packages: the one it was ordered with, untouched, then the top-up, running at once.
    assert.equal(after.packages.length, 2)
    assert.deepEqual(after.packages[0], esim.packages[0])
    const added = after.packages[1]
    assert.equal(added.package_id, pkg.id)
    assert.equal(added.top_up_id, addOn.id)
    assert.equal(added.name, `Top-up ${addOn.name}`)
    assert.equal(added.order_id, o.id)
    assert.equal(added.status, 'running')
    assert.equal(added.data_mb, addOn.data_mb)
    assert.equal(added.data_used_mb, 0)
    assert.ok(added.activated_at)
    // An add-on of 0 days ends with the package it extends.
    assert.equal(
      added.expires_at,
      addOn.validity_days === 0 ? esim.packages[0].expires_at : added.expires_at,
    )
    assert.equal(after.activation_code, esim.activation_code)
    assert.equal(after.matching_id, esim.matching_id)
    assert.equal(after.iccid, esim.iccid)
    assert.equal(
      (await eventsOf(t, fx.tenant.organizationId, 'esim.topped_up')).some(
        (e) => e.object.id === esim.id,
      ),
      true,
    )
    assert.equal(
      (await t.api(fx.token, 'GET', `/v1/esim/orders?reference=${ref}`)).json().data[0].id,
      o.id,
    )
  })

  test('a renewal runs beside the package for its own validity; once the package is used up the top-up carries the usage', async () => {
    const esim = await newEsim()
    const renewal = (await offers(esim.id)).data.find((o: any) => o.validity_days > 0)
    assert.ok(renewal, 'the package sells a renewal')
    const res = await topUp(esim.id, { top_up_id: renewal.id })
    assert.equal(res.statusCode, 201, res.body)
    const after = (await t.api(fx.token, 'GET', `/v1/esim/esims/${esim.id}`)).json()
    const added = after.packages[1]
    assert.equal(
      new Date(added.expires_at).getTime() - new Date(added.activated_at).getTime(),
      renewal.validity_days * 86_400_000,
    )
    // Using the ordered package up leaves the top-up running: it is still offered add-ons and takes the next usage.
    const base = esim.packages[0].data_mb
    const depleted = (await usage(esim.id, base)).json()
    assert.deepEqual(
      depleted.packages.map((p: any) => p.status),
      ['depleted', 'running'],
    )
    assert.ok((await offers(esim.id)).data.length > 0)
    const next = (await usage(esim.id, 100)).json()
    assert.equal(next.packages[0].data_used_mb, base)
    assert.equal(next.packages[1].data_used_mb, 100)
    assert.equal(next.packages[1].data_remaining_mb, renewal.data_mb - 100)
  })

  test('orders and top-ups share one set of references: 409 esim_order_reference_exists either way', async () => {
    const esim = await newEsim()
    const addOn = (await offers(esim.id)).data[0]
    const ref = reference('shared')
    await completedOrder(t, fx.token, { package_id: pkg.id, reference: ref })
    expectError(
      await topUp(esim.id, { top_up_id: addOn.id, reference: ref }),
      409,
      'esim_order_reference_exists',
      'reference',
    )
    const ref2 = reference('shared')
    assert.equal((await topUp(esim.id, { top_up_id: addOn.id, reference: ref2 })).statusCode, 201)
    expectError(
      await order(t, fx.token, { package_id: pkg.id, reference: ref2 }),
      409,
      'esim_order_reference_exists',
      'reference',
    )
    const results = await Promise.all(
      Array.from({ length: 4 }, () => topUp(esim.id, { top_up_id: addOn.id, reference: 'race-1' })),
    )
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 409, 409, 409])
  })

  test('an add-on no longer sold, or whose package is not running, answers 422 esim_top_up_unavailable and is not offered', async () => {
    const esim = await newEsim()
    const [first, second] = (await offers(esim.id)).data
    await t.api(fx.token, 'POST', `/v1/simulate/esim/packages/${first.id}/status`, {
      status: 'withdrawn',
    })
    expectError(
      await topUp(esim.id, { top_up_id: first.id }),
      422,
      'esim_top_up_unavailable',
      'top_up_id',
    )
    assert.equal(
      (await offers(esim.id)).data.some((o: any) => o.id === first.id),
      false,
    )
    // An add-on of another package does not fit this eSIM.
    const other = await packageFor(t, fx.token, 'country=ESP&region=local')
    expectError(
      await topUp(esim.id, { top_up_id: other.top_up_ids[0] }),
      422,
      'esim_top_up_unavailable',
    )
    expectError(
      await topUp(esim.id, { top_up_id: 'topup_00000000000000000000000000' }),
      422,
      'esim_top_up_unavailable',
    )
    // Depleted: the package no longer runs, so nothing is offered or sold.
    await usage(esim.id, esim.packages[0].data_mb)
    assert.deepEqual((await offers(esim.id)).data, [])
    expectError(await topUp(esim.id, { top_up_id: second.id }), 422, 'esim_top_up_unavailable')
  })

  test('an expired package accepts no top-up', async () => {
    const esim = await newEsim()
    const addOn = (await offers(esim.id)).data[0]
    t.clock.advance((pkg.validity_days + 1) * 86_400_000)
    try {
      const token = await fx.tenant.token()
      const now = (await t.api(token, 'GET', `/v1/esim/esims/${esim.id}`)).json()
      assert.equal(now.packages[0].status, 'expired')
      expectError(
        await t.api(token, 'POST', `/v1/esim/esims/${esim.id}/top_ups`, {
          top_up_id: addOn.id,
          reference: reference(),
        }),
        422,
        'esim_top_up_unavailable',
      )
    } finally {
      t.clock.reset()
    }
  })
})

describe('paying from an account', () => {
  test('with account_id the price is debited (ledger entry esim_purchase) in the order that completes', async () => {
    const account = await fundedAccount(t, fx, 10_000)
    const o = await completedOrder(t, fx.token, { package_id: pkg.id, account_id: account.id })
    assert.equal(o.account_id, account.id)
    assert.equal(o.cardholder_id, fx.cardholder.id, 'the account names the cardholder')
    const after = (await t.api(fx.token, 'GET', `/v1/accounts/${account.id}`)).json()
    assert.equal(after.ledger_balance, 10_000 - pkg.price)
    const entries = (await t.api(fx.token, 'GET', `/v1/accounts/${account.id}/entries`)).json().data
    assert.equal(entries[0].type, 'esim_purchase')
    assert.equal(entries[0].amount, -pkg.price)
    const esim = (await t.api(fx.token, 'GET', `/v1/esim/esims/${o.esim_id}`)).json()
    const addOn = (await offers(esim.id)).data[0]
    const top = await topUp(esim.id, { top_up_id: addOn.id, account_id: account.id })
    assert.equal(top.statusCode, 201, top.body)
    assert.equal(
      (await t.api(fx.token, 'GET', `/v1/accounts/${account.id}`)).json().ledger_balance,
      10_000 - pkg.price - addOn.price,
    )
  })

  test('too little money answers 402 insufficient_funds; an unknown or foreign account is refused; nothing is bought', async () => {
    const stock = await availableProfiles(t)
    const poor = await fundedAccount(t, fx, pkg.price - 1)
    const ref = reference()
    expectError(
      await t.api(fx.token, 'POST', '/v1/esim/orders', {
        package_id: pkg.id,
        reference: ref,
        account_id: poor.id,
      }),
      402,
      'insufficient_funds',
    )
    // Another currency converts (test/esim/foreign-currency.test.ts) unless the program spends only at home.
    expectError(
      await order(t, fx.token, {
        package_id: pkg.id,
        account_id: 'acct_00000000000000000000000000',
      }),
      404,
      'account_not_found',
    )
    const someoneElse = await newCardholder(t, fx.token)
    expectError(
      await order(t, fx.token, {
        package_id: pkg.id,
        account_id: poor.id,
        cardholder_id: someoneElse.id,
      }),
      422,
      'account_cardholder_mismatch',
    )
    assert.deepEqual(
      (await t.api(fx.token, 'GET', `/v1/esim/orders?reference=${ref}`)).json().data,
      [],
    )
    assert.equal(await availableProfiles(t), stock)
    assert.equal(
      (await t.api(fx.token, 'GET', `/v1/accounts/${poor.id}`)).json().ledger_balance,
      pkg.price - 1,
    )
  })
})
