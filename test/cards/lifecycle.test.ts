import { test } from 'node:test'
import assert from 'node:assert/strict'
import { eventsFor, expectError } from '../helpers/api.js'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { cardBody, issuedCard, makeAccount, makeCardholder, runJobs } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

async function holderWithAccount(
  program: 'full' | 'basic',
): Promise<{ holder: any; account: any }> {
  const holder = await makeCardholder(t, token)
  return { holder, account: await makeAccount(t, token, tenant.programs[program].id, holder.id) }
}

const move = (id: string, op: string) => t.api(token, 'POST', `/v1/cards/${id}/${op}`)

async function moveOk(id: string, op: string, status: string): Promise<any> {
  const res = await move(id, op)
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(res.json().status, status)
  return res.json()
}

test('physical card: inactive when issued, then every row of the state table', async () => {
  const { holder, account } = await holderWithAccount('full')
  const card = await issuedCard(
    t,
    token,
    cardBody(holder.id, account.id, { form_factor: 'physical', card_type: 'debit' }),
  )
  assert.equal(card.status, 'inactive')
  expectError(await move(card.id, 'freeze'), 422, 'card_invalid_state')
  expectError(await move(card.id, 'unfreeze'), 422, 'card_invalid_state')
  await moveOk(card.id, 'activate', 'active')
  expectError(await move(card.id, 'activate'), 422, 'card_already_activated')
  expectError(await move(card.id, 'unfreeze'), 422, 'card_invalid_state')
  await moveOk(card.id, 'freeze', 'frozen')
  expectError(await move(card.id, 'freeze'), 422, 'card_invalid_state')
  expectError(await move(card.id, 'activate'), 422, 'card_invalid_state')
  await moveOk(card.id, 'unfreeze', 'active')
  await moveOk(card.id, 'freeze', 'frozen')
  const closed = await moveOk(card.id, 'close', 'closed')
  for (const op of ['activate', 'freeze', 'unfreeze', 'close'])
    expectError(await move(card.id, op), 422, 'card_closed')
  expectError(
    await t.api(token, 'POST', `/v1/cards/${card.id}/replace`, { reason: 'lost' }),
    422,
    'card_closed',
  )
  expectError(
    await t.api(token, 'PATCH', `/v1/cards/${card.id}`, { metadata: { a: 'b' } }),
    422,
    'card_closed',
  )
  expectError(await t.api(token, 'POST', `/v1/simulate/cards/${card.id}/ship`), 422, 'card_closed')
  assert.equal((await t.api(token, 'GET', `/v1/cards/${card.id}`)).json().status, 'closed')
  assert.deepEqual(
    (await eventsFor(t, card.id)).map((e) => e.type),
    [
      'card.created',
      'card.issued',
      'card.activated',
      'card.frozen',
      'card.unfrozen',
      'card.frozen',
      'card.closed',
    ],
  )
  assert.equal(closed.last4, card.last4)
})

test('operations without a payload refuse unknown body fields with unknown_parameter and change nothing', async () => {
  const { holder, account } = await holderWithAccount('full')
  const created = (
    await t.api(
      token,
      'POST',
      '/v1/cards',
      cardBody(holder.id, account.id, { form_factor: 'physical', card_type: 'debit' }),
    )
  ).json()
  expectError(
    await t.api(token, 'POST', `/v1/simulate/cards/${created.id}/issue`, { status: 'active' }),
    400,
    'unknown_parameter',
    'status',
  )
  const card = (await t.api(token, 'POST', `/v1/simulate/cards/${created.id}/issue`, {})).json()
  assert.equal(card.status, 'inactive')
  for (const op of ['activate', 'freeze', 'unfreeze', 'close']) {
    expectError(
      await t.api(token, 'POST', `/v1/cards/${card.id}/${op}`, { reason: 'lost' }),
      400,
      'unknown_parameter',
      'reason',
    )
  }
  assert.equal((await t.api(token, 'GET', `/v1/cards/${card.id}`)).json().status, 'inactive')
  await moveOk(card.id, 'activate', 'active')
  const empty = await t.api(token, 'POST', `/v1/cards/${card.id}/freeze`, {})
  assert.equal(empty.statusCode, 200, empty.body)
  expectError(
    await t.api(token, 'POST', `/v1/cards/${card.id}/pin-key`, { bits: 4096 }),
    400,
    'unknown_parameter',
    'bits',
  )
})

