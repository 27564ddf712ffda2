/**
 * eSIM orders and add-ons paid from an account in another currency than the price's (decisions.md, "Spending in
 * any currency"): converted at order time at the sandbox rate with the program's markup, the order keeps what it was
 * charged (`charged_amount`, `charged_currency`, `fx`), and the account is debited that, in its own currency.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestApp, type TestApp } from '../helpers/app.js'
import {
  availableProfiles,
  completedOrder,
  type EsimFixture,
  esimFixture,
  expectError,
  fundedAccount,
  order,
  packageFor,
} from './support.js'

let t: TestApp
let fx: EsimFixture
let pkg: any
const RATE = '0.92' // euros per US dollar, pinned for the pair the packages convert through
const MARKUP_BPS = 120

/** A USD price in cents as euro cents: × 0.92 × 1.012, rounded half away from zero, and the markup's part. */
function euros(cents: number): { amount: number; fee: number } {
  const plain = Math.round((cents * 92) / 100)
  const amount = Math.round((cents * 92 * 10_120) / 1_000_000)
  return { amount, fee: amount - plain }
}

const setProgram = (body: Record<string, unknown>) =>
  t.operator('PATCH', `/operator/v1/programs/${fx.tenant.programs.full.id}`, body)

before(async () => {
  t = await startTestApp()
  fx = await esimFixture(t)
  pkg = await packageFor(t, fx.token, 'country=DEU&region=local', 5 * 1024)
  assert.equal(pkg.currency, 'USD')
  const pinned = await t.api(fx.token, 'PUT', '/v1/simulate/fx_rates/USD/EUR', { rate: RATE })
  assert.equal(pinned.statusCode, 200, pinned.body)
  await setProgram({ fx_markup_bps: MARKUP_BPS })
})
after(() => t.close())

describe('paying for an eSIM from an account in another currency', () => {
  test('the price is converted at order time, the order says what it was charged, and the account is debited that', async () => {
    const account = await fundedAccount(t, fx, 100_000, 'EUR')
    const expected = euros(pkg.price)
    const o = await completedOrder(t, fx.token, { package_id: pkg.id, account_id: account.id })
    assert.equal(o.price, pkg.price)
    assert.equal(o.currency, 'USD')
    assert.equal(o.charged_amount, expected.amount)
    assert.equal(o.charged_currency, 'EUR')
    assert.equal(o.fx.rate, RATE)
    assert.equal(o.fx.markup_bps, MARKUP_BPS)
    assert.equal(o.fx.fee_amount, expected.fee)
    assert.equal(o.fx.source, 'sandbox')
    assert.ok(!Number.isNaN(Date.parse(o.fx.rate_at)))
    const after = (await t.api(fx.token, 'GET', `/v1/accounts/${account.id}`)).json()
    assert.equal(after.ledger_balance, 100_000 - expected.amount)
    const entries = (await t.api(fx.token, 'GET', `/v1/accounts/${account.id}/entries`)).json().data
    assert.equal(entries[0].type, 'esim_purchase')
    assert.equal(entries[0].amount, -expected.amount)
    assert.equal(entries[0].currency, 'EUR')
    const read = (await t.api(fx.token, 'GET', `/v1/esim/orders/${o.id}`)).json()
    assert.deepEqual(read, o, 'the order reads back as it was answered')

    // An add-on converts the same way.
    const offers = (await t.api(fx.token, 'GET', `/v1/esim/esims/${o.esim_id}/top_ups`)).json().data
    const addOn = offers[0]
    const top = await t.api(fx.token, 'POST', `/v1/esim/esims/${o.esim_id}/top_ups`, {
      top_up_id: addOn.id,
      account_id: account.id,
      reference: `top-${o.id}`,
    })
    assert.equal(top.statusCode, 201, top.body)
    const bought = top.json()
    assert.equal(bought.charged_amount, euros(addOn.price).amount)
    assert.equal(bought.charged_currency, 'EUR')
    assert.equal(bought.fx.fee_amount, euros(addOn.price).fee)
    const balance = (await t.api(fx.token, 'GET', `/v1/accounts/${account.id}`)).json()
      .ledger_balance
    assert.equal(balance, 100_000 - expected.amount - euros(addOn.price).amount)
  })

  test('in the same currency the charge is the price and fx is null; billed to the organization, nothing is charged', async () => {
    const dollars = await fundedAccount(t, fx, 100_000)
    const paid = await completedOrder(t, fx.token, { package_id: pkg.id, account_id: dollars.id })
    assert.equal(paid.charged_amount, pkg.price)
    assert.equal(paid.charged_currency, 'USD')
    assert.equal(paid.fx, null)
    const billed = await completedOrder(t, fx.token, {
      package_id: pkg.id,
      cardholder_id: fx.cardholder.id,
    })
    assert.equal(billed.charged_amount, null)
    assert.equal(billed.charged_currency, null)
    assert.equal(billed.fx, null)
  })

  test('the balance is judged on the converted price: one cent short is 402, and nothing is bought', async () => {
    const stock = await availableProfiles(t)
    const short = await fundedAccount(t, fx, euros(pkg.price).amount - 1, 'EUR')
    expectError(
      await order(t, fx.token, { package_id: pkg.id, account_id: short.id }),
      402,
      'insufficient_funds',
    )
    assert.equal(await availableProfiles(t), stock)
  })

  test('a program that does not spend abroad refuses with 422 currency_mismatch', async () => {
    const euro = await fundedAccount(t, fx, 100_000, 'EUR')
    await setProgram({ foreign_spend: 'blocked' })
    try {
      expectError(
        await order(t, fx.token, { package_id: pkg.id, account_id: euro.id }),
        422,
        'currency_mismatch',
      )
    } finally {
      await setProgram({ foreign_spend: 'allowed' })
    }
    const balance = (await t.api(fx.token, 'GET', `/v1/accounts/${euro.id}`)).json().ledger_balance
    assert.equal(balance, 100_000)
  })
})
