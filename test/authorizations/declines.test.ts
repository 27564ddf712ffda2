import assert from 'node:assert/strict'
import { test } from 'node:test'
import { eventsFor, expectError } from '../helpers/api.js'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { cardBody, issuedCard } from '../cards/support.js'
import {
  authorizeRaw,
  balances,
  entries,
  expectApproved,
  expectDecline,
  fundedCard,
  post,
  runJobs,
  secondCard,
} from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

test('an approved authorization holds the amount: available falls, ledger stays, a hold entry and authorization.created', async () => {
  const f = await fundedCard(t, tenant, token, 10_000)
  const auth = await expectApproved(t, token, f.card.id, 2500, {
    merchant: { name: 'Hotel', mcc: '7011', country: 'prt' },
  })
  assert.match(auth.id, /^auth_[0-9A-Z]{26}$/)
  assert.equal(auth.object, 'authorization')
  assert.deepEqual(
    [auth.amount, auth.captured_amount, auth.reversed_amount, auth.currency],
    [2500, 0, 0, 'USD'],
  )
  assert.deepEqual(auth.merchant, { name: 'Hotel', mcc: '7011', city: null, country: 'PRT' })
  assert.deepEqual(
    [auth.card_id, auth.account_id, auth.program_id, auth.network_token_id],
    [f.card.id, f.account.id, tenant.programs.full.id, null],
  )
  assert.equal(Date.parse(auth.expires_at) - Date.parse(auth.created_at), 7 * 24 * 3600 * 1000)
  assert.deepEqual(
    auth.request_history.map((r: any) => [r.type, r.amount, r.approved, r.decline_reason]),
    [['authorization', 2500, true, null]],
  )
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 10_000,
    held: 2500,
    available: 7500,
  })
  const [entry] = (await t.api(token, 'GET', `/v1/accounts/${f.account.id}/entries`)).json().data
  assert.deepEqual([entry.type, entry.amount, entry.source_id], ['hold', -2500, auth.id])
  assert.deepEqual(
    (await eventsFor(t, auth.id)).map((e) => e.type),
    ['authorization.created'],
  )
  assert.deepEqual((await t.api(token, 'GET', `/v1/authorizations/${auth.id}`)).json(), auth)
})

test('a declined authorization is recorded with its reason and authorization.created, and nothing is held', async () => {
  const f = await fundedCard(t, tenant, token, 100)
  const auth = await expectDecline(t, token, f.card.id, 101, 'insufficient_funds')
  assert.equal(auth.amount, 101)
  assert.deepEqual(
    auth.request_history.map((r: any) => [r.approved, r.decline_reason]),
    [[false, 'insufficient_funds']],
  )
  assert.deepEqual(await balances(t, token, f.account.id), { ledger: 100, held: 0, available: 100 })
  assert.deepEqual(await entries(t, token, f.account.id), [])
  assert.deepEqual(
    (await eventsFor(t, auth.id)).map((e) => [e.type, e.object.status]),
    [['authorization.created', 'declined']],
  )
  await expectApproved(t, token, f.card.id, 100)
})

test('card status declines: card_inactive (not issued, not activated), card_frozen, card_closed', async () => {
  const f = await fundedCard(t, tenant, token, 10_000)
  const pending = await t.api(token, 'POST', '/v1/cards', cardBody(f.holder.id, f.account.id))
  assert.equal(pending.statusCode, 201)
  await expectDecline(t, token, pending.json().id, 100, 'card_inactive')
  const physical = await secondCard(t, token, f, { form_factor: 'physical', card_type: 'debit' })
  assert.equal(physical.status, 'inactive')
  await expectDecline(t, token, physical.id, 100, 'card_inactive')
  await post(t, token, `/v1/cards/${f.card.id}/freeze`)
  await expectDecline(t, token, f.card.id, 100, 'card_frozen')
  await post(t, token, `/v1/cards/${f.card.id}/unfreeze`)
  await expectApproved(t, token, f.card.id, 100)
  await post(t, token, `/v1/cards/${f.card.id}/close`)
  await expectDecline(t, token, f.card.id, 100, 'card_closed')
})

