/**
 * Sandbox clocks, the cardholder side (docs/sandbox-clocks.md): a cardholder on a clock, its KYC attestations and its
 * cards' 3-D Secure challenges live on the clock's time, expire when the clock is advanced past them (in time order),
 * and their events carry `clock_id`; cardholders without a clock, and another organization's, are untouched.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { cardBody, issuedCard, makeAccount, makeCardholder, runJobs } from '../cards/support.js'
import { post } from '../authorizations/support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture), {
  app: { env: { SVC_RELEASES: 'three_d_secure' } },
})

const MINUTE = 60_000
const DAY = 24 * 60 * MINUTE
/** A clock far from wall time: what an object reads is visibly the clock's. */
const F = '2026-01-01T00:00:00.000Z'
const at = (ms: number) => new Date(new Date(F).getTime() + ms).toISOString()
let counter = 0

async function clock(frozen = F): Promise<any> {
  return post(t, token, '/v1/simulate/clocks', { frozen_time: frozen }, 201)
}

async function advance(clockId: string, by: string, tok = token): Promise<any> {
  return post(t, tok, `/v1/simulate/clocks/${clockId}/advance`, { by }, 200)
}

/** A cardholder on `clockId` (with address and identity document). */
async function holderOn(clockId: string): Promise<any> {
  const res = await t.api(token, 'POST', '/v1/cardholders', {
    type: 'individual',
    first_name: 'Clara',
    last_name: 'Clock',
    email: `kyc-clock.${process.pid}.${++counter}.${Date.now()}@example.com`,
    address: { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'USA' },
    identity_document: { type: 'passport', number: `K${counter}000333` },
    clock_id: clockId,
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

async function attestation(
  holderId: string,
  verifiedAt: string,
  expiresAt?: string,
  tok = token,
): Promise<any> {
  const res = await t.api(tok, 'POST', `/v1/cardholders/${holderId}/kyc`, {
    status: 'approved',
    provider: 'acme-kyc',
    verified_at: verifiedAt,
    ...(expiresAt ? { expires_at: expiresAt } : {}),
    identity: { legal_name: 'Clara Clock', nationality: 'GBR' },
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** The stored events of these types about these objects, oldest first: [type, object id, clock_id]. */
async function eventsAbout(
  ids: readonly string[],
  types: readonly string[],
): Promise<[string, string, string | null][]> {
  const rows = await t.deps.db
    .selectFrom('events')
    .select(['type', 'data', 'clock_id'])
    .where('type', 'in', [...types])
    .orderBy('id')
    .execute()
  return rows
    .map((r) => {
      const data = typeof r.data === 'string' ? JSON.parse(r.data) : (r.data as any)
      return [r.type, data.object.id as string, r.clock_id] as [string, string, string | null]
    })
    .filter(([, id]) => ids.includes(id))
}

test('a cardholder and its attestation on a clock: created on the clock time, events with clock_id', async () => {
  const c = await clock()
  const holder = await holderOn(c.id)
  assert.deepEqual([holder.created_at, holder.updated_at, holder.clock_id], [F, F, c.id])
  // verified_at is judged against the clock's time: wall now is far in this clock's future.
  const future = await t.api(token, 'POST', `/v1/cardholders/${holder.id}/kyc`, {
    status: 'approved',
    provider: 'acme-kyc',
    verified_at: t.clock.now().toISOString(),
  })
  assert.equal(future.statusCode, 400, future.body)
  assert.equal(future.json().error.param, 'verified_at')
  const kyc = await attestation(holder.id, at(-DAY), at(30 * DAY))
  assert.equal(kyc.created_at, F)
  await advance(c.id, 'PT1H')
  const patched = await t.api(token, 'PATCH', `/v1/cardholders/${holder.id}`, { reference: 'r1' })
  assert.equal(patched.statusCode, 200, patched.body)
  assert.deepEqual([patched.json().created_at, patched.json().updated_at], [F, at(60 * MINUTE)])
  assert.deepEqual(
    await eventsAbout(
      [holder.id],
      ['cardholder.created', 'cardholder.kyc_updated', 'cardholder.updated'],
    ),
    [
      ['cardholder.created', holder.id, c.id],
      ['cardholder.kyc_updated', holder.id, c.id],
      ['cardholder.updated', holder.id, c.id],
    ],
  )
  // The event's own time stays wall time; the object inside carries the clock's.
  const event = (await t.api(token, 'GET', '/v1/events?type=cardholder.updated')).json().data[0]
  assert.equal(event.clock_id, c.id)
  assert.equal(event.data.object.updated_at, at(60 * MINUTE))
  assert.notEqual(event.created_at, at(60 * MINUTE))
})

test('KYC expiry: the advance expires attestations under the clock in time order; none without a clock, none of another organization', async () => {
  const c = await clock()
  const late = await holderOn(c.id)
  const early = await holderOn(c.id)
  await attestation(late.id, at(-DAY), at(2 * DAY))
  await attestation(early.id, at(-DAY), at(1 * DAY))
  // Without a clock: an attestation due on wall time tomorrow; another organization's likewise.
  const wallHolder = await makeCardholder(t, token, { kyc: 'none' })
  const wallNow = t.clock.now().getTime()
  await attestation(
    wallHolder.id,
    new Date(wallNow - DAY).toISOString(),
    new Date(wallNow + DAY).toISOString(),
  )
  const other = await createTenant(t)
  const otherToken = await other.token()
  const otherHolder = await makeCardholder(t, otherToken, { kyc: 'none' })
  await attestation(
    otherHolder.id,
    new Date(wallNow - DAY).toISOString(),
    new Date(wallNow + DAY).toISOString(),
    otherToken,
  )

  // Both expiries are long past on wall time: the runners leave them to the clock.
  await runJobs(t)
  const status = async (id: string, tok = token) =>
    (await t.api(tok, 'GET', `/v1/cardholders/${id}`)).json().kyc_status
  assert.deepEqual([await status(late.id), await status(early.id)], ['approved', 'approved'])
  const expiries = () =>
    eventsAbout([late.id, early.id, wallHolder.id, otherHolder.id], ['cardholder.kyc_updated'])
  const before = (await expiries()).length

  await advance(c.id, 'PT36H')
  assert.deepEqual([await status(late.id), await status(early.id)], ['approved', 'expired'])
  await advance(c.id, 'P3D')
  assert.deepEqual([await status(late.id), await status(early.id)], ['expired', 'expired'])
  assert.deepEqual((await expiries()).slice(before), [
    ['cardholder.kyc_updated', early.id, c.id],
    ['cardholder.kyc_updated', late.id, c.id],
  ])
  const listed = (await t.api(token, 'GET', '/v1/events?type=cardholder.kyc_updated')).json()
  const announced = listed.data.find((e: any) => e.data.object.id === late.id)
  assert.deepEqual([announced.clock_id, announced.data.object.kyc_status], [c.id, 'expired'])
  // The cardholders without a clock, and the other organization's, are as they were.
  assert.equal(await status(wallHolder.id), 'approved')
  assert.equal(await status(otherHolder.id, otherToken), 'approved')
  assert.equal((await expiries()).length, before + 2)
})

/** An active card of a cardholder on `clockId` (its KYC verified before the clock's time). */
async function cardOn(clockId: string, verifiedAt = at(-DAY)): Promise<any> {
  const holder = await holderOn(clockId)
  await attestation(holder.id, verifiedAt)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  return issuedCard(t, token, cardBody(holder.id, account.id))
}

async function challenge(cardId: string, tok = token): Promise<any> {
  return post(
    t,
    tok,
    '/v1/simulate/authentications',
    { card_id: cardId, amount: 2500, currency: 'usd', merchant: { name: 'Clock Shop' } },
    201,
  )
}

const readAuth = async (id: string, tok = token) =>
  (await t.api(tok, 'GET', `/v1/authentications/${id}`)).json()

test('3-D Secure expiry: challenges under the clock are made on its time and expire in its advance, in time order; others are untouched', async () => {
  const c = await clock()
  const card = await cardOn(c.id)
  const first = await challenge(card.id)
  assert.deepEqual(
    [first.created_at, first.expires_at, first.status],
    [F, at(5 * MINUTE), 'pending'],
  )
  await advance(c.id, 'PT2M')
  const second = await challenge(card.id)
  assert.deepEqual([second.created_at, second.expires_at], [at(2 * MINUTE), at(7 * MINUTE)])
  // A card without a clock, and another organization's: pending challenges of wall time.
  const wallHolder = await makeCardholder(t, token)
  const wallAccount = await makeAccount(t, token, tenant.programs.full.id, wallHolder.id)
  const wallCard = await issuedCard(t, token, cardBody(wallHolder.id, wallAccount.id))
  const wall = await challenge(wallCard.id)
  const other = await createTenant(t)
  const otherToken = await other.token()
  const otherHolder = await makeCardholder(t, otherToken)
  const otherAccount = await makeAccount(t, otherToken, other.programs.full.id, otherHolder.id)
  const otherCard = await issuedCard(t, otherToken, cardBody(otherHolder.id, otherAccount.id))
  const elsewhere = await challenge(otherCard.id, otherToken)

  // Five minutes after the clock's time is long past on wall time: reads, lists and runners leave it pending.
  await runJobs(t)
  assert.equal((await readAuth(first.id)).status, 'pending')
  const list = (await t.api(token, 'GET', `/v1/authentications?card_id=${card.id}`)).json()
  assert.deepEqual(
    list.data.map((a: any) => a.status),
    ['pending', 'pending'],
  )

  await advance(c.id, 'PT4M')
  assert.deepEqual(
    [(await readAuth(first.id)).status, (await readAuth(second.id)).status],
    ['expired', 'pending'],
  )
  await advance(c.id, 'PT10M')
  const expired = await readAuth(second.id)
  assert.deepEqual(
    [expired.status, expired.decided_at, expired.updated_at],
    ['expired', at(7 * MINUTE), at(7 * MINUTE)],
  )
  assert.deepEqual(
    await eventsAbout(
      [first.id, second.id, wall.id, elsewhere.id],
      ['authentication.created', 'authentication.updated'],
    ),
    [
      ['authentication.created', first.id, c.id],
      ['authentication.created', second.id, c.id],
      ['authentication.created', wall.id, null],
      ['authentication.created', elsewhere.id, null],
      ['authentication.updated', first.id, c.id],
      ['authentication.updated', second.id, c.id],
    ],
  )
  assert.equal((await readAuth(wall.id)).status, 'pending')
  assert.equal((await readAuth(elsewhere.id, otherToken)).status, 'pending')
})

test('3-D Secure under a clock: an answer is judged and recorded on the clock time', async () => {
  const c = await clock()
  const card = await cardOn(c.id)
  const auth = await challenge(card.id)
  await advance(c.id, 'PT3M')
  const approved = await post(t, token, `/v1/authentications/${auth.id}/approve`, {}, 200)
  assert.deepEqual(
    [approved.status, approved.decided_at, approved.updated_at],
    ['approved', at(3 * MINUTE), at(3 * MINUTE)],
  )
  const [, , clockId] = (await eventsAbout([auth.id], ['authentication.updated']))[0]
  assert.equal(clockId, c.id)
})
