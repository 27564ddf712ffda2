import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { RESPONSE_READ_LIMIT } from '../../src/modules/webhooks/sender.js'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import {
  answerWith,
  attempts,
  putEndpoint,
  startReceiver,
  type Receiver,
} from '../authorizations/integrator-support.js'
import { authorize, balances, fundedCard, type Funded } from '../authorizations/support.js'

// An integrator's answer used to be cut at 1 KiB before it was parsed: a decline padded past 1 KiB was "invalid",
// and under `stand_in: approve` it became an approval with a hold. Answers are parsed up to 64 KiB; a body that
// does not arrive whole (over 64 KiB, or cut off) is never read as an approval.
describe('integrator answers of any size never turn a decline into an approval', () => {
  let t: TestApp
  let token: string
  let receiver: Receiver
  let f: Funded

  before(async () => {
    t = await startTestApp()
    const tenant = await createTenant(t)
    token = await tenant.token()
    receiver = await startReceiver('/authorize')
    f = await fundedCard(t, tenant, token, 1_000_000)
    await putEndpoint(t, token, { url: receiver.url, timeout_ms: 1000, stand_in: 'approve' })
  })
  after(async () => {
    await receiver.close()
    await t.close()
  })

  /** Authorizes `amount` and checks it was declined with nothing held. */
  async function declinedWithoutHold(amount: number): Promise<any> {
    const before = await balances(t, token, f.account.id)
    const auth = await authorize(t, token, f.card.id, amount)
    assert.equal(auth.status, 'declined', JSON.stringify(auth.decision))
    assert.equal(auth.held_amount, 0)
    assert.deepEqual(await balances(t, token, f.account.id), before)
    return auth
  }

  test('a 2 KiB decline under stand_in approve declines integrator_declined (it was approved with a hold)', async () => {
    answerWith(receiver, { approved: false, note: 'n'.repeat(2048) })
    const auth = await declinedWithoutHold(1200)
    assert.equal(auth.decline_reason, 'integrator_declined')
    assert.equal(auth.decision.source, 'integrator')
    assert.equal((await attempts(t, token))[0].outcome, 'declined')
  })

  test('a decline padded to just under 64 KiB is still read as a decline', async () => {
    const body = JSON.stringify({ approved: false, note: '' })
    answerWith(receiver, body.replace('""', `"${'n'.repeat(RESPONSE_READ_LIMIT - body.length)}"`))
    assert.equal((await declinedWithoutHold(1300)).decline_reason, 'integrator_declined')
  })

  test('an answer over 64 KiB is never an approval: declined integrator_unavailable, stand_in invalid_response', async () => {
    for (const approved of [false, true]) {
      answerWith(receiver, { approved, note: 'n'.repeat(RESPONSE_READ_LIMIT) })
      const auth = await declinedWithoutHold(1400)
      assert.equal(auth.decline_reason, 'integrator_unavailable')
      assert.deepEqual(
        { source: auth.decision.source, reason: auth.decision.stand_in_reason },
        { source: 'stand_in', reason: 'invalid_response' },
      )
      const [attempt] = await attempts(t, token)
      assert.equal(attempt.response_status, 200)
      assert.match(attempt.error, /over 64 KiB: never read as an approval/)
    }
  })

  test('an explicit decline with a non-2xx status declines integrator_declined', async () => {
    answerWith(receiver, { approved: false }, 402)
    assert.equal((await declinedWithoutHold(1500)).decline_reason, 'integrator_declined')
  })

  test('an answer whose body is cut off is never an approval', async () => {
    // Announces 1,000 bytes, sends the start of a decline, then drops the connection.
    const cutting: Server = createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' })
        res.write('{"approved":false,"note":"')
        setTimeout(() => res.socket?.destroy(), 20)
      })
    })
    await new Promise<void>((resolve) => cutting.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(cutting.address() as AddressInfo).port}/authorize`
      await putEndpoint(t, token, { url, timeout_ms: 1000, stand_in: 'approve' })
      const auth = await declinedWithoutHold(1600)
      assert.equal(auth.decline_reason, 'integrator_unavailable')
      assert.match((await attempts(t, token))[0].error, /cut off: never read as an approval/)
    } finally {
      await putEndpoint(t, token, { url: receiver.url, timeout_ms: 1000, stand_in: 'approve' })
      cutting.closeAllConnections()
      await new Promise<void>((resolve) => cutting.close(() => resolve()))
    }
  })

  test('a plain approval still approves and holds under stand_in approve', async () => {
    answerWith(receiver, { approved: true })
    const auth = await authorize(t, token, f.card.id, 1700)
    assert.equal(auth.status, 'pending')
    assert.equal(auth.held_amount, 1700)
    assert.equal(auth.decision.source, 'integrator')
  })
})
