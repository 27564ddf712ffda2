import { test } from 'node:test'
import assert from 'node:assert/strict'
import { eventsFor, expectError } from '../helpers/api.js'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import {
  attest,
  cardBody,
  DELIVERY,
  issuedCard,
  makeAccount,
  makeCardholder,
  runJobs,
} from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

test('POST /v1/cards refuses in the stable order: cardholder, identity, address, KYC, account, program rules', async () => {
  const full = tenant.programs.full
  const basic = tenant.programs.basic
  const post = (body: Record<string, unknown>) => t.api(token, 'POST', '/v1/cards', body)

  const ready = await makeCardholder(t, token)
  const readyAccount = await makeAccount(t, token, full.id, ready.id)
  expectError(
    await post(cardBody('chd_01JD0000000000000000000000', readyAccount.id)),
    404,
    'cardholder_not_found',
    'cardholder_id',
  )

  // Nothing on file: each fix reveals the next refusal, in order.
  const bare = await makeCardholder(t, token, {
    identityDocument: false,
    address: false,
    kyc: 'none',
  })
  const bareBody = cardBody(bare.id, 'acct_01JD0000000000000000000000')
  expectError(await post(bareBody), 422, 'identity_document_required')
  assert.equal(
    (
      await t.api(token, 'PATCH', `/v1/cardholders/${bare.id}`, {
        identity_document: { type: 'passport', number: 'X1' },
      })
    ).statusCode,
    200,
  )
  expectError(await post(bareBody), 422, 'address_required')
  assert.equal(
    (
      await t.api(token, 'PATCH', `/v1/cardholders/${bare.id}`, {
        address: { line1: '2 High St', city: 'Leeds', postal_code: 'LS1', country: 'GBR' },
      })
    ).statusCode,
    200,
  )
  expectError(await post(bareBody), 422, 'kyc_not_approved')
  await attest(t, token, bare.id, 'pending', true)
  expectError(await post(bareBody), 422, 'kyc_not_approved')
  await attest(t, token, bare.id, 'approved', true)
  expectError(await post(bareBody), 404, 'account_not_found', 'account_id')

  // sim_basic runs its own identity check: an approved attestation without identity is not enough.
  const basicHolder = await makeCardholder(t, token)
  const basicAccount = await makeAccount(t, token, basic.id, basicHolder.id, { provisioned: false })
  assert.equal(basicAccount.has_upstream_reference, false)
  expectError(
    await post(cardBody(basicHolder.id, basicAccount.id)),
    422,
    'account_not_provisioned',
    'account_id',
  )
  await attest(t, token, basicHolder.id, 'approved', false)
  expectError(await post(cardBody(basicHolder.id, basicAccount.id)), 422, 'kyc_identity_required')
  await attest(t, token, basicHolder.id, 'approved', true)
  expectError(await post(cardBody(basicHolder.id, basicAccount.id)), 422, 'account_not_provisioned')
  await runJobs(t)

  expectError(
    await post(cardBody(bare.id, readyAccount.id)),
    422,
    'account_cardholder_mismatch',
    'account_id',
  )

  const base = cardBody(ready.id, readyAccount.id)
  const unsupported = expectError(
    await post(cardBody(basicHolder.id, basicAccount.id, { form_factor: 'physical' })),
    422,
    'unsupported_form_factor',
    'form_factor',
  )
  assert.match(unsupported.message, /virtual/)
  assert.doesNotMatch(unsupported.message, /issues: .*physical/)
  expectError(
    await post({ ...base, card_type: 'credit' }),
    422,
    'card_type_not_configured',
    'card_type',
  )
  expectError(
    await post({ ...base, embossed_name: undefined }),
    422,
    'embossed_name_required',
    'embossed_name',
  )
  expectError(await post({ ...base, embossed_name: '   ' }), 422, 'embossed_name_required')
  // Both missing: several fields fail at once, so invalid_parameter with one errors entry each.
  const both = expectError(
    await post({ ...base, embossed_name: undefined, delivery_address: { ...DELIVERY, city: ' ' } }),
    400,
    'invalid_parameter',
    'embossed_name',
  )
  assert.deepEqual(
    both.errors.map((e: { code: string; param: string }) => [e.code, e.param]),
    [
      ['embossed_name_required', 'embossed_name'],
      ['delivery_address_required', 'delivery_address.city'],
    ],
  )
  expectError(
    await post({ ...base, delivery_address: undefined }),
    422,
    'delivery_address_required',
    'delivery_address',
  )
  expectError(
    await post({ ...base, delivery_address: { ...DELIVERY, name: undefined } }),
    422,
    'delivery_address_required',
    'delivery_address.name',
  )
  for (const part of ['line1', 'city', 'postal_code', 'country']) {
    expectError(
      await post({ ...base, delivery_address: { ...DELIVERY, [part]: undefined } }),
      422,
      'delivery_address_required',
      `delivery_address.${part}`,
    )
  }
  expectError(
    await post(
      cardBody(basicHolder.id, basicAccount.id, {
        spending_controls: { allowed_countries: ['FRA'] },
      }),
    ),
    422,
    'spend_control_unsupported',
    'spending_controls.allowed_countries',
  )
  expectError(
    await post(
      cardBody(basicHolder.id, basicAccount.id, {
        spending_controls: { spending_limits: [{ amount: 100, interval: 'weekly' }] },
      }),
    ),
    422,
    'spend_control_unsupported',
  )

  const first = await post(cardBody(basicHolder.id, basicAccount.id))
  assert.equal(first.statusCode, 201, first.body)
  expectError(await post(cardBody(basicHolder.id, basicAccount.id)), 422, 'card_limit_reached')
  // The limit is checked before spending controls.
  expectError(
    await post(
      cardBody(basicHolder.id, basicAccount.id, {
        spending_controls: { allowed_countries: ['FRA'] },
      }),
    ),
    422,
    'card_limit_reached',
  )
})

