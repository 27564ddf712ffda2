import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { TestApp } from '../helpers/app.js'
import { withApprovedCardholder } from '../helpers/tenant.js'

// What another card API's habits send gets the way here in its answer (decisions: "Console and reference for daily
// use", errors): a status in PATCH /v1/cards/{id}, a two-letter country, an id of another kind in a path.
let t: TestApp
let token: string
let cardholder: any

withApprovedCardholder((fixture) => ({ t, token, cardholder } = fixture))

describe('errors answer other APIs’ habits with the way here', () => {
  test('PATCH /v1/cards/{id} with a status names the lifecycle endpoints', async () => {
    const res = await t.api(token, 'PATCH', '/v1/cards/card_01JD3R5M7N0000000000000000', {
      status: 'frozen',
    })
    assert.equal(res.statusCode, 400, res.body)
    const error = res.json().error
    assert.equal(error.code, 'unknown_parameter')
    assert.equal(error.param, 'status')
    assert.match(error.message, /^Unknown parameter: status\. A card's status is not set here/)
    assert.match(error.message, /\/freeze, \/unfreeze or \/close/)
  })

  test('a two-letter country is told its three-letter code', async () => {
    const res = await t.api(token, 'POST', '/v1/cardholders', {
      type: 'individual',
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: `habits.${Date.now()}@example.com`,
      address: { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'US' },
    })
    assert.equal(res.statusCode, 400, res.body)
    const error = res.json().error
    assert.equal(error.code, 'invalid_parameter')
    assert.equal(error.param, 'address.country')
    assert.match(error.message, /three-letter ISO 3166-1 country code: US is USA/)
    const unknown = await t.api(token, 'POST', '/v1/cardholders', {
      type: 'individual',
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: `habits.zz.${Date.now()}@example.com`,
      address: { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'ZZ' },
    })
    assert.doesNotMatch(unknown.json().error.message, / is /)
  })

  test('an id of another kind in a path says what kind it is', async () => {
    const res = await t.api(token, 'GET', `/v1/cards/${cardholder.id}`)
    assert.equal(res.statusCode, 404)
    const error = res.json().error
    assert.equal(error.code, 'card_not_found')
    assert.equal(
      error.message,
      `${cardholder.id} is a cardholder id; this path takes a card id (card_…).`,
    )
    const own = await t.api(token, 'GET', '/v1/cards/card_01JD3R5M7N0000000000000000')
    assert.equal(own.json().error.message, 'No card with this id.')
    const account = await t.api(token, 'GET', `/v1/accounts/${cardholder.id}`)
    assert.match(account.json().error.message, /is a cardholder id; this path takes an account id/)
    const kyc = await t.api(token, 'GET', `/v1/cardholders/acct_01JD3R5M7N0000000000000000`)
    assert.equal(kyc.json().error.code, 'cardholder_not_found')
    assert.match(kyc.json().error.message, /^acct_\S+ is an account id/)
  })
})
