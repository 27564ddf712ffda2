import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { enqueue } from '../../src/jobs/queue.js'
import { ensureSchedules } from '../../src/jobs/schedules.js'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { ADDRESS, attest, cardBody, issuedCard, makeAccount } from '../cards/support.js'
import {
  eventsFor,
  expectApproved,
  expectError,
  fundedCard,
  MERCHANT,
  post,
  runJobs,
} from '../authorizations/support.js'
import { completedOrder, packageFor } from '../esim/support.js'

let t: TestApp
let tenant: TestClient
let token: string
let counter = 0

before(async () => {
  t = await startTestApp({ env: { SVC_RELEASES: 'three_d_secure' } })
  tenant = await createTenant(t)
  token = await tenant.token()
  await post(t, token, '/v1/simulate/esim/provisioning', { latency_ms: 0 })
})
after(async () => {
  await t.close()
})

async function clock(tok = token): Promise<any> {
  return post(t, tok, '/v1/simulate/clocks', {}, 201)
}

/**
 * A cardholder on `clockId` with one of everything under it: KYC, a funded account, a card with a pending
 * authorization, a captured one (a transaction) disputed, a 3-D Secure challenge, an eSIM and its order.
 */
async function everythingOnClock(clockId: string | null, tok = token, client = tenant) {
  const res = await t.api(tok, 'POST', '/v1/cardholders', {
    type: 'individual',
    first_name: 'Della',
    last_name: 'Delete',
    email: `delete.${process.pid}.${++counter}.${Date.now()}@example.com`,
    address: ADDRESS,
    identity_document: { type: 'passport', number: `D${counter}000333` },
    ...(clockId ? { clock_id: clockId } : {}),
  })
  assert.equal(res.statusCode, 201, res.body)
  const holder = res.json()
  await attest(t, tok, holder.id, 'approved', true)
  const account = await makeAccount(t, tok, client.programs.full.id, holder.id)
  await post(t, tok, `/v1/accounts/${account.id}/credit`, { amount: 10_000 }, 200)
  const card = await issuedCard(t, tok, cardBody(holder.id, account.id))
  const pending = await expectApproved(t, tok, card.id, 700)
  const captured = await expectApproved(t, tok, card.id, 900)
  const txn = await post(t, tok, `/v1/simulate/authorizations/${captured.id}/capture`, {}, 201)
  await post(t, tok, `/v1/simulate/transactions/${txn.id}/settle`)
  const dispute = await post(
    t,
    tok,
    '/v1/disputes',
    { transaction_id: txn.id, reason: 'not_received', amount: 300, evidence: {} },
    201,
  )
  const authentication = await post(
    t,
    tok,
    '/v1/simulate/authentications',
    { card_id: card.id, amount: 4999, currency: 'usd', merchant: MERCHANT },
    201,
  )
  const pkg = await packageFor(t, tok)
  const order = await completedOrder(t, tok, { package_id: pkg.id, cardholder_id: holder.id })
  return { holder, account, card, pending, captured, txn, dispute, authentication, order }
}

type Objects = Awaited<ReturnType<typeof everythingOnClock>>

/** Each object's URL and the code it answers once gone. */
function urlsOf(o: Objects): [string, string][] {
  return [
    [`/v1/cardholders/${o.holder.id}`, 'cardholder_not_found'],
    [`/v1/cardholders/${o.holder.id}/kyc`, 'cardholder_not_found'],
    [`/v1/accounts/${o.account.id}`, 'account_not_found'],
    [`/v1/accounts/${o.account.id}/entries`, 'account_not_found'],
    [`/v1/cards/${o.card.id}`, 'card_not_found'],
    [`/v1/authorizations/${o.pending.id}`, 'authorization_not_found'],
    [`/v1/authorizations/${o.captured.id}`, 'authorization_not_found'],
    [`/v1/transactions/${o.txn.id}`, 'transaction_not_found'],
    [`/v1/disputes/${o.dispute.id}`, 'dispute_not_found'],
    [`/v1/authentications/${o.authentication.id}`, 'authentication_not_found'],
    [`/v1/esim/orders/${o.order.id}`, 'esim_order_not_found'],
    [`/v1/esim/esims/${o.order.esim_id}`, 'esim_not_found'],
  ]
}

