import { after, before, beforeEach, test } from 'node:test'
import assert from 'node:assert/strict'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import {
  cardBody,
  eventsFor,
  expectError,
  issuedCard,
  makeAccount,
  makeCardholder,
  runJobs,
} from '../cards/support.js'

// A deployment with the 3-D Secure release: the authentications scopes are issued here.
let t: TestApp
let tenant: TestClient
let token: string
const FIVE_MINUTES = 5 * 60 * 1000
const MERCHANT = { name: 'Corner Books', mcc: '5942', city: 'Springfield', country: 'usa' }

before(async () => {
  t = await startTestApp({ env: { SVC_RELEASES: 'three_d_secure' } })
  tenant = await createTenant(t)
})
// Tests move the clock past the 15-minute token lifetime; each starts with a fresh token.
beforeEach(async () => {
  token = await tenant.token()
})
after(async () => {
  await t.close()
})

async function activeCard(program: 'full' | 'basic' = 'full'): Promise<any> {
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs[program].id, holder.id)
  return issuedCard(t, token, cardBody(holder.id, account.id))
}

const challenge = (body: Record<string, unknown>, tok = token) =>
  t.api(tok, 'POST', '/v1/simulate/authentications', body)
const answer = (id: string, op: 'approve' | 'decline', tok = token) =>
  t.api(tok, 'POST', `/v1/authentications/${id}/${op}`)
const read = (id: string, tok = token) => t.api(tok, 'GET', `/v1/authentications/${id}`)