test('virtual cards are active when issued on both processors; closing works from any issued status', async () => {
  for (const program of ['full', 'basic'] as const) {
    const { holder, account } = await holderWithAccount(program)
    const card = await issuedCard(t, token, cardBody(holder.id, account.id))
    assert.equal(card.status, 'active', program)
    assert.equal(card.shipping, null)
    expectError(await move(card.id, 'activate'), 422, 'card_already_activated')
    await moveOk(card.id, 'freeze', 'frozen')
    await moveOk(card.id, 'unfreeze', 'active')
    await moveOk(card.id, 'close', 'closed')
    expectError(await move(card.id, 'unfreeze'), 422, 'card_closed')
  }
  const { holder, account } = await holderWithAccount('full')
  const inactive = await issuedCard(
    t,
    token,
    cardBody(holder.id, account.id, { form_factor: 'physical', card_type: 'debit' }),
  )
  await moveOk(inactive.id, 'close', 'closed')
})

test('a closed card frees a one-card program for a new card', async () => {
  const { holder, account } = await holderWithAccount('basic')
  const card = await issuedCard(t, token, cardBody(holder.id, account.id))
  expectError(
    await t.api(token, 'POST', '/v1/cards', cardBody(holder.id, account.id)),
    422,
    'card_limit_reached',
  )
  await moveOk(card.id, 'close', 'closed')
  assert.equal(
    (await t.api(token, 'POST', '/v1/cards', cardBody(holder.id, account.id))).statusCode,
    201,
  )
})

test('replace lost or stolen: the old card closes at once; the new one is pending with replacement_for', async () => {
  const { holder, account } = await holderWithAccount('full')
  const old = await issuedCard(
    t,
    token,
    cardBody(holder.id, account.id, {
      spending_controls: { blocked_mccs: ['7995'] },
      metadata: { k: 'v' },
    }),
  )
  const res = await t.api(token, 'POST', `/v1/cards/${old.id}/replace`, { reason: 'stolen' })
  assert.equal(res.statusCode, 201, res.body)
  const fresh = res.json()
  assert.notEqual(fresh.id, old.id)
  assert.equal(fresh.status, 'pending')
  assert.equal(fresh.replacement_for, old.id)
  assert.equal(fresh.replacement_reason, 'stolen')
  assert.equal(fresh.account_id, account.id)
  assert.deepEqual(fresh.spending_controls.blocked_mccs, ['7995'])
  const oldNow = (await t.api(token, 'GET', `/v1/cards/${old.id}`)).json()
  assert.equal(oldNow.status, 'closed')
  assert.equal(oldNow.replaced_by, fresh.id)
  assert.deepEqual((await eventsFor(t, old.id)).map((e) => e.type).slice(-2), [
    'card.closed',
    'card.replaced',
  ])
  assert.equal((await eventsFor(t, fresh.id, 'card.created')).length, 1)
  await runJobs(t)
  assert.equal((await t.api(token, 'GET', `/v1/cards/${fresh.id}`)).json().status, 'active')
  expectError(
    await t.api(token, 'POST', `/v1/cards/${old.id}/replace`, { reason: 'lost' }),
    422,
    'card_closed',
  )
  expectError(
    await t.api(token, 'POST', `/v1/cards/${fresh.id}/replace`, { reason: 'broken' }),
    400,
    'invalid_parameter',
    'reason',
  )
})

