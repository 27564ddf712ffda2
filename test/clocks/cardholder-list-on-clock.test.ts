/**
 * Sandbox clocks, the cardholder list (docs/sandbox-clocks.md): `GET /v1/cardholders?kyc_status=…` lists a cardholder
 * on a clock under the status it reads itself (its KYC expires when the clock's advance passes `expires_at`, not at
 * wall time), with and without `reference`; cardholders without a clock are filtered on wall time as before.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { TestApp } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { post } from '../authorizations/support.js'
import { advance, clockAt } from './support.js'

let t: TestApp
let token: string
withTenant((fixture) => ({ t, token } = fixture))

let counter = 0
const DAY = 24 * 3600_000
const shift = (iso: string, ms: number) => new Date(new Date(iso).getTime() + ms).toISOString()

async function holder(clockId: string | null, reference: string): Promise<any> {
  const res = await t.api(token, 'POST', '/v1/cardholders', {
    type: 'individual',
    first_name: 'Lisa',
    last_name: 'List',
    email: `list-clock.${process.pid}.${++counter}.${Date.now()}@example.com`,
    address: { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'USA' },
    identity_document: { type: 'passport', number: `L${counter}000444` },
    reference,
    ...(clockId ? { clock_id: clockId } : {}),
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

async function approve(holderId: string, verifiedAt: string, expiresAt: string): Promise<void> {
  await post(
    t,
    token,
    `/v1/cardholders/${holderId}/kyc`,
    {
      status: 'approved',
      provider: 'acme-kyc',
      verified_at: verifiedAt,
      expires_at: expiresAt,
      identity: { legal_name: 'Lisa List', nationality: 'GBR' },
    },
    201,
  )
}

/** Where the holder is listed: [in ?kyc_status=approved, in ?kyc_status=expired], without and with its reference. */
async function listed(h: any): Promise<boolean[]> {
  const out: boolean[] = []
  for (const ref of [null, h.reference]) {
    for (const status of ['approved', 'expired']) {
      const q = `kyc_status=${status}&limit=100${ref ? `&reference=${ref}` : ''}`
      const res = await t.api(token, 'GET', `/v1/cardholders?${q}`)
      assert.equal(res.statusCode, 200, res.body)
      out.push(res.json().data.some((c: any) => c.id === h.id))
    }
  }
  return out
}

async function statusOf(id: string): Promise<string> {
  return (await t.api(token, 'GET', `/v1/cardholders/${id}`)).json().kyc_status
}

test('a clock behind wall time: the cardholder is listed approved until the advance expires it', async () => {
  const T = '2026-01-01T00:00:00.000Z'
  const c = await clockAt(t, token, T)
  const h = await holder(c.id, `behind-${counter}-${Date.now()}`)
  // Expires a day on the clock, long before wall time.
  await approve(h.id, shift(T, -60_000), shift(T, DAY))
  assert.equal(await statusOf(h.id), 'approved')
  assert.deepEqual(await listed(h), [true, false, true, false])
  await advance(t, token, c.id, { by: 'P2D' })
  assert.equal(await statusOf(h.id), 'expired')
  assert.deepEqual(await listed(h), [false, true, false, true])
})

test('a clock ahead of wall time: once its advance expires the cardholder, it is listed expired', async () => {
  const T = '2029-01-01T00:00:00.000Z'
  const c = await clockAt(t, token, T)
  const h = await holder(c.id, `ahead-${counter}-${Date.now()}`)
  await approve(h.id, shift(T, -60_000), shift(T, DAY))
  assert.deepEqual(await listed(h), [true, false, true, false])
  await advance(t, token, c.id, { by: 'P2D' })
  assert.equal(await statusOf(h.id), 'expired')
  assert.deepEqual(await listed(h), [false, true, false, true])
})

test('cardholders without a clock are listed on wall time, as they read', async () => {
  const now = Date.now()
  const valid = await holder(null, `wall-valid-${counter}-${now}`)
  await approve(valid.id, new Date(now - 60_000).toISOString(), new Date(now + DAY).toISOString())
  assert.equal(await statusOf(valid.id), 'approved')
  assert.deepEqual(await listed(valid), [true, false, true, false])
  const lapsed = await holder(null, `wall-lapsed-${counter}-${now}`)
  await approve(lapsed.id, new Date(now - 3 * DAY).toISOString(), new Date(now - DAY).toISOString())
  assert.equal(await statusOf(lapsed.id), 'expired')
  assert.deepEqual(await listed(lapsed), [false, true, false, true])
})
