import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { JobRunner } from '../../src/jobs/runner.js'
import { placeHold, releaseHold, captureHold } from '../../src/modules/ledger/service.js'
import { withTx } from '../../src/db/tx.js'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { withApprovedCardholder } from '../helpers/tenant.js'
import { approvedCardholder, eventsOf, expectError, openAccount } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
let cardholder: any
let basicAccount: any

withApprovedCardholder(async (fixture) => {
  ;({ t, tenant, token, cardholder } = fixture)
  basicAccount = await openAccount(t, token, tenant.programs.basic, cardholder.id)
  await new JobRunner(t.deps, t.jobs).drain()
})

/** Everything a caller can observe of an answer, with the per-request id taken out. */
function observable(res: LightMyRequestResponse): unknown {
  const headers = { ...res.headers }
  delete headers.date
  assert.match(String(headers['svc-request-id']), /^req_/)
  delete headers['svc-request-id']
  const body = res.json()
  assert.match(body.error.request_id, /^req_/)
  return { status: res.statusCode, headers, body: res.body.replace(body.error.request_id, 'req_X') }
}

describe('capability mounting', () => {
  for (const op of ['credit', 'debit', 'block', 'unblock']) {
    test(`${op} on a sim_basic account answers exactly what a misspelled path answers`, async () => {
      const body = op === 'credit' || op === 'debit' ? { amount: 100 } : {}
      const unmounted = await t.api(token, 'POST', `/v1/accounts/${basicAccount.id}/${op}`, body)
      const misspelled = await t.api(token, 'POST', `/v1/accounts/${basicAccount.id}/${op}x`, body)
      assert.equal(unmounted.statusCode, 404)
      assert.equal(unmounted.json().error.code, 'not_found')
      assert.deepEqual(observable(unmounted), observable(misspelled))
    })
  }

  test('an unmounted operation stays 404 whatever the body or the scopes', async () => {
    const readOnly = await tenant.token('accounts:read')
    const misspelled = await t.api(readOnly, 'POST', `/v1/accounts/${basicAccount.id}/credits`, {
      amount: 'lots',
      extra: 1,
    })
    const unmounted = await t.api(readOnly, 'POST', `/v1/accounts/${basicAccount.id}/credit`, {
      amount: 'lots',
      extra: 1,
    })
    assert.deepEqual(observable(unmounted), observable(misspelled))
  })

  test('the same operations are mounted on a sim_full account', async () => {
    const a = await openAccount(t, token, tenant.programs.full, cardholder.id)
    assert.equal(
      (await t.api(token, 'POST', `/v1/accounts/${a.id}/credit`, { amount: 10 })).statusCode,
      200,
    )
    assert.equal(
      (await t.api(token, 'POST', `/v1/accounts/${a.id}/debit`, { amount: 10 })).statusCode,
      200,
    )
    assert.equal((await t.api(token, 'POST', `/v1/accounts/${a.id}/block`)).statusCode, 200)
    assert.equal((await t.api(token, 'POST', `/v1/accounts/${a.id}/unblock`)).statusCode, 200)
  })

  test('the OpenAPI document marks the four operations with x-svc-capability', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    const mark = (p: string) => doc.paths[p]?.post?.['x-svc-capability']
    assert.equal(mark('/v1/accounts/{account_id}/credit'), 'account_credit')
    assert.equal(mark('/v1/accounts/{account_id}/debit'), 'account_debit')
    assert.equal(mark('/v1/accounts/{account_id}/block'), 'account_status')
    assert.equal(mark('/v1/accounts/{account_id}/unblock'), 'account_status')
  })
})

