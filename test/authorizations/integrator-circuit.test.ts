import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import {
  answerWith,
  attempts,
  putEndpoint,
  startReceiver,
  type Receiver,
} from './integrator-support.js'
import { authorize, fundedCard, type Funded } from './support.js'

let t: TestApp
let tenant: TestClient
let receiver: Receiver
let f: Funded

before(async () => {
  t = await startTestApp()
  tenant = await createTenant(t)
  const token = await tenant.token()
  receiver = await startReceiver('/authorize')
  f = await fundedCard(t, tenant, token, 1_000_000)
  await putEndpoint(t, token, { url: receiver.url, timeout_ms: 500, stand_in: 'approve' })
})
after(async () => {
  await receiver.close()
  await t.close()
})

test('after 5 consecutive stand-ins the endpoint is skipped for 30 s (stand-in at once), then asked again', async () => {
  const token = await tenant.token()
  answerWith(receiver, { approved: true }, 503)
  for (let i = 0; i < 5; i++) {
    const auth = await authorize(t, token, f.card.id, 10)
    assert.equal(auth.decision.source, 'stand_in')
    assert.equal(auth.decision.stand_in_reason, 'error')
  }
  assert.equal(receiver.received.length, 5)
  assert.equal(
    (await t.api(token, 'GET', '/v1/authorization_endpoint')).json().status,
    'circuit_open',
  )

  // Open: nothing is sent, the stand-in (approve) answers at once.
  const skipped = await authorize(t, token, f.card.id, 10)
  assert.equal(receiver.received.length, 5)
  assert.equal(skipped.status, 'pending')
  assert.deepEqual(skipped.decision, {
    source: 'stand_in',
    latency_ms: 0,
    stand_in_reason: 'error',
  })
  const [logged] = await attempts(t, token)
  assert.equal(logged.authorization_id, skipped.id)
  assert.match(logged.error, /^circuit open/)

  // The test clock runs with real time besides what the test adds: 20 s leaves room for a slow machine.
  t.clock.advance(20_000)
  await authorize(t, token, f.card.id, 10)
  assert.equal(receiver.received.length, 5, 'still open before 30 s')

  // 30 s later it is tried again; a good answer closes it.
  t.clock.advance(10_001)
  answerWith(receiver, { approved: true })
  const retried = await authorize(t, token, f.card.id, 10)
  assert.equal(receiver.received.length, 6)
  assert.equal(retried.decision.source, 'integrator')
  assert.equal(
    (await t.api(await tenant.token(), 'GET', '/v1/authorization_endpoint')).json().status,
    'enabled',
  )

  // Closed again: it takes 5 new stand-ins in a row to open it; an answer in between starts the count again.
  answerWith(receiver, { approved: true }, 500)
  for (let i = 0; i < 4; i++) await authorize(t, token, f.card.id, 10)
  answerWith(receiver, { approved: false })
  assert.equal((await authorize(t, token, f.card.id, 10)).decline_reason, 'integrator_declined')
  answerWith(receiver, { approved: true }, 500)
  for (let i = 0; i < 4; i++) await authorize(t, token, f.card.id, 10)
  assert.equal(receiver.received.length, 6 + 4 + 1 + 4)
  assert.equal(
    (await t.api(await tenant.token(), 'GET', '/v1/authorization_endpoint')).json().status,
    'enabled',
  )
})

test('a failed try after the pause opens the circuit again at once', async () => {
  const token = await tenant.token()
  answerWith(receiver, { approved: true }, 500)
  await authorize(t, token, f.card.id, 10) // the 5th in a row (4 from the test before)
  const sent = receiver.received.length
  await authorize(t, token, f.card.id, 10)
  assert.equal(receiver.received.length, sent, 'open')
  t.clock.advance(30_001)
  await authorize(t, token, f.card.id, 10)
  assert.equal(receiver.received.length, sent + 1, 'tried once after the pause')
  await authorize(t, token, f.card.id, 10)
  assert.equal(receiver.received.length, sent + 1, 'open again after the failed try')
})