async function expectAllThere(tok: string, o: Objects) {
  for (const [url] of urlsOf(o)) {
    const res = await t.api(tok, 'GET', url)
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`)
  }
}

async function rowsLeft(o: Objects): Promise<Record<string, number>> {
  const db = t.deps.db
  const count = async (q: { executeTakeFirstOrThrow(): Promise<{ n: unknown }> }) =>
    Number((await q.executeTakeFirstOrThrow()).n)
  return {
    kyc_attestations: await count(
      db
        .selectFrom('kyc_attestations')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('cardholder_id', '=', o.holder.id),
    ),
    ledger_entries: await count(
      db
        .selectFrom('ledger_entries')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('account_id', '=', o.account.id),
    ),
    holds: await count(
      db
        .selectFrom('holds')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('account_id', '=', o.account.id),
    ),
    jobs_on_clock: await count(
      db
        .selectFrom('jobs')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('clock_id', '=', o.holder.clock_id ?? '')
        .where('state', '=', 'on_clock'),
    ),
  }
}

test("deleting a clock deletes its objects, each answering its own 404; events stay; other cardholders' and organizations' objects are untouched", async () => {
  const c = await clock()
  const mine = await everythingOnClock(c.id)
  const wall = await everythingOnClock(null)
  const other = await createTenant(t)
  const otherToken = await other.token()
  await post(t, otherToken, '/v1/simulate/esim/provisioning', { latency_ms: 0 })
  const theirClock = await clock(otherToken)
  const theirs = await everythingOnClock(theirClock.id, otherToken, other)
  await expectAllThere(token, mine)
  // A job waits on the clock (the card's expiry, once that follows the clock): it goes with the clock.
  await enqueue(t.deps.db, {
    type: 'card.expire',
    payload: { card_id: mine.card.id },
    runAt: new Date(t.clock.now().getTime() + 86_400_000),
    clockId: c.id,
    organizationId: tenant.organizationId,
    environment: 'sandbox',
  })
  const eventsBefore = (await eventsFor(t, mine.pending.id)).length
  assert.ok(eventsBefore > 0)

  const res = await t.api(token, 'DELETE', `/v1/simulate/clocks/${c.id}`)
  assert.equal(res.statusCode, 200, res.body)
  assert.deepEqual(res.json(), { id: c.id, object: 'sandbox_clock', deleted: true })

  for (const [url, code] of urlsOf(mine)) expectError(await t.api(token, 'GET', url), 404, code)
  assert.deepEqual(await rowsLeft(mine), {
    kyc_attestations: 0,
    ledger_entries: 0,
    holds: 0,
    jobs_on_clock: 0,
  })
  const list = (await t.api(token, 'GET', '/v1/cardholders?limit=100')).json()
  assert.ok(!list.data.some((h: any) => h.id === mine.holder.id))
  // The log stays: the events already emitted, and the clock's own deletion.
  assert.equal((await eventsFor(t, mine.pending.id)).length, eventsBefore)
  assert.equal((await eventsFor(t, c.id, 'sandbox_clock.deleted')).length, 1)
  const row = await t.deps.db
    .selectFrom('sandbox_clocks')
    .select(['deleted_at', 'objects_deleted_at'])
    .where('id', '=', c.id)
    .executeTakeFirstOrThrow()
  assert.ok(row.deleted_at && row.objects_deleted_at)

  await expectAllThere(token, wall)
  await expectAllThere(otherToken, theirs)
  assert.equal((await rowsLeft(wall)).ledger_entries > 0, true)
  expectError(
    await t.api(token, 'DELETE', `/v1/simulate/clocks/${c.id}`),
    404,
    'sandbox_clock_not_found',
  )
})

test("another organization's clock: 404 sandbox_clock_not_found, nothing deleted", async () => {
  const other = await createTenant(t)
  const otherToken = await other.token()
  const theirClock = await clock(otherToken)
  expectError(
    await t.api(token, 'DELETE', `/v1/simulate/clocks/${theirClock.id}`),
    404,
    'sandbox_clock_not_found',
  )
  expectError(
    await t.api(token, 'POST', `/v1/simulate/clocks/${theirClock.id}/advance`, { by: 'P1D' }),
    404,
    'sandbox_clock_not_found',
  )
  const still = await t.api(otherToken, 'GET', `/v1/simulate/clocks/${theirClock.id}`)
  assert.equal(still.statusCode, 200)
})

test('an interrupted deletion (clock marked deleted, objects left) is finished by the worker', async () => {
  const c = await clock()
  const mine = await everythingOnClock(c.id)
  const wall = await fundedCard(t, tenant, token, 2000)
  // What the deletion does first, alone: the clock is deleted, its objects are not yet.
  await t.deps.db
    .updateTable('sandbox_clocks')
    .set({ deleted_at: t.clock.now(), updated_at: t.clock.now() })
    .where('id', '=', c.id)
    .execute()
  expectError(
    await t.api(token, 'GET', `/v1/simulate/clocks/${c.id}`),
    404,
    'sandbox_clock_not_found',
  )
  assert.equal((await t.api(token, 'GET', `/v1/cards/${mine.card.id}`)).statusCode, 200)
  await ensureSchedules(t.deps, t.jobs)
  t.clock.advance(2 * 60_000)
  await runJobs(t)
  token = await tenant.token()
  for (const [url, code] of urlsOf(mine)) expectError(await t.api(token, 'GET', url), 404, code)
  assert.equal((await t.api(token, 'GET', `/v1/cards/${wall.card.id}`)).statusCode, 200)
})