test('presented expiry and security code: a wrong one declines invalid_expiry or invalid_cvc, the right ones approve', async () => {
  const f = await fundedCard(t, tenant, token, 10_000)
  const row = await t.deps.db
    .selectFrom('cards')
    .select('processor_reference')
    .where('id', '=', f.card.id)
    .executeTakeFirstOrThrow()
  const details = await t.deps.processors
    .forProgram(tenant.programs.full)
    .revealDetails(
      { organizationId: tenant.organizationId, environment: 'sandbox' },
      row.processor_reference!,
    )
  const wrongCvc = String((Number(details.cvc) + 1) % 1000).padStart(3, '0')
  await expectDecline(t, token, f.card.id, 100, 'invalid_expiry', {
    exp_month: (f.card.exp_month % 12) + 1,
    exp_year: f.card.exp_year,
  })
  await expectDecline(t, token, f.card.id, 100, 'invalid_expiry', {
    exp_month: f.card.exp_month,
    exp_year: f.card.exp_year + 1,
    cvc: details.cvc,
  })
  await expectDecline(t, token, f.card.id, 100, 'invalid_cvc', { cvc: wrongCvc })
  await expectDecline(t, token, f.card.id, 100, 'invalid_cvc', {
    exp_month: f.card.exp_month,
    exp_year: f.card.exp_year,
    cvc: wrongCvc,
  })
  await expectApproved(t, token, f.card.id, 100, {
    exp_month: f.card.exp_month,
    exp_year: f.card.exp_year,
    cvc: details.cvc,
  })
})

test('network tokens: only an active token of the card approves; requested, suspended and deleted decline token_inactive', async () => {
  const f = await fundedCard(t, tenant, token, 10_000)
  const active = await post(
    t,
    token,
    '/v1/simulate/network_tokens',
    { card_id: f.card.id, wallet: 'apple_pay' },
    201,
  )
  const requested = await post(
    t,
    token,
    '/v1/simulate/network_tokens',
    { card_id: f.card.id, wallet: 'google_pay', activate: false },
    201,
  )
  const viaToken = await expectApproved(t, token, f.card.id, 100, { network_token_id: active.id })
  assert.equal(viaToken.network_token_id, active.id)
  await expectDecline(t, token, f.card.id, 100, 'token_inactive', {
    network_token_id: requested.id,
  })
  await post(t, token, `/v1/network_tokens/${active.id}/suspend`)
  await expectDecline(t, token, f.card.id, 100, 'token_inactive', { network_token_id: active.id })
  await post(t, token, `/v1/network_tokens/${active.id}/resume`)
  await expectApproved(t, token, f.card.id, 100, { network_token_id: active.id })
  await post(t, token, `/v1/network_tokens/${active.id}/delete`)
  await expectDecline(t, token, f.card.id, 100, 'token_inactive', { network_token_id: active.id })
  const other = await secondCard(t, token, f)
  expectError(
    await authorizeRaw(t, token, other.id, 100, { network_token_id: requested.id }),
    404,
    'token_not_found',
    'network_token_id',
  )
  expectError(
    await authorizeRaw(t, token, other.id, 100, { network_token_id: 'ntok_nope' }),
    404,
    'token_not_found',
    'network_token_id',
  )
})

test('account_blocked while the account is blocked, currency_mismatch for another currency when the program blocks foreign spend', async () => {
  const f = await fundedCard(t, tenant, token, 10_000)
  const program = `/operator/v1/programs/${tenant.programs.full.id}`
  await t.operator('PATCH', program, { foreign_spend: 'blocked' })
  await expectDecline(t, token, f.card.id, 100, 'currency_mismatch', { currency: 'EUR' })
  await t.operator('PATCH', program, { foreign_spend: 'allowed' })
  await post(t, token, `/v1/accounts/${f.account.id}/block`, { reason: 'fraud' })
  await expectDecline(t, token, f.card.id, 100, 'account_blocked')
  await post(t, token, `/v1/accounts/${f.account.id}/unblock`)
  await expectApproved(t, token, f.card.id, 100, { currency: 'usd' })
})

