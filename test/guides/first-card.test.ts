import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { TestApp } from '../helpers/app.js'
import { routesCalled, runGuide, startLikeNpmStart } from './support.js'

let t: TestApp
let token: () => Promise<string>

before(async () => {
  ;({ t, token } = await startLikeNpmStart())
})
after(async () => {
  await t.close()
})

test('docs/guides/first-card.md runs as written: every call answers 2xx, sets its variables and answers what the guide shows', async () => {
  const run = await runGuide(t, token, 'docs/guides/first-card.md')

  // The path the guide promises, in this order (other calls may come between).
  const expected = [
    'GET /v1/programs',
    'POST /v1/cardholders',
    'POST /v1/cardholders/{id}/kyc',
    'POST /v1/accounts',
    'POST /v1/accounts/{id}/credit',
    'POST /v1/cards',
    'GET /v1/cards/{id}',
    'POST /v1/cards/{id}/activate',
    'POST /v1/simulate/authorizations',
    'POST /v1/simulate/authorizations/{id}/capture',
    'GET /v1/transactions',
    'GET /v1/accounts/{id}/entries',
    'GET /v1/events',
  ]
  const called = routesCalled(run)
  let at = 0
  for (const route of expected) {
    const found = called.indexOf(route, at)
    assert.ok(
      found >= 0,
      `the guide no longer calls ${route} after ${expected[expected.indexOf(route) - 1] ?? 'the start'}; it calls: ${called.join(', ')}`,
    )
    at = found + 1
  }

  const credit = run.runs.flatMap((r) => r.calls).find((c) => c.request.url.endsWith('/credit'))
  assert.ok(
    credit?.request.headers['idempotency-key'],
    'the credit is shown with an Idempotency-Key',
  )
  const card = run.runs
    .flatMap((r) => r.calls)
    .find((c) => c.request.method === 'POST' && new URL(c.request.url).pathname === '/v1/cards')
  const cardBody = JSON.parse(card!.request.body!)
  assert.ok(
    cardBody.embossed_name && cardBody.delivery_address,
    'the card is shown with embossed_name and delivery_address',
  )

  for (const name of [
    'SVC',
    'TOKEN',
    'PROGRAM',
    'BASIC_PROGRAM',
    'CARDHOLDER',
    'ACCOUNT',
    'CARD',
    'PHYSICAL_CARD',
    'AUTH',
    'TXN',
    'BASIC_ACCOUNT',
    'BASIC_CARD',
  ]) {
    assert.ok(run.vars.get(name), `the guide sets $${name}`)
  }
  assert.match(run.vars.get('CARDHOLDER')!, /^chd_/)
  assert.match(run.vars.get('ACCOUNT')!, /^acct_/)
  assert.match(run.vars.get('CARD')!, /^card_/)
  assert.match(run.vars.get('AUTH')!, /^auth_/)
  assert.match(run.vars.get('TXN')!, /^txn_/)

  // What the reader ends with, read directly rather than through the guide.
  const tok = await token()
  const account = (await t.api(tok, 'GET', `/v1/accounts/${run.vars.get('ACCOUNT')}`)).json()
  assert.deepEqual(
    [account.ledger_balance, account.held_balance, account.available_balance],
    [3750, 0, 3750],
  )
  const auth = (await t.api(tok, 'GET', `/v1/authorizations/${run.vars.get('AUTH')}`)).json()
  assert.equal(auth.status, 'closed')
  assert.equal(auth.captured_amount, 1250)
})

test('the short sequence under "Your first card" in README.md runs as written and ends in an approved authorization', async () => {
  const fresh = await startLikeNpmStart()
  try {
    const run = await runGuide(fresh.t, fresh.token, 'README.md', {
      section: '### Your first card',
      prelude: ['TOKEN=$(npx svc token)'],
    })
    const calls = run.runs.flatMap((r) => r.calls)
    assert.equal(calls.length, 7, routesCalled(run).join(', '))
    const authorization = JSON.parse(calls[calls.length - 1].response.body)
    assert.equal(authorization.object, 'authorization')
    assert.equal(authorization.status, 'pending', JSON.stringify(authorization))
    assert.equal(authorization.approved, true)
  } finally {
    await fresh.t.close()
  }
})
