import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { JobRunner } from '../../src/jobs/runner.js'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { approvedCardholder, expectError } from '../accounts/support.js'
import { createEndpoint, startReceiver, type Receiver } from '../webhooks/helpers.js'

// A credit or debit writes its event and queues its deliveries in the statement that moves the money;
// these tests hold that event to the same contract as every other one.
describe('events of credits and debits', () => {
  let t: TestApp
  let tenant: TestClient
  let token: string
  let runner: JobRunner
  let credited: Receiver
  let everything: Receiver
  let account: any

  before(async () => {
    t = await startTestApp()
    tenant = await createTenant(t)
    token = await tenant.token()
    runner = new JobRunner(t.deps, t.jobs)
    credited = await startReceiver()
    everything = await startReceiver()
    const cardholder = await approvedCardholder(t, token)
    const res = await t.api(token, 'POST', '/v1/accounts', {
      program_id: tenant.programs.full.id,
      cardholder_id: cardholder.id,
      currency: 'USD',
      metadata: { zeta: 'last', alpha: 'first "quoted"' },
    })
    assert.equal(res.statusCode, 201, res.body)
    account = res.json()
    await createEndpoint(t, token, credited.url, ['account.credited'])
    await createEndpoint(t, token, everything.url, ['*'])
    await runner.drain()
    credited.received.length = 0
    everything.received.length = 0
  })
  after(async () => {
    await credited.close()
    await everything.close()
    await t.close()
  })

  test('account.credited carries the account exactly as the API then reads it, and reaches the endpoints subscribed to it', async () => {
    const res = await t.api(token, 'POST', `/v1/accounts/${account.id}/credit`, {
      amount: 2500,
      client_transaction_id: 'ev-1',
    })
    assert.equal(res.statusCode, 200, res.body)
    await runner.drain()
    assert.equal(credited.received.length, 1)
    assert.equal(everything.received.length, 1)
    const delivered = credited.received[0].body
    assert.equal(delivered.type, 'account.credited')
    const read = (await t.api(token, 'GET', `/v1/accounts/${account.id}`)).json()
    assert.deepEqual(delivered.data.object, read)
    assert.deepEqual(
      Object.keys(delivered.data.object),
      Object.keys(read),
      'the same keys in the same order',
    )
    assert.deepEqual(delivered.data.object, res.json())
    assert.deepEqual((await t.api(token, 'GET', `/v1/events/${delivered.id}`)).json(), delivered)
    assert.deepEqual(everything.received[0].body, delivered)
  })

  test('account.debited goes only to the endpoint subscribed to every type', async () => {
    credited.received.length = 0
    everything.received.length = 0
    const res = await t.api(token, 'POST', `/v1/accounts/${account.id}/debit`, { amount: 500 })
    assert.equal(res.statusCode, 200, res.body)
    await runner.drain()
    assert.equal(credited.received.length, 0)
    assert.equal(everything.received.length, 1)
    assert.equal(everything.received[0].body.type, 'account.debited')
    assert.equal(everything.received[0].body.data.object.available_balance, 2000)
    assert.deepEqual(everything.received[0].body.data.object, res.json())
  })

  test('a refused adjustment and a replay write no event and queue nothing', async () => {
    credited.received.length = 0
    everything.received.length = 0
    const before = (await t.api(token, 'GET', '/v1/events?limit=100')).json().data.length
    expectError(
      await t.api(token, 'POST', `/v1/accounts/${account.id}/debit`, { amount: 1_000_000 }),
      402,
      'insufficient_funds',
    )
    const replay = await t.api(token, 'POST', `/v1/accounts/${account.id}/credit`, {
      amount: 2500,
      client_transaction_id: 'ev-1',
    })
    assert.equal(replay.headers['idempotent-replay'], 'true')
    expectError(
      await t.api(token, 'POST', `/v1/accounts/${account.id}/credit`, {
        amount: 1,
        client_transaction_id: 'ev-1',
      }),
      409,
      'adjustment_already_applied',
    )
    await runner.drain()
    assert.equal((await t.api(token, 'GET', '/v1/events?limit=100')).json().data.length, before)
    assert.deepEqual(
      [...credited.received, ...everything.received].map((r) => r.body.type),
      [],
    )
  })
})
