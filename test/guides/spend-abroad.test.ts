import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertCalled, guideApp, runGuide } from './support.js'

const app = guideApp()

test('docs/guides/spend-abroad.md runs as written: every call answers as the guide shows', async () => {
  const { t, token } = app
  const run = await runGuide(t, token, 'docs/guides/spend-abroad.md')
  assertCalled(run, [
    'GET /v1/fx_rates',
    'PUT /v1/simulate/fx_rates/EUR/USD',
    'PUT /v1/simulate/fx_rates/USD/EUR',
    'POST /v1/simulate/authorizations',
    'POST /v1/simulate/authorizations/{id}/increment',
    'POST /v1/simulate/authorizations/{id}/capture',
    'POST /v1/transactions/{id}/refund',
    'POST /v1/esim/orders',
  ])

  // The dollar account paid the café's euros at the clearing rate and got 10 euros back at the refund's; the euro
  // account paid for the eSIM.
  const dollars = (
    await t.api(await token(), 'GET', `/v1/accounts/${run.vars.get('DOLLARS')}`)
  ).json()
  assert.equal(dollars.held_balance, 0)
  assert.equal(dollars.ledger_balance, 50_000 - 5500 + 1050)
  assert.equal(dollars.available_balance, 50_000 - 5500 + 1050)
  const euros = (await t.api(await token(), 'GET', `/v1/accounts/${run.vars.get('EUROS')}`)).json()
  assert.equal(euros.ledger_balance, 5000 - 1196)
})