test('schema problems are 400s: unknown fields, missing required fields, bad values', async () => {
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  const body = cardBody(holder.id, account.id)
  expectError(
    await t.api(token, 'POST', '/v1/cards', { ...body, pan: '4242' }),
    400,
    'unknown_parameter',
    'pan',
  )
  expectError(
    await t.api(token, 'POST', '/v1/cards', { ...body, form_factor: undefined }),
    400,
    'missing_parameter',
    'form_factor',
  )
  expectError(
    await t.api(token, 'POST', '/v1/cards', { ...body, form_factor: 'plastic' }),
    400,
    'invalid_parameter',
    'form_factor',
  )
  expectError(
    await t.api(token, 'POST', '/v1/cards', { ...body, embossed_name: 'A'.repeat(27) }),
    400,
    'invalid_parameter',
    'embossed_name',
  )
  expectError(
    await t.api(token, 'POST', '/v1/cards', {
      ...body,
      delivery_address: { ...DELIVERY, floor: '3' },
    }),
    400,
    'unknown_parameter',
    'delivery_address.floor',
  )
  expectError(
    await t.api(token, 'POST', '/v1/cards', {
      ...body,
      spending_controls: {
        spending_limits: [
          { amount: 1, interval: 'daily' },
          { amount: 2, interval: 'daily' },
        ],
      },
    }),
    400,
    'invalid_parameter',
  )
})

test('a delivery address as returned (line2 and state null) can be sent back as is', async () => {
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  const asReturned = { ...DELIVERY, line2: null, state: null }
  const res = await t.api(
    token,
    'POST',
    '/v1/cards',
    cardBody(holder.id, account.id, { delivery_address: asReturned }),
  )
  assert.equal(res.statusCode, 201, res.body)
  assert.deepEqual(res.json().delivery_address, asReturned)
  expectError(
    await t.api(
      token,
      'POST',
      '/v1/cards',
      cardBody(holder.id, account.id, { delivery_address: { ...DELIVERY, line2: 7 } }),
    ),
    400,
    'invalid_parameter',
    'delivery_address.line2',
  )
})

