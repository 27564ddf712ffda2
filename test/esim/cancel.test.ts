/**
 * Canceling an eSIM never installed nor used: every order that put a package on it is refunded to the account that
 * paid (a ledger entry `esim_refund` of what it was charged, in the account's currency) or left off the organization's
 * bill (`refunded_at`); the eSIM and its packages become canceled, and nothing acts on them any more.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { eventsFor } from '../helpers/api.js'
import {
  completedOrder,
  esimFixture,
  expectError,
  fundedAccount,
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
after(() => t.close())

const api = (method: string, url: string, body?: unknown) => t.api(fx.token, method, url, body)
const balance = async (accountId: string) =>
  (await api('GET', `/v1/accounts/${accountId}`)).json().available_balance
const entries = async (accountId: string) =>
  (await api('GET', `/v1/accounts/${accountId}/entries?limit=100`)).json().data

describe('cancel', () => {
  test('a package and its top-up paid from an account are refunded to it, once; the eSIM and its packages read canceled', async () => {
    const account = await fundedAccount(t, fx, 100_000)
    const o = await completedOrder(t, fx.token, {
      package_id: pkg.id,
      cardholder_id: fx.cardholder.id,
      account_id: account.id,
    })
    const topUpId = pkg.top_up_ids[0]
    const top = await api('POST', `/v1/esim/esims/${o.esim_id}/top_ups`, {
      top_up_id: topUpId,
      reference: reference('top'),
      account_id: account.id,
    })
    assert.equal(top.statusCode, 201, top.body)
    const paid = await balance(account.id)
    assert.equal(paid, 100_000 - o.price - top.json().price)

    const res = await api('POST', `/v1/esim/esims/${o.esim_id}/cancel`, {})
    assert.equal(res.statusCode, 200, res.body)
    const esim = res.json()
    assert.equal(esim.status, 'canceled')
    assert.deepEqual(
      esim.packages.map((p: any) => p.status),
      ['canceled', 'canceled'],
    )
    assert.equal(await balance(account.id), 100_000)
    const refunds = (await entries(account.id)).filter((e: any) => e.type === 'esim_refund')
    assert.deepEqual(refunds.map((e: any) => e.amount).sort(), [o.price, top.json().price].sort())
    for (const id of [o.id, top.json().id]) {
      const order = (await api('GET', `/v1/esim/orders/${id}`)).json()
      assert.ok(order.refunded_at, `${id} refunded`)
      assert.equal(order.status, 'completed')
    }
    const canceled = await eventsFor(t, o.esim_id, 'esim.canceled')
    assert.equal(canceled.length, 1)
    assert.equal(canceled[0].object.status, 'canceled')
    // The deposit, then the two refunds.
    assert.equal((await eventsFor(t, account.id, 'account.credited')).length, 3)

    // Again: the canceled eSIM, nothing refunded twice.
    const again = await api('POST', `/v1/esim/esims/${o.esim_id}/cancel`, {})
    assert.equal(again.statusCode, 200, again.body)
    assert.equal(again.json().status, 'canceled')
    assert.equal(await balance(account.id), 100_000)
    assert.equal((await eventsFor(t, o.esim_id, 'esim.canceled')).length, 1)

    // Nothing acts on it any more.
    const refused = (res: any) => expectError(res, 422, 'esim_invalid_state')
    refused(await api('POST', `/v1/simulate/esim/esims/${o.esim_id}/usage`, { data_used_mb: 1 }))
    refused(await api('POST', `/v1/simulate/esim/esims/${o.esim_id}/install`, {}))
    refused(await api('POST', `/v1/simulate/esim/esims/${o.esim_id}/location`, { country: 'DEU' }))
    refused(await api('POST', `/v1/esim/esims/${o.esim_id}/suspend`, {}))
    refused(await api('PATCH', `/v1/esim/esims/${o.esim_id}`, { alert_settings: null }))
    refused(
      await api('POST', `/v1/esim/esims/${o.esim_id}/top_ups`, {
        top_up_id: topUpId,
        reference: reference('top'),
      }),
    )
  })

  test('an order billed to the organization is marked refunded, with no ledger entry', async () => {
    const o = await completedOrder(t, fx.token, {
      package_id: pkg.id,
      cardholder_id: fx.cardholder.id,
    })
    const res = await api('POST', `/v1/esim/esims/${o.esim_id}/cancel`, {})
    assert.equal(res.statusCode, 200, res.body)
    const order = (await api('GET', `/v1/esim/orders/${o.id}`)).json()
    assert.ok(order.refunded_at)
    assert.equal(order.account_id, null)
  })

  test('an account in another currency gets back what it was charged, in its currency', async () => {
    const pinned = await api('PUT', '/v1/simulate/fx_rates/USD/EUR', { rate: '0.92' })
    assert.equal(pinned.statusCode, 200, pinned.body)
    const account = await fundedAccount(t, fx, 100_000, 'EUR')
    const o = await completedOrder(t, fx.token, {
      package_id: pkg.id,
      cardholder_id: fx.cardholder.id,
      account_id: account.id,
    })
    assert.equal(o.charged_currency, 'EUR')
    assert.equal(await balance(account.id), 100_000 - o.charged_amount)
    await api('PUT', '/v1/simulate/fx_rates/USD/EUR', { rate: '0.50' }) // the rate moved since: irrelevant
    const res = await api('POST', `/v1/esim/esims/${o.esim_id}/cancel`, {})
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(await balance(account.id), 100_000)
    const refund = (await entries(account.id)).find((e: any) => e.type === 'esim_refund')
    assert.equal(refund.amount, o.charged_amount)
    assert.equal(refund.currency, 'EUR')
  })

  test('an eSIM installed, or on which data was used, cannot be canceled: 422 esim_invalid_state, nothing refunded', async () => {
    const account = await fundedAccount(t, fx, 100_000)
    const installed = await completedOrder(t, fx.token, {
      package_id: pkg.id,
      cardholder_id: fx.cardholder.id,
      account_id: account.id,
    })
    await api('POST', `/v1/simulate/esim/esims/${installed.esim_id}/install`, {})
    expectError(
      await api('POST', `/v1/esim/esims/${installed.esim_id}/cancel`, {}),
      422,
      'esim_invalid_state',
    )
    const used = await completedOrder(t, fx.token, {
      package_id: pkg.id,
      cardholder_id: fx.cardholder.id,
      account_id: account.id,
    })
    await api('POST', `/v1/simulate/esim/esims/${used.esim_id}/usage`, { data_used_mb: 3 })
    expectError(
      await api('POST', `/v1/esim/esims/${used.esim_id}/cancel`, {}),
      422,
      'esim_invalid_state',
    )
    assert.equal(await balance(account.id), 100_000 - 2 * pkg.price)
    assert.equal((await entries(account.id)).filter((e: any) => e.type === 'esim_refund').length, 0)
    const stranger = await (await createTenant(t)).token()
    expectError(
      await t.api(stranger, 'POST', `/v1/esim/esims/${installed.esim_id}/cancel`, {}),
      404,
      'esim_not_found',
    )
  })
})
