/**
 * An organization's authorization endpoint asked about a card under a sandbox clock (docs/sandbox-clocks.md): what
 * it is sent is the authorization on the clock's time, while the request itself (its signature's timestamp, the
 * attempt log) is the service's, so the integrator's signature check and its replay window still hold.
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { verifyWebhook } from '../../src/lib/webhook-signature.js'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import {
  answerWith,
  attempts,
  putEndpoint,
  requestsAbout,
  startReceiver,
  type Receiver,
} from '../authorizations/integrator-support.js'
import { authorize, post } from '../authorizations/support.js'
import { clockAt, fundedOnClock } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
let receiver: Receiver
let secret: string

before(async () => {
  t = await startTestApp()
  tenant = await createTenant(t)
  token = await tenant.token()
  receiver = await startReceiver('/authorize')
  secret = (
    await putEndpoint(t, token, { url: receiver.url, timeout_ms: 2000, stand_in: 'decline' })
  ).secret
})
after(async () => {
  await receiver.close()
  await t.close()
})

/** Two years ahead of the service: a signature stamped with the clock's time would be refused. */
const T0 = '2029-03-10T09:30:00.000Z'

test('a card on a clock: the endpoint is sent clock times, signed on the service time, for an authorization and an increment', async () => {
  const clock = await clockAt(t, token, T0)
  const f = await fundedOnClock(t, tenant, token, clock.id, 100_000)
  answerWith(receiver, { approved: true })

  const auth = await authorize(t, token, f.card.id, 1500)
  assert.equal(auth.approved, true)
  assert.equal(auth.decision.source, 'integrator')
  assert.equal(auth.created_at, T0)
  const raised = await post(t, token, `/v1/simulate/authorizations/${auth.id}/increment`, {
    amount: 500,
  })
  assert.equal(raised.held_amount, 2000)
  assert.equal(raised.request_history[1].decision.source, 'integrator')

  const asked = requestsAbout(receiver, auth.id)
  assert.deepEqual(
    asked.map((r) => r.body.data.request.type),
    ['authorization', 'increment'],
  )
  const serviceNow = Math.floor(t.clock.now().getTime() / 1000)
  for (const r of asked) {
    assert.equal(r.body.data.object.created_at, T0)
    const header = r.headers['svc-signature'] as string
    assert.equal(verifyWebhook(r.raw, header, secret, 300, serviceNow), true, header)
    assert.ok(Math.abs(Date.parse(r.body.created_at) / 1000 - serviceNow) < 300)
  }
  const logged = (await attempts(t, token)).filter((a) => a.authorization_id === auth.id)
  assert.equal(logged.length, 2)
  for (const a of logged)
    assert.ok(Math.abs(Date.parse(a.created_at) - t.clock.now().getTime()) < 300_000, a.created_at)
})