test('metadata keys longer than 40 characters (or empty) are refused on create and on PATCH', async () => {
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  const body = cardBody(holder.id, account.id)
  expectError(
    await t.api(token, 'POST', '/v1/cards', { ...body, metadata: { ['k'.repeat(41)]: 'v' } }),
    400,
    'invalid_parameter',
    'metadata',
  )
  expectError(
    await t.api(token, 'POST', '/v1/cards', { ...body, metadata: { '': 'v' } }),
    400,
    'invalid_parameter',
    'metadata',
  )
  const created = await t.api(token, 'POST', '/v1/cards', {
    ...body,
    metadata: { ['k'.repeat(40)]: 'v' },
  })
  assert.equal(created.statusCode, 201, created.body)
  expectError(
    await t.api(token, 'PATCH', `/v1/cards/${created.json().id}`, {
      metadata: { ['m'.repeat(41)]: 'v' },
    }),
    400,
    'invalid_parameter',
    'metadata',
  )
})

test('concurrent issuance on a one-card program: exactly one request wins, the rest answer card_limit_reached', async () => {
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.basic.id, holder.id)
  const results = await Promise.all(
    Array.from({ length: 8 }, () =>
      t.api(token, 'POST', '/v1/cards', cardBody(holder.id, account.id)),
    ),
  )
  const statuses = results.map((r) => r.statusCode).sort()
  assert.deepEqual(
    statuses,
    [201, 422, 422, 422, 422, 422, 422, 422],
    results.map((r) => r.body).join('\n'),
  )
  for (const r of results.filter((x) => x.statusCode === 422))
    assert.equal(r.json().error.code, 'card_limit_reached')
  const list = (await t.api(token, 'GET', `/v1/cards?cardholder_id=${holder.id}`)).json()
  assert.equal(list.data.length, 1)
  // The database itself refuses a second card holding the program's slot, whatever the service checked before.
  const row = await t.deps.db
    .selectFrom('cards')
    .selectAll()
    .where('id', '=', list.data[0].id)
    .executeTakeFirstOrThrow()
  await assert.rejects(
    t.deps.db
      .insertInto('cards')
      .values({
        ...row,
        id: 'card_01JD0000000000000000000001',
        delivery_address: JSON.stringify(row.delivery_address),
        shipping: null,
        spending_controls: JSON.stringify(row.spending_controls),
        metadata: '{}',
      })
      .execute(),
    (err: any) => err.code === '23505',
  )
})

test('a card is pending until the issuance job runs after CARD_ISSUE_DELAY_MS, then issued with card.issued', async () => {
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  t.deps.config.cardIssueDelayMs = 1000
  let res
  try {
    res = await t.api(
      token,
      'POST',
      '/v1/cards',
      cardBody(holder.id, account.id, { metadata: { team: 'ops' } }),
    )
  } finally {
    t.deps.config.cardIssueDelayMs = 0
  }
  assert.equal(res.statusCode, 201, res.body)
  const card = res.json()
  assert.equal(card.object, 'card')
  assert.match(card.id, /^card_[0-9A-Z]{26}$/)
  assert.equal(card.status, 'pending')
  assert.equal(card.last4, null)
  assert.equal(card.exp_month, null)
  assert.equal(card.program_id, tenant.programs.full.id)
  assert.equal(card.account_id, account.id)
  assert.equal(card.brand, 'visa')
  assert.deepEqual(card.metadata, { team: 'ops' })
  assert.deepEqual(card.delivery_address, { ...DELIVERY, line2: null, state: null })
  assert.equal(card.replacement_for, null)
  assert.equal(card.shipping, null)
  for (const secret of ['number', 'pan', 'cvc']) assert.ok(!(secret in card))
  assert.equal((await eventsFor(t, card.id, 'card.created')).length, 1)

  expectError(
    await t.api(token, 'POST', `/v1/cards/${card.id}/freeze`),
    422,
    'card_not_provisioned',
  )
  expectError(await t.api(token, 'POST', `/v1/cards/${card.id}/close`), 422, 'card_not_provisioned')
  await runJobs(t)
  assert.equal(
    (await t.api(token, 'GET', `/v1/cards/${card.id}`)).json().status,
    'pending',
    'not due before the delay',
  )

  t.clock.advance(1000)
  await runJobs(t)
  const issued = (await t.api(token, 'GET', `/v1/cards/${card.id}`)).json()
  assert.equal(issued.status, 'active')
  assert.match(issued.last4, /^[0-9]{4}$/)
  assert.ok(issued.exp_year >= t.clock.now().getUTCFullYear() + 2)
  assert.ok(issued.exp_month >= 1 && issued.exp_month <= 12)
  const events = await eventsFor(t, card.id, 'card.issued')
  assert.equal(events.length, 1)
  assert.equal(events[0].object.status, 'active')
})