describe('block and unblock', () => {
  test('a blocked account refuses credits and debits with account_blocked and keeps its balances', async () => {
    const a = await openAccount(t, token, tenant.programs.full, cardholder.id)
    await t.api(token, 'POST', `/v1/accounts/${a.id}/credit`, { amount: 500 })
    const res = await t.api(token, 'POST', `/v1/accounts/${a.id}/block`, {
      reason: 'fraud',
      note: 'card skimmed',
    })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().status, 'blocked')
    assert.equal(res.json().ledger_balance, 500)
    expectError(
      await t.api(token, 'POST', `/v1/accounts/${a.id}/credit`, { amount: 1 }),
      422,
      'account_blocked',
    )
    expectError(
      await t.api(token, 'POST', `/v1/accounts/${a.id}/debit`, { amount: 1 }),
      422,
      'account_blocked',
    )
    const un = await t.api(token, 'POST', `/v1/accounts/${a.id}/unblock`)
    assert.equal(un.json().status, 'open')
    assert.equal(
      (await t.api(token, 'POST', `/v1/accounts/${a.id}/debit`, { amount: 1 })).json()
        .ledger_balance,
      499,
    )
    const types = (await eventsOf(t, tenant.organizationId))
      .filter((e) => e.object.id === a.id)
      .map((e) => e.type)
    assert.deepEqual(
      types.filter((x) => x.endsWith('blocked')),
      ['account.blocked', 'account.unblocked'],
    )
  })

  test('blocking twice answers the blocked account again without a second event', async () => {
    const a = await openAccount(t, token, tenant.programs.full, cardholder.id)
    await t.api(token, 'POST', `/v1/accounts/${a.id}/block`)
    const again = await t.api(token, 'POST', `/v1/accounts/${a.id}/block`, { reason: 'lost' })
    assert.equal(again.statusCode, 200)
    assert.equal(again.json().status, 'blocked')
    assert.equal(
      (await eventsOf(t, tenant.organizationId, 'account.blocked')).filter(
        (e) => e.object.id === a.id,
      ).length,
      1,
    )
  })

  test('a processor failure on block or unblock answers 502 and changes nothing; the retry goes through', async () => {
    const a = await openAccount(t, token, tenant.programs.full, cardholder.id)
    const fault = (error: string) =>
      t.api(token, 'POST', '/v1/simulate/processor_faults', {
        operation: 'set_account_status',
        error,
        count: 1,
      })
    assert.equal((await fault('processor_unavailable')).statusCode, 200)
    expectError(
      await t.api(token, 'POST', `/v1/accounts/${a.id}/block`, { reason: 'fraud' }),
      502,
      'processor_unavailable',
    )
    const still = (await t.api(token, 'GET', `/v1/accounts/${a.id}`)).json()
    assert.equal(still.status, 'open')
    assert.equal(still.updated_at, a.updated_at)
    assert.equal(
      (await eventsOf(t, tenant.organizationId, 'account.blocked')).filter(
        (e) => e.object.id === a.id,
      ).length,
      0,
    )

    assert.equal(
      (await t.api(token, 'POST', `/v1/accounts/${a.id}/block`)).json().status,
      'blocked',
    )
    assert.equal((await fault('processor_permission_denied')).statusCode, 200)
    expectError(
      await t.api(token, 'POST', `/v1/accounts/${a.id}/unblock`),
      502,
      'processor_permission_denied',
    )
    assert.equal((await t.api(token, 'GET', `/v1/accounts/${a.id}`)).json().status, 'blocked')
    assert.equal(
      (await eventsOf(t, tenant.organizationId, 'account.unblocked')).filter(
        (e) => e.object.id === a.id,
      ).length,
      0,
    )
    assert.equal((await t.api(token, 'POST', `/v1/accounts/${a.id}/unblock`)).json().status, 'open')
  })

  test('an unknown block reason is invalid_parameter; unknown fields are unknown_parameter', async () => {
    const a = await openAccount(t, token, tenant.programs.full, cardholder.id)
    const error = expectError(
      await t.api(token, 'POST', `/v1/accounts/${a.id}/block`, { reason: 'bored' }),
      400,
      'invalid_parameter',
      'reason',
    )
    assert.match(error.message, /fraud, lost, requested, other/)
    expectError(
      await t.api(token, 'POST', `/v1/accounts/${a.id}/block`, { why: 'x' }),
      400,
      'unknown_parameter',
      'why',
    )
  })

  test('holds on a blocked account stay, and still release and capture', async () => {
    const a = await openAccount(t, token, tenant.programs.full, cardholder.id)
    await t.api(token, 'POST', `/v1/accounts/${a.id}/credit`, { amount: 1000 })
    const now = () => t.clock.now()
    const h1 = await withTx(t.deps.db, (trx) =>
      placeHold(trx, { accountId: a.id, amount: 300, currency: 'USD', sourceId: 'auth_1' }, now()),
    )
    const h2 = await withTx(t.deps.db, (trx) =>
      placeHold(trx, { accountId: a.id, amount: 200, currency: 'USD', sourceId: 'auth_2' }, now()),
    )
    assert.ok(h1.approved && h2.approved)
    const blocked = (await t.api(token, 'POST', `/v1/accounts/${a.id}/block`)).json()
    assert.deepEqual(
      [blocked.ledger_balance, blocked.held_balance, blocked.available_balance],
      [1000, 500, 500],
    )
    const refused = await withTx(t.deps.db, (trx) =>
      placeHold(trx, { accountId: a.id, amount: 1, currency: 'USD' }, now()),
    )
    assert.deepEqual(refused.approved ? null : refused.reason, 'account_blocked')
    await withTx(t.deps.db, (trx) => releaseHold(trx, h1.hold.id, now()))
    await withTx(t.deps.db, (trx) => captureHold(trx, h2.hold.id, 200, now()))
    const after = (await t.api(token, 'GET', `/v1/accounts/${a.id}`)).json()
    assert.deepEqual(
      [after.status, after.ledger_balance, after.held_balance, after.available_balance],
      ['blocked', 800, 0, 800],
    )
  })
})

