/**
 * Sandbox clocks, the traveller page (docs/sandbox-clocks.md): the hosted page counts an eSIM's days left on the
 * eSIM's clock (its cardholder's), and an advance of the clock moves the count; an eSIM without a clock counts on
 * wall time.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { TestApp } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { post } from '../authorizations/support.js'
import { completedOrder, newCardholder, packageFor } from '../esim/support.js'
import { advance, clockAt } from './support.js'

let t: TestApp
let token: string
withTenant((fixture) => ({ t, token } = fixture))

/** A clock far behind wall time: on wall time its eSIM's validity has long ended. */
const F = '2026-02-01T00:00:00.000Z'
let counter = 0

async function holderOn(clockId: string): Promise<any> {
  const res = await t.api(token, 'POST', '/v1/cardholders', {
    type: 'individual',
    first_name: 'Tara',
    last_name: 'Traveller',
    email: `h5-clock.${process.pid}.${++counter}.${Date.now()}@example.com`,
    address: { line1: '1 Rue de Rivoli', city: 'Paris', postal_code: '75001', country: 'FRA' },
    clock_id: clockId,
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** The traveller page of the cardholder's link: the "N days left" it shows. */
async function daysLeft(cardholderId: string): Promise<string[]> {
  const link = await post(t, token, '/v1/esim/h5_links', { cardholder_id: cardholderId }, 201)
  const page = await t.app.inject({ method: 'GET', url: new URL(link.url).pathname })
  assert.equal(page.statusCode, 200, page.body)
  return [...page.body.matchAll(/(\d+) days? left/g)].map((m) => m[1]!)
}

test("an eSIM under a clock counts its days left on the clock's time", async () => {
  await post(t, token, '/v1/simulate/esim/provisioning', { latency_ms: 0 }, 200)
  const c = await clockAt(t, token, F)
  const holder = await holderOn(c.id)
  const pkg = await packageFor(t, token, 'country=FRA&region=local&status=on_sale')
  assert.ok(pkg.validity_days > 2, 'a package valid for days')
  await completedOrder(t, token, { package_id: pkg.id, cardholder_id: holder.id })
  assert.deepEqual(await daysLeft(holder.id), [String(pkg.validity_days)])
  await advance(t, token, c.id, { by: 'P2D' })
  assert.deepEqual(await daysLeft(holder.id), [String(pkg.validity_days - 2)])
})

test('an eSIM without a clock counts its days left on wall time', async () => {
  await post(t, token, '/v1/simulate/esim/provisioning', { latency_ms: 0 }, 200)
  const holder = await newCardholder(t, token)
  const pkg = await packageFor(t, token, 'country=FRA&region=local&status=on_sale')
  await completedOrder(t, token, { package_id: pkg.id, cardholder_id: holder.id })
  assert.deepEqual(await daysLeft(holder.id), [String(pkg.validity_days)])
})