test('physical cards carry shipping pending from creation; the sandbox issue call issues at once, a processor fault leaves the card pending, production answers 404', async () => {
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  const card = (
    await t.api(
      token,
      'POST',
      '/v1/cards',
      cardBody(holder.id, account.id, { form_factor: 'physical', card_type: 'debit' }),
    )
  ).json()
  assert.deepEqual(
    card.shipping,
    { status: 'pending', shipped_at: null, delivered_at: null },
    'a physical card carries its shipping from creation',
  )
  const fault = await t.api(token, 'POST', '/v1/simulate/processor_faults', {
    operation: 'get_card',
    error: 'processor_unavailable',
    count: 1,
  })
  assert.equal(fault.statusCode, 200, fault.body)
  expectError(
    await t.api(token, 'POST', `/v1/simulate/cards/${card.id}/issue`),
    502,
    'processor_unavailable',
  )
  assert.equal((await t.api(token, 'GET', `/v1/cards/${card.id}`)).json().status, 'pending')
  const issued = await t.api(token, 'POST', `/v1/simulate/cards/${card.id}/issue`)
  assert.equal(issued.statusCode, 200, issued.body)
  assert.equal(issued.json().status, 'inactive', 'physical cards wait for activation')
  assert.equal(issued.json().shipping.status, 'pending')
  const again = await t.api(token, 'POST', `/v1/simulate/cards/${card.id}/issue`)
  assert.equal(again.json().status, 'inactive')
  assert.equal((await eventsFor(t, card.id, 'card.issued')).length, 1)

  const prod = await createTenant(t, { environment: 'production' })
  const prodToken = await prod.token()
  const sim = await t.api(prodToken, 'POST', `/v1/simulate/cards/${card.id}/issue`)
  const unknown = await t.api(prodToken, 'POST', '/v1/simulate/cards/nope/issuee')
  assert.equal(sim.statusCode, 404)
  assert.equal(sim.json().error.code, 'not_found')
  assert.deepEqual(
    { ...sim.json().error, request_id: null },
    { ...unknown.json().error, request_id: null },
  )
})

test('lists filter by cardholder, account and status, paginate newest first, and back the cardholder and account lists', async () => {
  const holder = await makeCardholder(t, token)
  const a1 = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  const a2 = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  const c1 = await issuedCard(t, token, cardBody(holder.id, a1.id))
  const c2 = await issuedCard(t, token, cardBody(holder.id, a2.id))
  const c3 = (await t.api(token, 'POST', '/v1/cards', cardBody(holder.id, a2.id))).json()

  const byHolder = (await t.api(token, 'GET', `/v1/cards?cardholder_id=${holder.id}`)).json()
  assert.equal(byHolder.object, 'list')
  assert.equal(byHolder.url, '/v1/cards')
  assert.deepEqual(
    byHolder.data.map((c: any) => c.id),
    [c3.id, c2.id, c1.id],
  )
  assert.deepEqual(
    (await t.api(token, 'GET', `/v1/cards?account_id=${a2.id}`)).json().data.map((c: any) => c.id),
    [c3.id, c2.id],
  )
  assert.deepEqual(
    (await t.api(token, 'GET', `/v1/cards?cardholder_id=${holder.id}&status=pending`))
      .json()
      .data.map((c: any) => c.id),
    [c3.id],
  )
  expectError(
    await t.api(token, 'GET', '/v1/cards?status=lost'),
    400,
    'invalid_parameter',
    'status',
  )
  expectError(await t.api(token, 'GET', '/v1/cards?colour=red'), 400, 'unknown_parameter')

  const page1 = (await t.api(token, 'GET', `/v1/cards?cardholder_id=${holder.id}&limit=2`)).json()
  assert.equal(page1.has_more, true)
  const page2 = (
    await t.api(
      token,
      'GET',
      `/v1/cards?cardholder_id=${holder.id}&limit=2&starting_after=${page1.next_cursor}`,
    )
  ).json()
  assert.deepEqual(
    page2.data.map((c: any) => c.id),
    [c1.id],
  )
  assert.equal(page2.has_more, false)
  assert.equal(page2.next_cursor, null)

  const holderList = (await t.api(token, 'GET', `/v1/cardholders/${holder.id}/cards`)).json()
  assert.equal(holderList.url, `/v1/cardholders/${holder.id}/cards`)
  assert.deepEqual(
    holderList.data.map((c: any) => c.id),
    [c3.id, c2.id, c1.id],
  )
  assert.equal(holderList.data[1].last4, c2.last4)
  const accountList = (await t.api(token, 'GET', `/v1/accounts/${a1.id}/cards`)).json()
  assert.deepEqual(
    accountList.data.map((c: any) => c.id),
    [c1.id],
  )
  const single = (await t.api(token, 'GET', `/v1/cards/${c1.id}`)).json()
  assert.deepEqual(single, c1)
})

