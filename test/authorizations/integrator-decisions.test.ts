import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, test } from 'node:test'
import Stripe from 'stripe'
import { verifyWebhook } from '../../src/lib/webhook-signature.js'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import {
  answerAfter,
  answerWith,
  attempts,
  putEndpoint,
  requestsAbout,
  startReceiver,
  type Receiver,
} from './integrator-support.js'
import { authorize, balances, eventsFor, fundedCard, post, type Funded } from './support.js'

describe('authorizations decided by the integrator', () => {
  let t: TestApp
  let tenant: TestClient
  let token: string
  let receiver: Receiver
  let f: Funded
  let secret: string

  before(async () => {
    t = await startTestApp()
    tenant = await createTenant(t)
    token = await tenant.token()
    receiver = await startReceiver('/authorize')
    f = await fundedCard(t, tenant, token, 1_000_000)
    secret = (
      await putEndpoint(t, token, { url: receiver.url, timeout_ms: 300, stand_in: 'decline' })
    ).secret
  })
  after(async () => {
    await receiver.close()
    await t.close()
  })
  beforeEach(async () => {
    receiver.received.length = 0
    answerWith(receiver, { approved: true })
    // Each test starts with the default settings and a closed circuit (PUT resets this process's breaker).
    await putEndpoint(t, token, { url: receiver.url, timeout_ms: 300, stand_in: 'decline' })
  })

  test('the endpoint approves: the authorization is approved, holds the amount and records the integrator as its decider', async () => {
    const before = await balances(t, token, f.account.id)
    const auth = await authorize(t, token, f.card.id, 1500)
    assert.equal(auth.status, 'pending')
    assert.equal(auth.approved, true)
    assert.equal(auth.held_amount, 1500)
    assert.equal(auth.decision.source, 'integrator')
    assert.equal(typeof auth.decision.latency_ms, 'number')
    assert.equal(auth.decision.stand_in_reason, undefined)
    assert.equal((await balances(t, token, f.account.id)).held, before.held + 1500)
    const asked = requestsAbout(receiver, auth.id)
    assert.equal(asked.length, 1)
    // What was asked: the authorization as it would be written, before any hold.
    const sent = asked[0].body
    assert.equal(sent.type, 'authorization.request')
    assert.equal(sent.object, 'event')
    assert.equal(asked[0].headers['svc-event-type'], 'authorization.request')
    assert.equal(sent.data.object.status, 'pending')
    assert.equal(sent.data.object.approved, true)
    assert.equal(sent.data.object.held_amount, 0)
    assert.equal(sent.data.object.amount, 1500)
    assert.equal(sent.data.object.card_id, f.card.id)
    assert.deepEqual(sent.data.request, { type: 'authorization', amount: 1500 })
    // The stored authorization and its event carry the same decision.
    const got = (await t.api(token, 'GET', `/v1/authorizations/${auth.id}`)).json()
    assert.deepEqual(got.decision, auth.decision)
    assert.deepEqual(got.request_history[0].decision, auth.decision)
    const [created] = await eventsFor(t, auth.id, 'authorization.created')
    assert.deepEqual(created.object.decision, auth.decision)
  })

  test("the request is signed like a webhook: Svc-Signature verifies with the endpoint secret (ours and Stripe's verifier)", async () => {
    const auth = await authorize(t, token, f.card.id, 100)
    const [got] = requestsAbout(receiver, auth.id)
    const header = got.headers['svc-signature'] as string
    const nowSec = Math.floor(t.clock.now().getTime() / 1000)
    assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/)
    assert.equal(verifyWebhook(got.raw, header, secret, 300, nowSec), true)
    assert.equal(verifyWebhook(got.raw, header, 'whsec_wrong', 300, nowSec), false)
    assert.equal(
      verifyWebhook(got.raw.replace('"amount":100', '"amount":101'), header, secret, 300, nowSec),
      false,
    )
    const event = new Stripe('sk_test_placeholder').webhooks.constructEvent(
      got.raw,
      header,
      secret,
      300,
      undefined,
      nowSec,
    )
    assert.equal(event.id, got.body.id)
    assert.equal(got.headers['svc-event-id'], got.body.id)
  })

  test('a partial approval approves and holds only the amount the endpoint names', async () => {
    answerWith(receiver, { approved: true, amount: 600 })
    const before = await balances(t, token, f.account.id)
    const auth = await authorize(t, token, f.card.id, 1000)
    assert.equal(auth.status, 'pending')
    assert.equal(auth.approved, true)
    assert.equal(auth.amount, 600)
    assert.equal(auth.held_amount, 600)
    assert.equal(auth.request_history[0].amount, 1000)
    assert.equal((await balances(t, token, f.account.id)).held, before.held + 600)
    const [attempt] = await attempts(t, token)
    assert.equal(attempt.authorization_id, auth.id)
    assert.equal(attempt.outcome, 'partially_approved')
    assert.equal(attempt.approved_amount, 600)
  })

  test('a spend in another currency is sent converted, with merchant_amount, merchant_currency and fx; a partial approval is in the account currency', async () => {
    const pinned = await t.api(token, 'PUT', '/v1/simulate/fx_rates/EUR/USD', { rate: '1.0825' })
    assert.equal(pinned.statusCode, 200, pinned.body)
    answerWith(receiver, { approved: true, amount: 1000 })
    const before = await balances(t, token, f.account.id)
    const auth = await authorize(t, token, f.card.id, 2000, { currency: 'EUR' })
    const [asked] = requestsAbout(receiver, auth.id)
    // 20.00 EUR × 1.0825 = 21.65 USD (the program has no markup)
    const sent = asked.body.data
    assert.equal(sent.object.amount, 2165)
    assert.equal(sent.object.currency, 'USD')
    assert.equal(sent.object.merchant_amount, 2000)
    assert.equal(sent.object.merchant_currency, 'EUR')
    assert.deepEqual(
      {
        rate: sent.object.fx.rate,
        markup: sent.object.fx.markup_bps,
        fee: sent.object.fx.fee_amount,
      },
      { rate: '1.0825', markup: 0, fee: 0 },
    )
    assert.deepEqual(sent.request, { type: 'authorization', amount: 2165 })
    assert.equal(auth.status, 'pending', JSON.stringify(auth))
    assert.equal(auth.amount, 1000)
    assert.equal(auth.held_amount, 1000)
    assert.equal(auth.merchant_amount, 2000)
    assert.equal((await balances(t, token, f.account.id)).held, before.held + 1000)
  })

  test('an amount above the one asked is not a partial approval: invalid_response, the stand-in decides', async () => {
    answerWith(receiver, { approved: true, amount: 1001 })
    const auth = await authorize(t, token, f.card.id, 1000)
    assert.equal(auth.status, 'declined')
    assert.equal(auth.decline_reason, 'integrator_unavailable')
    assert.deepEqual(
      { source: auth.decision.source, reason: auth.decision.stand_in_reason },
      { source: 'stand_in', reason: 'invalid_response' },
    )
  })

  test('the endpoint declines: declined integrator_declined, nothing held', async () => {
    answerWith(receiver, { approved: false })
    const before = await balances(t, token, f.account.id)
    const auth = await authorize(t, token, f.card.id, 700)
    assert.equal(auth.status, 'declined')
    assert.equal(auth.approved, false)
    assert.equal(auth.decline_reason, 'integrator_declined')
    assert.equal(auth.held_amount, 0)
    assert.equal(auth.decision.source, 'integrator')
    assert.deepEqual(await balances(t, token, f.account.id), before)
    const [attempt] = await attempts(t, token)
    assert.equal(attempt.outcome, 'declined')
    assert.equal(attempt.response_status, 200)
  })

  test("no answer within timeout_ms: the stand-in declines (integrator_unavailable) or approves on the service's rules, stand_in_reason timeout", async () => {
    answerAfter(receiver, 600)
    const declined = await authorize(t, token, f.card.id, 300)
    assert.equal(declined.status, 'declined')
    assert.equal(declined.decline_reason, 'integrator_unavailable')
    assert.equal(declined.decision.source, 'stand_in')
    assert.equal(declined.decision.stand_in_reason, 'timeout')
    assert.ok(
      declined.decision.latency_ms >= 250 && declined.decision.latency_ms < 600,
      String(declined.decision.latency_ms),
    )

    await putEndpoint(t, token, { url: receiver.url, timeout_ms: 300, stand_in: 'approve' })
    const approved = await authorize(t, token, f.card.id, 300)
    assert.equal(approved.status, 'pending')
    assert.equal(approved.held_amount, 300)
    assert.equal(approved.decision.source, 'stand_in')
    assert.equal(approved.decision.stand_in_reason, 'timeout')
    const [latest] = await attempts(t, token)
    assert.equal(latest.authorization_id, approved.id)
    assert.equal(latest.outcome, 'stand_in')
    assert.equal(latest.stand_in_reason, 'timeout')
    assert.equal(latest.response_status, null)
  })

  test('a 500 stands in with reason error, a body that is not JSON with invalid_response', async () => {
    answerWith(receiver, { approved: true }, 500)
    const failed = await authorize(t, token, f.card.id, 200)
    assert.equal(failed.decline_reason, 'integrator_unavailable')
    assert.equal(failed.decision.stand_in_reason, 'error')
    let [attempt] = await attempts(t, token)
    assert.equal(attempt.response_status, 500)
    assert.equal(attempt.stand_in_reason, 'error')

    answerWith(receiver, 'approved')
    const garbled = await authorize(t, token, f.card.id, 200)
    assert.equal(garbled.decline_reason, 'integrator_unavailable')
    assert.equal(garbled.decision.stand_in_reason, 'invalid_response')
    ;[attempt] = await attempts(t, token)
    assert.equal(attempt.response_status, 200)
    assert.equal(attempt.stand_in_reason, 'invalid_response')

    answerWith(receiver, { approved: 'yes' })
    const wrongShape = await authorize(t, token, f.card.id, 200)
    assert.equal(wrongShape.decision.stand_in_reason, 'invalid_response')
  })

  test("a decline by the service's own rules never reaches the endpoint", async () => {
    const poor = await fundedCard(t, tenant, token, 100)
    const auth = await authorize(t, token, poor.card.id, 5000)
    assert.equal(auth.decline_reason, 'insufficient_funds')
    assert.deepEqual(auth.decision, { source: 'svc', latency_ms: 0 })
    assert.equal(requestsAbout(receiver, auth.id).length, 0)
    assert.equal(receiver.received.length, 0)
    assert.equal((await attempts(t, token)).filter((a) => a.authorization_id === auth.id).length, 0)
  })

  test('the balance is checked again when the hold is written: an approval the balance no longer covers declines', async () => {
    const small = await fundedCard(t, tenant, token, 1000)
    // While the endpoint thinks, the account is debited below the amount.
    receiver.respond = async () => {
      const res = await t.api(token, 'POST', `/v1/accounts/${small.account.id}/debit`, {
        amount: 900,
      })
      assert.equal(res.statusCode, 200, res.body)
      return { status: 200, body: '{"approved":true}' }
    }
    const auth = await authorize(t, token, small.card.id, 800)
    assert.equal(auth.status, 'declined')
    assert.equal(auth.decline_reason, 'insufficient_funds')
    assert.equal(auth.decision.source, 'svc')
    assert.equal((await balances(t, token, small.account.id)).held, 0)
  })

  test('an increment the rules approve asks the endpoint again; its answer decides the increment', async () => {
    const auth = await authorize(t, token, f.card.id, 1000)
    answerWith(receiver, { approved: true, amount: 200 })
    const raised = await post(t, token, `/v1/simulate/authorizations/${auth.id}/increment`, {
      amount: 500,
    })
    const asked = requestsAbout(receiver, auth.id)
    assert.equal(asked.length, 2)
    assert.deepEqual(asked[1].body.data.request, { type: 'increment', amount: 500 })
    assert.equal(asked[1].body.data.object.amount, 1500)
    assert.equal(asked[1].body.data.object.held_amount, 1000)
    assert.equal(raised.amount, 1200)
    assert.equal(raised.held_amount, 1200)
    assert.equal(raised.decision.source, 'integrator')
    assert.equal(raised.request_history[1].type, 'increment')
    assert.equal(raised.request_history[1].decision.source, 'integrator')

    answerWith(receiver, { approved: false })
    const refused = await post(t, token, `/v1/simulate/authorizations/${auth.id}/increment`, {
      amount: 100,
    })
    assert.equal(refused.amount, 1200)
    assert.equal(refused.held_amount, 1200)
    assert.equal(refused.request_history[2].approved, false)
    assert.equal(refused.request_history[2].decline_reason, 'integrator_declined')
    const log = await attempts(t, token)
    assert.deepEqual(
      log.filter((a) => a.authorization_id === auth.id).map((a) => [a.request_type, a.outcome]),
      [
        ['increment', 'declined'],
        ['increment', 'partially_approved'],
        ['authorization', 'approved'],
      ],
    )
  })

  test('a simulator call retried with its Idempotency-Key answers the stored decision without asking again', async () => {
    const body = { card_id: f.card.id, amount: 321, currency: 'USD', merchant: { name: 'Shop' } }
    const key = { 'idempotency-key': `retry-${Date.now()}` }
    const first = await t.api(token, 'POST', '/v1/simulate/authorizations', body, key)
    assert.equal(first.statusCode, 201, first.body)
    const again = await t.api(token, 'POST', '/v1/simulate/authorizations', body, key)
    assert.equal(again.statusCode, 201, again.body)
    assert.deepEqual(again.json(), first.json())
    assert.equal(receiver.received.length, 1)
    const inc = { 'idempotency-key': `inc-${Date.now()}` }
    const raised = await t.api(
      token,
      'POST',
      `/v1/simulate/authorizations/${first.json().id}/increment`,
      { amount: 9 },
      inc,
    )
    assert.equal(raised.statusCode, 200, raised.body)
    assert.equal(raised.json().decision.source, 'integrator')
    const raisedAgain = await t.api(
      token,
      'POST',
      `/v1/simulate/authorizations/${first.json().id}/increment`,
      { amount: 9 },
      inc,
    )
    assert.deepEqual(raisedAgain.json(), raised.json())
    assert.equal(receiver.received.length, 2)
    assert.equal(
      (await attempts(t, token)).filter((a) => a.authorization_id === first.json().id).length,
      2,
    )
  })

  test('the attempt log names the API request, newest first, with cursor pagination', async () => {
    const first = await authorize(t, token, f.card.id, 10)
    const res = await t.api(token, 'POST', '/v1/simulate/authorizations', {
      card_id: f.card.id,
      amount: 11,
      currency: 'USD',
      merchant: { name: 'Shop' },
    })
    const second = res.json()
    const page = await t.api(token, 'GET', '/v1/authorization_endpoint/attempts?limit=1')
    const body = page.json()
    assert.equal(body.data[0].authorization_id, second.id)
    assert.equal(body.data[0].request_id, res.headers['svc-request-id'])
    assert.equal(body.data[0].object, 'authorization_endpoint_attempt')
    assert.equal(body.has_more, true)
    const next = (
      await t.api(
        token,
        'GET',
        `/v1/authorization_endpoint/attempts?limit=1&starting_after=${encodeURIComponent(body.next_cursor)}`,
      )
    ).json()
    assert.equal(next.data[0].authorization_id, first.id)
  })

  test("another organization's authorizations never reach this endpoint; without an endpoint the service decides alone", async () => {
    const other = await createTenant(t)
    const otherToken = await other.token()
    const g = await fundedCard(t, other, otherToken, 10_000)
    const auth = await authorize(t, otherToken, g.card.id, 500)
    assert.equal(auth.status, 'pending')
    assert.deepEqual(auth.decision, { source: 'svc', latency_ms: 0 })
    assert.equal(receiver.received.length, 0)
    assert.deepEqual(await attempts(t, otherToken), [])
  })

  test('after DELETE the service decides alone again', async () => {
    const del = await t.api(token, 'DELETE', '/v1/authorization_endpoint')
    assert.equal(del.statusCode, 200, del.body)
    try {
      const auth = await authorize(t, token, f.card.id, 50)
      assert.deepEqual(auth.decision, { source: 'svc', latency_ms: 0 })
      assert.equal(receiver.received.length, 0)
    } finally {
      await putEndpoint(t, token, { url: receiver.url, timeout_ms: 300, stand_in: 'decline' })
    }
  })
})