async function newChallenge(cardId: string): Promise<any> {
  const res = await challenge({
    card_id: cardId,
    amount: 4999,
    currency: 'usd',
    merchant: MERCHANT,
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

test('the simulator starts a pending out-of-band challenge that expires five minutes later', async () => {
  const card = await activeCard()
  const auth = await newChallenge(card.id)
  assert.match(auth.id, /^tdsa_[0-9A-Z]{26}$/)
  assert.equal(auth.object, 'authentication')
  assert.equal(auth.card_id, card.id)
  assert.equal(auth.amount, 4999)
  assert.equal(auth.currency, 'USD')
  assert.deepEqual(auth.merchant, {
    name: 'Corner Books',
    mcc: '5942',
    city: 'Springfield',
    country: 'USA',
  })
  assert.equal(auth.challenge_method, 'out_of_band')
  assert.equal(auth.status, 'pending')
  assert.equal(auth.decided_at, null)
  assert.equal(
    new Date(auth.expires_at).getTime() - new Date(auth.created_at).getTime(),
    FIVE_MINUTES,
  )
  assert.deepEqual((await read(auth.id)).json(), auth)
  assert.deepEqual(
    (await eventsFor(t, auth.id)).map((e) => [e.type, e.object.status]),
    [['authentication.created', 'pending']],
  )
})

test('approve and decline answer a pending challenge once; a second answer is 422 authentication_invalid_state', async () => {
  const card = await activeCard()
  const a = await newChallenge(card.id)
  const approved = await answer(a.id, 'approve')
  assert.equal(approved.statusCode, 200, approved.body)
  assert.equal(approved.json().status, 'approved')
  assert.ok(approved.json().decided_at)
  expectError(await answer(a.id, 'approve'), 422, 'authentication_invalid_state')
  expectError(await answer(a.id, 'decline'), 422, 'authentication_invalid_state')

  const d = await newChallenge(card.id)
  const declined = await answer(d.id, 'decline')
  assert.equal(declined.statusCode, 200, declined.body)
  assert.equal(declined.json().status, 'declined')
  expectError(await answer(d.id, 'approve'), 422, 'authentication_invalid_state')
  assert.deepEqual(
    (await eventsFor(t, d.id)).map((e) => [e.type, e.object.status]),
    [
      ['authentication.created', 'pending'],
      ['authentication.updated', 'declined'],
    ],
  )
  expectError(
    await t.api(token, 'POST', `/v1/authentications/${d.id}/approve`, { note: 'x' }),
    400,
    'unknown_parameter',
    'note',
  )
})

test('a challenge on a card closed since cannot be approved (card_closed) but can still be declined', async () => {
  const card = await activeCard()
  const a = await newChallenge(card.id)
  const b = await newChallenge(card.id)
  const closed = await t.api(token, 'POST', `/v1/cards/${card.id}/close`)
  assert.equal(closed.statusCode, 200, closed.body)
  expectError(await answer(a.id, 'approve'), 422, 'card_closed')
  assert.equal((await read(a.id)).json().status, 'pending')
  const declined = await answer(b.id, 'decline')
  assert.equal(declined.statusCode, 200, declined.body)
  assert.equal(declined.json().status, 'declined')
})

test('a read right after the five minutes shows expired, and approving it is 422 authentication_invalid_state', async () => {
  const card = await activeCard()
  const auth = await newChallenge(card.id)
  // The test clock also runs in real time: stop two seconds short, then cross the line.
  t.clock.advance(FIVE_MINUTES - 2000)
  assert.equal((await read(auth.id)).json().status, 'pending')
  t.clock.advance(2000)
  const expired = (await read(auth.id)).json()
  assert.equal(expired.status, 'expired')
  assert.equal(expired.decided_at, auth.expires_at)
  const refused = expectError(await answer(auth.id, 'approve'), 422, 'authentication_invalid_state')
  assert.match(refused.message, /expired/)
  expectError(await answer(auth.id, 'decline'), 422, 'authentication_invalid_state')
  await read(auth.id)
  assert.deepEqual(
    (await eventsFor(t, auth.id, 'authentication.updated')).map((e) => e.object.status),
    ['expired'],
    'expiry is recorded once',
  )
})

test('approving at the moment the clock passes the expiry is refused and records the expiry', async () => {
  const card = await activeCard()
  const auth = await newChallenge(card.id)
  t.clock.advance(FIVE_MINUTES)
  expectError(await answer(auth.id, 'approve'), 422, 'authentication_invalid_state')
  assert.equal((await read(auth.id)).json().status, 'expired')
  assert.equal((await eventsFor(t, auth.id, 'authentication.updated')).length, 1)
})

test('the expiry job marks an unanswered challenge expired without any read', async () => {
  const card = await activeCard()
  const auth = await newChallenge(card.id)
  const answered = await newChallenge(card.id)
  await answer(answered.id, 'approve')
  await runJobs(t)
  assert.equal(await statusInDb(auth.id), 'pending', 'not due yet')
  t.clock.advance(FIVE_MINUTES)
  await runJobs(t)
  assert.equal(await statusInDb(auth.id), 'expired')
  assert.equal(await statusInDb(answered.id), 'approved', 'an answered challenge never expires')
  assert.deepEqual(
    (await eventsFor(t, auth.id, 'authentication.updated')).map((e) => e.object.status),
    ['expired'],
  )
})

async function statusInDb(id: string): Promise<string> {
  const row = await t.deps.db
    .selectFrom('authentications')
    .select('status')
    .where('id', '=', id)
    .executeTakeFirstOrThrow()
  return row.status
}

test('the list filters by card and status, and lists due challenges as expired', async () => {
  const card = await activeCard()
  const old = await newChallenge(card.id)
  t.clock.advance(FIVE_MINUTES)
  const fresh = await newChallenge(card.id)
  const all = (await t.api(token, 'GET', `/v1/authentications?card_id=${card.id}`)).json()
  assert.equal(all.object, 'list')
  assert.deepEqual(
    all.data.map((a: any) => [a.id, a.status]),
    [
      [fresh.id, 'pending'],
      [old.id, 'expired'],
    ],
  )
  assert.deepEqual(
    (await t.api(token, 'GET', `/v1/authentications?card_id=${card.id}&status=pending`))
      .json()
      .data.map((a: any) => a.id),
    [fresh.id],
  )
  assert.deepEqual(
    (await t.api(token, 'GET', `/v1/authentications?card_id=${card.id}&status=expired`))
      .json()
      .data.map((a: any) => a.id),
    [old.id],
  )
  expectError(
    await t.api(token, 'GET', '/v1/authentications?status=maybe'),
    400,
    'invalid_parameter',
    'status',
  )
})

test('only an active card is challenged; sim_basic has no 3-D Secure feed (operation_unsupported)', async () => {
  const card = await activeCard()
  await t.api(token, 'POST', `/v1/cards/${card.id}/freeze`)
  expectError(
    await challenge({ card_id: card.id, amount: 100, currency: 'USD', merchant: MERCHANT }),
    422,
    'card_invalid_state',
    'card_id',
  )
  await t.api(token, 'POST', `/v1/cards/${card.id}/close`)
  expectError(
    await challenge({ card_id: card.id, amount: 100, currency: 'USD', merchant: MERCHANT }),
    422,
    'card_closed',
    'card_id',
  )
  expectError(
    await challenge({ card_id: 'card_00000000000000000000000000', amount: 100, currency: 'USD' }),
    404,
    'card_not_found',
    'card_id',
  )
  const basic = await activeCard('basic')
  expectError(
    await challenge({ card_id: basic.id, amount: 100, currency: 'USD', merchant: MERCHANT }),
    422,
    'operation_unsupported',
  )
  expectError(
    await challenge({ card_id: basic.id, amount: 0, currency: 'USD' }),
    400,
    'invalid_parameter',
    'amount',
  )
  expectError(
    await challenge({ card_id: basic.id, currency: 'USD' }),
    400,
    'missing_parameter',
    'amount',
  )
})

test('reads need authentications:read, answers authentications:write; another organization sees authentication_not_found', async () => {
  const card = await activeCard()
  const auth = await newChallenge(card.id)
  const reader = await tenant.token('authentications:read')
  assert.equal((await read(auth.id, reader)).statusCode, 200)
  expectError(await answer(auth.id, 'approve', reader), 403, 'insufficient_scope')
  expectError(
    await challenge({ card_id: card.id, amount: 1, currency: 'USD' }, reader),
    403,
    'insufficient_scope',
  )
  const writer = await tenant.token('authentications:write')
  expectError(await read(auth.id, writer), 403, 'insufficient_scope')
  assert.equal((await answer(auth.id, 'approve', writer)).statusCode, 200)

  const stranger = await (await createTenant(t)).token()
  expectError(await read(auth.id, stranger), 404, 'authentication_not_found')
  expectError(await answer(auth.id, 'decline', stranger), 404, 'authentication_not_found')
  assert.deepEqual((await t.api(stranger, 'GET', '/v1/authentications')).json().data, [])
  expectError(await read('tdsa_00000000000000000000000000'), 404, 'authentication_not_found')
})

test('in production the authentication simulator answers the identical 404 of an unknown path', async () => {
  const live = await (await createTenant(t, { environment: 'production' })).token()
  const shape = (res: { statusCode: number; headers: Record<string, unknown>; json(): any }) => {
    const { request_id: _r, ...error } = res.json().error
    return { status: res.statusCode, type: res.headers['content-type'], error }
  }
  const body = { card_id: 'card_x', amount: 1, currency: 'USD' }
  const reference = shape(await t.api(live, 'POST', '/v1/simulate/nothing-here', body))
  assert.equal(reference.status, 404)
  assert.deepEqual(
    shape(await t.api(live, 'POST', '/v1/simulate/authentications', body)),
    reference,
  )
})