test("another organization's card answers exactly like a missing one; the other environment answers environment_mismatch", async () => {
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  const card = await issuedCard(t, token, cardBody(holder.id, account.id))
  const stranger = await createTenant(t)
  const strangerToken = await stranger.token()
  for (const [method, path] of [
    ['GET', ''],
    ['POST', '/freeze'],
    ['POST', '/details'],
    ['PATCH', ''],
  ] as const) {
    const theirs = await t.api(
      strangerToken,
      method,
      `/v1/cards/${card.id}${path}`,
      method === 'GET' ? undefined : {},
    )
    const missing = await t.api(
      strangerToken,
      method,
      `/v1/cards/card_01JD0000000000000000000000${path}`,
      method === 'GET' ? undefined : {},
    )
    assert.equal(theirs.statusCode, missing.statusCode, `${method} ${path}: ${theirs.body}`)
    assert.deepEqual(
      { ...theirs.json().error, request_id: null },
      { ...missing.json().error, request_id: null },
    )
  }
  expectError(await t.api(strangerToken, 'GET', `/v1/cards/${card.id}`), 404, 'card_not_found')
  assert.equal((await t.api(strangerToken, 'GET', '/v1/cards')).json().data.length, 0)
  expectError(
    await t.api(strangerToken, 'GET', `/v1/cardholders/${holder.id}/cards`),
    404,
    'cardholder_not_found',
  )
  expectError(
    await t.api(strangerToken, 'GET', `/v1/accounts/${account.id}/cards`),
    404,
    'account_not_found',
  )

  const production = await createTenant(t, {
    environment: 'production',
    organizationId: tenant.organizationId,
  })
  expectError(
    await t.api(await production.token(), 'GET', `/v1/cards/${card.id}`),
    403,
    'environment_mismatch',
  )
})

test('scopes: cards:read reads, cards:write issues and moves cards', async () => {
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  const card = await issuedCard(t, token, cardBody(holder.id, account.id))
  const reader = await tenant.token('cards:read')
  assert.equal((await t.api(reader, 'GET', `/v1/cards/${card.id}`)).statusCode, 200)
  assert.equal((await t.api(reader, 'GET', '/v1/cards')).statusCode, 200)
  expectError(
    await t.api(reader, 'POST', '/v1/cards', cardBody(holder.id, account.id)),
    403,
    'insufficient_scope',
  )
  expectError(await t.api(reader, 'POST', `/v1/cards/${card.id}/freeze`), 403, 'insufficient_scope')
  expectError(
    await t.api(reader, 'PATCH', `/v1/cards/${card.id}`, { metadata: { a: 'b' } }),
    403,
    'insufficient_scope',
  )
  const writer = await tenant.token('cards:write')
  expectError(await t.api(writer, 'GET', `/v1/cards/${card.id}`), 403, 'insufficient_scope')
  assert.equal((await t.api(writer, 'POST', `/v1/cards/${card.id}/freeze`)).statusCode, 200)
})