test('merchant category and country rules decline mcc_blocked and country_blocked', async () => {
  const f = await fundedCard(t, tenant, token, 10_000, {
    spending_controls: { blocked_mccs: ['7995'], allowed_countries: ['USA', 'CAN'] },
  })
  await expectDecline(t, token, f.card.id, 100, 'mcc_blocked', {
    merchant: { name: 'Casino', mcc: '7995', country: 'USA' },
  })
  await expectDecline(t, token, f.card.id, 100, 'country_blocked', {
    merchant: { name: 'Cafe', mcc: '5814', country: 'FRA' },
  })
  await expectDecline(t, token, f.card.id, 100, 'country_blocked', {
    merchant: { name: 'No country', mcc: '5814' },
  })
  await expectApproved(t, token, f.card.id, 100, {
    merchant: { name: 'Cafe', mcc: '5814', country: 'can' },
  })
  const allowOnly = await secondCard(t, token, f, {
    spending_controls: { allowed_mccs: ['5411'], blocked_countries: ['PRK'] },
  })
  await expectDecline(t, token, allowOnly.id, 100, 'mcc_blocked', {
    merchant: { name: 'Cafe', mcc: '5814', country: 'USA' },
  })
  await expectDecline(t, token, allowOnly.id, 100, 'country_blocked', {
    merchant: { name: 'Grocer', mcc: '5411', country: 'PRK' },
  })
  await expectApproved(t, token, allowOnly.id, 100, {
    merchant: { name: 'Grocer', mcc: '5411', country: 'USA' },
  })
})

test('spending limits: per_authorization, and a daily window counting approved spend still held or captured but not reversed', async () => {
  const f = await fundedCard(t, tenant, token, 100_000, {
    spending_controls: {
      spending_limits: [
        { amount: 5000, interval: 'per_authorization' },
        { amount: 8000, interval: 'daily' },
      ],
    },
  })
  await expectDecline(t, token, f.card.id, 5001, 'spending_limit')
  const a = await expectApproved(t, token, f.card.id, 5000)
  const b = await expectApproved(t, token, f.card.id, 3000)
  await expectDecline(t, token, f.card.id, 1, 'spending_limit')
  await post(t, token, `/v1/simulate/authorizations/${b.id}/reverse`)
  await expectApproved(t, token, f.card.id, 2000)
  await post(t, token, `/v1/simulate/authorizations/${a.id}/capture`, { amount: 4000 }, 201)
  await expectApproved(t, token, f.card.id, 1000, {})
  await expectDecline(t, token, f.card.id, 1001, 'spending_limit')
  t.clock.advance(24 * 3600 * 1000)
  token = await tenant.token()
  await expectApproved(t, token, f.card.id, 5000)
  // The new day's approvals count against it (the window is read by id from its start, ids made from the decision's time).
  await expectDecline(t, token, f.card.id, 3001, 'spending_limit')
  await expectApproved(t, token, f.card.id, 3000)
  const other = await secondCard(t, token, f)
  await expectApproved(t, token, other.id, 5001)
})

test('insufficient_funds when the available balance (ledger minus holds) is short', async () => {
  const f = await fundedCard(t, tenant, token, 1000)
  await expectApproved(t, token, f.card.id, 600)
  await expectDecline(t, token, f.card.id, 401, 'insufficient_funds')
  await expectApproved(t, token, f.card.id, 400)
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 1000,
    held: 1000,
    available: 0,
  })
})

test('a card past its expiry declines card_expired (before and after the card expiry job)', async () => {
  const f = await fundedCard(t, tenant, token, 10_000)
  const expiry = Date.UTC(f.card.exp_year, f.card.exp_month, 1)
  t.clock.advance(expiry - t.clock.now().getTime() + 1000)
  token = await tenant.token()
  await expectDecline(t, token, f.card.id, 100, 'card_expired')
  await runJobs(t)
  assert.equal((await t.api(token, 'GET', `/v1/cards/${f.card.id}`)).json().status, 'expired')
  await expectDecline(t, token, f.card.id, 100, 'card_expired')
})

test("request validation: unknown fields, a missing merchant and another organization's card", async () => {
  const f = await fundedCard(t, tenant, token, 1000)
  expectError(
    await authorizeRaw(t, token, f.card.id, 100, { tip: 5 }),
    400,
    'unknown_parameter',
    'tip',
  )
  expectError(
    await t.api(token, 'POST', '/v1/simulate/authorizations', {
      card_id: f.card.id,
      amount: 100,
      currency: 'USD',
    }),
    400,
    'missing_parameter',
    'merchant',
  )
  expectError(await authorizeRaw(t, token, f.card.id, 0), 400, 'invalid_parameter', 'amount')
  const stranger = await createTenant(t)
  expectError(
    await authorizeRaw(t, await stranger.token(), f.card.id, 100),
    404,
    'card_not_found',
    'card_id',
  )
  const card = await issuedCard(t, token, cardBody(f.holder.id, f.account.id))
  assert.equal(card.status, 'active')
})