describe('listing and reading accounts', () => {
  test('accounts list newest first and filter by cardholder and program', async () => {
    const holder = await approvedCardholder(t, token)
    const a1 = await openAccount(t, token, tenant.programs.full, holder.id)
    const a2 = await openAccount(t, token, tenant.programs.full, holder.id, 'EUR')
    const a3 = await openAccount(t, token, tenant.programs.basic, holder.id)
    const byHolder = (await t.api(token, 'GET', `/v1/accounts?cardholder_id=${holder.id}`)).json()
    assert.equal(byHolder.url, '/v1/accounts')
    assert.deepEqual(
      byHolder.data.map((x: any) => x.id),
      [a3.id, a2.id, a1.id],
    )
    const full = (
      await t.api(
        token,
        'GET',
        `/v1/accounts?cardholder_id=${holder.id}&program_id=${tenant.programs.full.id}`,
      )
    ).json()
    assert.deepEqual(
      full.data.map((x: any) => x.id),
      [a2.id, a1.id],
    )
    const page = (
      await t.api(token, 'GET', `/v1/accounts?cardholder_id=${holder.id}&limit=2`)
    ).json()
    assert.equal(page.has_more, true)
    const rest = (
      await t.api(
        token,
        'GET',
        `/v1/accounts?cardholder_id=${holder.id}&limit=2&starting_after=${page.next_cursor}`,
      )
    ).json()
    assert.deepEqual(
      rest.data.map((x: any) => x.id),
      [a1.id],
    )
    expectError(
      await t.api(token, 'GET', '/v1/accounts?limit=101'),
      400,
      'invalid_parameter',
      'limit',
    )
  })

  test("an account's cards list is an empty page until cards exist; an unknown account is 404", async () => {
    const res = await t.api(token, 'GET', `/v1/accounts/${basicAccount.id}/cards`)
    assert.equal(res.statusCode, 200, res.body)
    const list = res.json()
    assert.equal(list.object, 'list')
    assert.equal(list.url, `/v1/accounts/${basicAccount.id}/cards`)
    assert.ok(Array.isArray(list.data))
    expectError(
      await t.api(token, 'GET', '/v1/accounts/acct_01ARZ3NDEKTSV4RRFFQ69G5FAV/cards'),
      404,
      'account_not_found',
    )
  })

  test("an account of the organization's other environment answers environment_mismatch", async () => {
    const prod = await createTenant(t, {
      environment: 'production',
      organizationId: tenant.organizationId,
    })
    expectError(
      await t.api(await prod.token(), 'GET', `/v1/accounts/${basicAccount.id}`),
      403,
      'environment_mismatch',
    )
  })
})

describe('address changes', () => {
  test('a cardholder with an account on an address_change_requires_kyc program is refused an address PATCH', async () => {
    const holder = await approvedCardholder(t, token)
    const address = {
      line1: '2 Side St',
      city: 'Shelbyville',
      postal_code: '54321',
      country: 'USA',
    }
    assert.equal(
      (await t.api(token, 'PATCH', `/v1/cardholders/${holder.id}`, { address })).statusCode,
      200,
    )
    await openAccount(t, token, tenant.programs.full, holder.id)
    assert.equal(
      (
        await t.api(token, 'PATCH', `/v1/cardholders/${holder.id}`, {
          address: { ...address, line1: '3 Side St' },
        })
      ).statusCode,
      200,
    )
    await openAccount(t, token, tenant.programs.basic, holder.id)
    expectError(
      await t.api(token, 'PATCH', `/v1/cardholders/${holder.id}`, {
        address: { ...address, line1: '4 Side St' },
      }),
      422,
      'address_change_requires_kyc',
    )
    assert.equal(
      (await t.api(token, 'PATCH', `/v1/cardholders/${holder.id}`, { first_name: 'Augusta' }))
        .statusCode,
      200,
    )
  })

  test('a cardholder without an account on such a program may change the address by PATCH', async () => {
    const holder = await approvedCardholder(t, token, { status: 'none' })
    const res = await t.api(token, 'PATCH', `/v1/cardholders/${holder.id}`, {
      address: { line1: '9 Elm St', city: 'Ogdenville', postal_code: '11111', country: 'USA' },
    })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().address.line1, '9 Elm St')
  })
})