test('replace damaged: the old card works until the new physical card is activated, then closes', async () => {
  const { holder, account } = await holderWithAccount('full')
  const old = await issuedCard(
    t,
    token,
    cardBody(holder.id, account.id, { form_factor: 'physical', card_type: 'debit' }),
  )
  await moveOk(old.id, 'activate', 'active')
  const fresh = (
    await t.api(token, 'POST', `/v1/cards/${old.id}/replace`, { reason: 'damaged' })
  ).json()
  assert.equal((await t.api(token, 'GET', `/v1/cards/${old.id}`)).json().status, 'active')
  expectError(
    await t.api(token, 'POST', `/v1/cards/${old.id}/replace`, { reason: 'damaged' }),
    422,
    'card_invalid_state',
  )
  await runJobs(t)
  assert.equal((await t.api(token, 'GET', `/v1/cards/${fresh.id}`)).json().status, 'inactive')
  assert.equal((await t.api(token, 'GET', `/v1/cards/${old.id}`)).json().status, 'active')
  await moveOk(fresh.id, 'activate', 'active')
  const oldNow = (await t.api(token, 'GET', `/v1/cards/${old.id}`)).json()
  assert.equal(oldNow.status, 'closed')
  assert.equal(oldNow.replaced_by, fresh.id)
  assert.deepEqual((await eventsFor(t, old.id)).map((e) => e.type).slice(-2), [
    'card.replaced',
    'card.closed',
  ])
})

test('replace expiring on a one-card program: allowed beside the old card, which closes when the new one goes live', async () => {
  const { holder, account } = await holderWithAccount('basic')
  const old = await issuedCard(t, token, cardBody(holder.id, account.id))
  const res = await t.api(token, 'POST', `/v1/cards/${old.id}/replace`, { reason: 'expiring' })
  assert.equal(res.statusCode, 201, res.body)
  const fresh = res.json()
  assert.equal((await t.api(token, 'GET', `/v1/cards/${old.id}`)).json().status, 'active')
  await runJobs(t)
  assert.equal((await t.api(token, 'GET', `/v1/cards/${fresh.id}`)).json().status, 'active')
  assert.equal((await t.api(token, 'GET', `/v1/cards/${old.id}`)).json().status, 'closed')
  // The new card holds the program's one slot now.
  expectError(
    await t.api(token, 'POST', '/v1/cards', cardBody(holder.id, account.id)),
    422,
    'card_limit_reached',
  )
})

test('PATCH merges spending controls and metadata; the processor must be able to enforce the controls', async () => {
  const { holder, account } = await holderWithAccount('full')
  const pending = (
    await t.api(
      token,
      'POST',
      '/v1/cards',
      cardBody(holder.id, account.id, { metadata: { a: '1', b: '2' } }),
    )
  ).json()
  const patched = await t.api(token, 'PATCH', `/v1/cards/${pending.id}`, {
    spending_controls: {
      spending_limits: [{ amount: 5000, interval: 'daily' }],
      allowed_countries: ['fra', 'DEU'],
    },
    metadata: { b: null, c: '3' },
  })
  assert.equal(patched.statusCode, 200, patched.body)
  assert.deepEqual(patched.json().metadata, { a: '1', c: '3' })
  assert.deepEqual(patched.json().spending_controls, {
    spending_limits: [{ amount: 5000, interval: 'daily' }],
    allowed_mccs: [],
    blocked_mccs: [],
    allowed_countries: ['FRA', 'DEU'],
    blocked_countries: [],
  })
  const again = (
    await t.api(token, 'PATCH', `/v1/cards/${pending.id}`, {
      spending_controls: { blocked_mccs: ['5933'] },
    })
  ).json()
  assert.deepEqual(again.spending_controls.spending_limits, [{ amount: 5000, interval: 'daily' }])
  assert.deepEqual(again.spending_controls.blocked_mccs, ['5933'])
  expectError(
    await t.api(token, 'PATCH', `/v1/cards/${pending.id}`, {
      spending_controls: { blocked_countries: ['USA'] },
    }),
    400,
    'invalid_parameter',
    'spending_controls.allowed_countries',
  )
  expectError(
    await t.api(token, 'PATCH', `/v1/cards/${pending.id}`, { status: 'active' }),
    400,
    'unknown_parameter',
    'status',
  )
  const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v']))
  expectError(
    await t.api(token, 'PATCH', `/v1/cards/${pending.id}`, { metadata: many }),
    400,
    'invalid_parameter',
    'metadata',
  )

  const basic = await holderWithAccount('basic')
  const card = await issuedCard(t, token, cardBody(basic.holder.id, basic.account.id))
  expectError(
    await t.api(token, 'PATCH', `/v1/cards/${card.id}`, {
      spending_controls: { allowed_mccs: ['5411'] },
    }),
    422,
    'spend_control_unsupported',
    'spending_controls.allowed_mccs',
  )
  const ok = await t.api(token, 'PATCH', `/v1/cards/${card.id}`, {
    spending_controls: { spending_limits: [{ amount: 100, interval: 'per_authorization' }] },
  })
  assert.equal(ok.statusCode, 200, ok.body)
})

