/**
 * Sandbox clocks, eSIM orders in flight (docs/sandbox-clocks.md): an order of a cardholder on a clock lives on the
 * clock's time from the start, also while the network has not answered: listed unsettled after a timeout with its
 * created_at and updated_at on the clock, then completed or failed by settlement at the clock's time; settlement still
 * measures the network's wall time. An order without a clock keeps wall time.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { JobRunner } from '../../src/jobs/runner.js'
import { ensureSchedules } from '../../src/jobs/schedules.js'
import type { TestApp } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { post } from '../authorizations/support.js'
import { newCardholder, packageFor, reference } from '../esim/support.js'
import { advance, clockAt, storedEvents } from './support.js'

let t: TestApp
let token: string
withTenant((fixture) => ({ t, token } = fixture))

/** A clock far behind wall time: a time on the order is visibly the clock's. */
const F = '2026-02-01T00:00:00.000Z'
const HOUR = '2026-02-01T01:00:00.000Z'
let counter = 0

async function holderOn(clockId: string): Promise<any> {
  const res = await t.api(token, 'POST', '/v1/cardholders', {
    type: 'individual',
    first_name: 'Ora',
    last_name: 'Order',
    email: `order-clock.${process.pid}.${++counter}.${Date.now()}@example.com`,
    address: { line1: '1 Rue de Rivoli', city: 'Paris', postal_code: '75001', country: 'FRA' },
    clock_id: clockId,
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** An order the network does not answer in time (502): it is listed unsettled. */
async function timedOut(cardholderId: string, settlesAs: 'completed' | 'failed'): Promise<any> {
  await post(
    t,
    token,
    '/v1/simulate/esim/provisioning',
    { next_outcome: 'timeout', settles_as: settlesAs, latency_ms: 0 },
    200,
  )
  const pkg = await packageFor(t, token, 'country=FRA&region=local&status=on_sale')
  const ref = reference()
  const res = await t.api(token, 'POST', '/v1/esim/orders', {
    package_id: pkg.id,
    reference: ref,
    cardholder_id: cardholderId,
  })
  assert.equal(res.statusCode, 502, res.body)
  const listed = (await t.api(token, 'GET', `/v1/esim/orders?reference=${ref}`)).json().data
  assert.equal(listed.length, 1)
  return listed[0]
}

/** The settlement job's next run, as a worker would (wall time moves past its interval). */
async function settlementJob(): Promise<void> {
  await ensureSchedules(t.deps, t.jobs)
  t.clock.advance(31_000)
  await new JobRunner(t.deps, t.jobs).drain()
}

test('an order under a clock that timed out is listed on the clock time and settled at the clock time', async () => {
  const c = await clockAt(t, token, F)
  const holder = await holderOn(c.id)
  const order = await timedOut(holder.id, 'completed')
  assert.deepEqual([order.status, order.created_at, order.updated_at], ['unsettled', F, F])
  const [announced] = await storedEvents(t, order.id, 'esim_order.created')
  assert.deepEqual([announced!.clock_id, announced!.object.created_at], [c.id, F])

  await advance(t, token, c.id, { by: 'PT1H' })
  // Settlement measures the network's wall time: the clock's created_at, months before it, changes nothing.
  await settlementJob()
  const settled = (await t.api(token, 'GET', `/v1/esim/orders/${order.id}`)).json()
  assert.deepEqual(
    [settled.status, settled.created_at, settled.updated_at, settled.settled_at],
    ['completed', F, HOUR, HOUR],
  )
  const [done] = await storedEvents(t, order.id, 'esim_order.settled')
  assert.deepEqual([done!.clock_id, done!.object.settled_at], [c.id, HOUR])
})

test('an order under a clock that the network failed keeps the clock time', async () => {
  const c = await clockAt(t, token, F)
  const holder = await holderOn(c.id)
  const order = await timedOut(holder.id, 'failed')
  assert.equal(order.created_at, F)
  await advance(t, token, c.id, { by: 'PT1H' })
  const failed = await post(t, token, `/v1/simulate/esim/orders/${order.id}/settle`, {}, 200)
  assert.deepEqual(
    [failed.status, failed.created_at, failed.updated_at, failed.settled_at],
    ['failed', F, HOUR, HOUR],
  )
  const [event] = await storedEvents(t, order.id, 'esim_order.failed')
  assert.equal(event!.clock_id, c.id)
})

test('an order without a clock that timed out keeps wall time, its event without clock_id', async () => {
  const holder = await newCardholder(t, token)
  const before = t.clock.now().getTime()
  const order = await timedOut(holder.id, 'completed')
  const created = new Date(order.created_at).getTime()
  assert.ok(created >= before - 1000 && created <= t.clock.now().getTime() + 1000, order.created_at)
  const [announced] = await storedEvents(t, order.id, 'esim_order.created')
  assert.equal(announced!.clock_id, null)
  await settlementJob()
  const settled = (await t.api(token, 'GET', `/v1/esim/orders/${order.id}`)).json()
  assert.deepEqual([settled.status, settled.created_at], ['completed', order.created_at])
})