test('shipping: physical cards move pending → shipped → delivered with card.shipped; virtual ones are refused', async () => {
  const { holder, account } = await holderWithAccount('full')
  const pending = (
    await t.api(
      token,
      'POST',
      '/v1/cards',
      cardBody(holder.id, account.id, { form_factor: 'physical', card_type: 'debit' }),
    )
  ).json()
  expectError(
    await t.api(token, 'POST', `/v1/simulate/cards/${pending.id}/ship`),
    422,
    'card_not_provisioned',
  )
  await t.api(token, 'POST', `/v1/simulate/cards/${pending.id}/issue`)
  const shipped = await t.api(token, 'POST', `/v1/simulate/cards/${pending.id}/ship`)
  assert.equal(shipped.statusCode, 200, shipped.body)
  assert.equal(shipped.json().shipping.status, 'shipped')
  assert.ok(shipped.json().shipping.shipped_at)
  expectError(
    await t.api(token, 'POST', `/v1/simulate/cards/${pending.id}/ship`, { status: 'shipped' }),
    422,
    'card_invalid_state',
  )
  const delivered = (await t.api(token, 'POST', `/v1/simulate/cards/${pending.id}/ship`)).json()
  assert.equal(delivered.shipping.status, 'delivered')
  assert.equal(delivered.status, 'inactive')
  expectError(
    await t.api(token, 'POST', `/v1/simulate/cards/${pending.id}/ship`),
    422,
    'card_invalid_state',
  )
  assert.deepEqual(
    (await eventsFor(t, pending.id, 'card.shipped')).map((e) => e.object.shipping.status),
    ['shipped', 'delivered'],
  )

  const virtual = await issuedCard(t, token, cardBody(holder.id, account.id))
  expectError(
    await t.api(token, 'POST', `/v1/simulate/cards/${virtual.id}/ship`),
    422,
    'card_invalid_state',
  )
  const prod = await createTenant(t, { environment: 'production' })
  expectError(
    await t.api(await prod.token(), 'POST', `/v1/simulate/cards/${virtual.id}/ship`),
    404,
    'not_found',
  )
})

test('cards expire when their expiry month ends: card.expired, then only close is allowed', async () => {
  const { holder, account } = await holderWithAccount('basic')
  const card = await issuedCard(t, token, cardBody(holder.id, account.id))
  const other = await holderWithAccount('full')
  const physical = await issuedCard(
    t,
    token,
    cardBody(other.holder.id, other.account.id, { form_factor: 'physical', card_type: 'debit' }),
  )
  const closed = await issuedCard(t, token, cardBody(other.holder.id, other.account.id))
  await moveOk(closed.id, 'close', 'closed')

  const lastValid = Date.UTC(card.exp_year, card.exp_month, 1) - 1000
  t.clock.advance(lastValid - t.clock.now().getTime())
  await runJobs(t)
  assert.equal(
    (await t.api(await tenant.token(), 'GET', `/v1/cards/${card.id}`)).json().status,
    'active',
    'still valid on the last day of the month',
  )

  t.clock.advance(2000)
  token = await tenant.token()
  await runJobs(t)
  const expired = (await t.api(token, 'GET', `/v1/cards/${card.id}`)).json()
  assert.equal(expired.status, 'expired')
  assert.equal((await t.api(token, 'GET', `/v1/cards/${physical.id}`)).json().status, 'expired')
  assert.equal((await t.api(token, 'GET', `/v1/cards/${closed.id}`)).json().status, 'closed')
  assert.equal((await eventsFor(t, card.id, 'card.expired')).length, 1)
  for (const op of ['activate', 'freeze', 'unfreeze'])
    expectError(await move(card.id, op), 422, 'card_invalid_state')
  // An expired card no longer takes the one-card slot, and it can still be replaced or closed.
  const replacement = await t.api(token, 'POST', `/v1/cards/${card.id}/replace`, {
    reason: 'expiring',
  })
  assert.equal(replacement.statusCode, 201, replacement.body)
  await moveOk(physical.id, 'close', 'closed')
})
