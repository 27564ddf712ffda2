import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { JobRunner } from '../../src/jobs/runner.js'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { withApprovedCardholder } from '../helpers/tenant.js'
import { approvedCardholder, eventsOf, expectError, openAccount } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
let cardholder: any

withApprovedCardholder((fixture) => ({ t, tenant, token, cardholder } = fixture))

describe('opening an account', () => {
  test('a sim_full account is created open, empty and provisioned at once, with every field', async () => {
    const res = await t.api(token, 'POST', '/v1/accounts', {
      program_id: tenant.programs.full.id,
      cardholder_id: cardholder.id,
      currency: 'usd',
      metadata: { team: 'ops' },
    })
    assert.equal(res.statusCode, 201, res.body)
    const a = res.json()
    assert.match(a.id, /^acct_[0-9A-Z]{26}$/)
    assert.deepEqual(
      { ...a, id: undefined, created_at: undefined, updated_at: undefined },
      {
        id: undefined,
        object: 'account',
        program_id: tenant.programs.full.id,
        cardholder_id: cardholder.id,
        currency: 'USD',
        status: 'open',
        ledger_balance: 0,
        held_balance: 0,
        available_balance: 0,
        has_upstream_reference: true,
        metadata: { team: 'ops' },
        created_at: undefined,
        updated_at: undefined,
      },
    )
    const types = (await eventsOf(t, tenant.organizationId))
      .filter((e) => e.object.id === a.id)
      .map((e) => e.type)
    assert.deepEqual(types, ['account.created', 'account.provisioned'])
  })

  test('a sim_basic account has no upstream reference until the processor finishes, then account.provisioned', async () => {
    const a = await openAccount(t, token, tenant.programs.basic, cardholder.id)
    assert.equal(a.has_upstream_reference, false)
    await new JobRunner(t.deps, t.jobs).drain()
    const again = await t.api(token, 'GET', `/v1/accounts/${a.id}`)
    assert.equal(again.json().has_upstream_reference, true)
    const provisioned = (await eventsOf(t, tenant.organizationId, 'account.provisioned')).filter(
      (e) => e.object.id === a.id,
    )
    assert.equal(provisioned.length, 1)
    assert.equal(provisioned[0].object.has_upstream_reference, true)
  })

  test('program_id is always required', async () => {
    const res = await t.api(token, 'POST', '/v1/accounts', {
      cardholder_id: cardholder.id,
      currency: 'USD',
    })
    expectError(res, 400, 'missing_parameter', 'program_id')
  })

  test("another organization's program and a program that does not exist answer the same 400 invalid_parameter", async () => {
    const other = await createTenant(t)
    const foreign = await t.api(token, 'POST', '/v1/accounts', {
      program_id: other.programs.full.id,
      cardholder_id: cardholder.id,
      currency: 'USD',
    })
    const missing = await t.api(token, 'POST', '/v1/accounts', {
      program_id: 'prog_01ARZ3NDEKTSV4RRFFQ69G5FAV',
      cardholder_id: cardholder.id,
      currency: 'USD',
    })
    const a = expectError(foreign, 400, 'invalid_parameter', 'program_id')
    const b = expectError(missing, 400, 'invalid_parameter', 'program_id')
    assert.equal(
      a.message.replace(other.programs.full.id, 'X'),
      b.message.replace('prog_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'X'),
    )
  })

  test('a currency the program does not hold is invalid_parameter on currency', async () => {
    const res = await t.api(token, 'POST', '/v1/accounts', {
      program_id: tenant.programs.basic.id,
      cardholder_id: cardholder.id,
      currency: 'EUR',
    })
    expectError(res, 400, 'invalid_parameter', 'currency')
  })

  test('an unknown cardholder is 404 cardholder_not_found', async () => {
    const res = await t.api(token, 'POST', '/v1/accounts', {
      program_id: tenant.programs.full.id,
      cardholder_id: 'chd_01ARZ3NDEKTSV4RRFFQ69G5FAV',
      currency: 'USD',
    })
    expectError(res, 404, 'cardholder_not_found')
  })

  test('a cardholder without approved KYC is refused with kyc_not_approved', async () => {
    const pending = await approvedCardholder(t, token, { status: 'none' })
    const res = await t.api(token, 'POST', '/v1/accounts', {
      program_id: tenant.programs.full.id,
      cardholder_id: pending.id,
      currency: 'USD',
    })
    expectError(res, 422, 'kyc_not_approved')
  })

  test('sim_basic refuses an approved cardholder whose attestation carries no identity (kyc_identity_required); sim_full accepts it', async () => {
    const plain = await approvedCardholder(t, token, { identity: false })
    expectError(
      await t.api(token, 'POST', '/v1/accounts', {
        program_id: tenant.programs.basic.id,
        cardholder_id: plain.id,
        currency: 'USD',
      }),
      422,
      'kyc_identity_required',
    )
    await openAccount(t, token, tenant.programs.full, plain.id)
  })

  test('an organization with no program in this environment gets program_not_provisioned', async () => {
    const org = await t.operator('POST', '/operator/v1/organizations', { name: 'No programs' })
    const bare = await createTenant(t, { organizationId: org.id })
    const res = await t.api(await bare.token(), 'POST', '/v1/accounts', {
      program_id: tenant.programs.full.id,
      cardholder_id: cardholder.id,
      currency: 'USD',
    })
    expectError(res, 422, 'program_not_provisioned')
  })

  test('an unknown field is refused with unknown_parameter', async () => {
    const res = await t.api(token, 'POST', '/v1/accounts', {
      program_id: tenant.programs.full.id,
      cardholder_id: cardholder.id,
      currency: 'USD',
      nickname: 'x',
    })
    expectError(res, 400, 'unknown_parameter', 'nickname')
  })

  test('metadata keys longer than 40 characters or empty are refused with invalid_parameter on metadata', async () => {
    for (const metadata of [{ ['k'.repeat(41)]: 'v' }, { '': 'v' }]) {
      const res = await t.api(token, 'POST', '/v1/accounts', {
        program_id: tenant.programs.full.id,
        cardholder_id: cardholder.id,
        currency: 'USD',
        metadata,
      })
      expectError(res, 400, 'invalid_parameter', 'metadata')
    }
    const ok = await t.api(token, 'POST', '/v1/accounts', {
      program_id: tenant.programs.full.id,
      cardholder_id: cardholder.id,
      currency: 'USD',
      metadata: { ['k'.repeat(40)]: 'v' },
    })
    assert.equal(ok.statusCode, 201, ok.body)
  })

  test('a token without accounts:write cannot open accounts', async () => {
    const readOnly = await tenant.token('accounts:read')
    const res = await t.api(readOnly, 'POST', '/v1/accounts', {
      program_id: tenant.programs.full.id,
      cardholder_id: cardholder.id,
      currency: 'USD',
    })
    expectError(res, 403, 'insufficient_scope')
  })
})

describe('processor failures', () => {
  test('an injected processor_unavailable answers 502 and leaves no account and no event behind', async () => {
    const fault = await t.api(token, 'POST', '/v1/simulate/processor_faults', {
      operation: 'create_account',
      error: 'processor_unavailable',
      count: 1,
    })
    assert.equal(fault.statusCode, 200, fault.body)
    assert.deepEqual(fault.json(), {
      object: 'processor_fault',
      operation: 'create_account',
      error: 'processor_unavailable',
      remaining: 1,
    })
    const before = (await t.api(token, 'GET', '/v1/accounts?limit=100')).json().data.length
    const eventsBefore = (await eventsOf(t, tenant.organizationId)).length
    const res = await t.api(token, 'POST', '/v1/accounts', {
      program_id: tenant.programs.full.id,
      cardholder_id: cardholder.id,
      currency: 'USD',
    })
    expectError(res, 502, 'processor_unavailable')
    assert.equal((await t.api(token, 'GET', '/v1/accounts?limit=100')).json().data.length, before)
    assert.equal((await eventsOf(t, tenant.organizationId)).length, eventsBefore)
    // The fault was for one call only: the retry succeeds.
    await openAccount(t, token, tenant.programs.full, cardholder.id)
  })

  test('processor_permission_denied is injected the same way and answers 502 processor_permission_denied', async () => {
    await t.api(token, 'POST', '/v1/simulate/processor_faults', {
      operation: 'create_account',
      error: 'processor_permission_denied',
      count: 2,
    })
    for (let i = 0; i < 2; i++) {
      expectError(
        await t.api(token, 'POST', '/v1/accounts', {
          program_id: tenant.programs.basic.id,
          cardholder_id: cardholder.id,
          currency: 'USD',
        }),
        502,
        'processor_permission_denied',
      )
    }
    await openAccount(t, token, tenant.programs.basic, cardholder.id)
  })

  test('faults are scoped to the organization that set them', async () => {
    const other = await createTenant(t)
    const otherToken = await other.token()
    const otherHolder = await approvedCardholder(t, otherToken)
    await t.api(token, 'POST', '/v1/simulate/processor_faults', {
      operation: 'create_account',
      error: 'processor_unavailable',
      count: 1,
    })
    await openAccount(t, otherToken, other.programs.full, otherHolder.id)
    await t.api(token, 'POST', '/v1/simulate/processor_faults', {
      operation: 'create_account',
      error: 'processor_unavailable',
      count: 0,
    })
  })

  test('the fault simulator answers 404 not_found in production', async () => {
    const prod = await createTenant(t, { environment: 'production' })
    const res = await t.api(await prod.token(), 'POST', '/v1/simulate/processor_faults', {
      operation: 'create_account',
      error: 'processor_unavailable',
      count: 1,
    })
    expectError(res, 404, 'not_found')
  })

  test('an unknown operation is refused with invalid_parameter', async () => {
    const res = await t.api(token, 'POST', '/v1/simulate/processor_faults', {
      operation: 'launch_rocket',
      error: 'processor_unavailable',
      count: 1,
    })
    const error = expectError(res, 400, 'invalid_parameter', 'operation')
    assert.match(error.message, /create_account, get_account, set_account_status, issue_card/)
    const badError = await t.api(token, 'POST', '/v1/simulate/processor_faults', {
      operation: 'create_account',
      error: 'teapot',
      count: 1,
    })
    assert.match(
      expectError(badError, 400, 'invalid_parameter', 'error').message,
      /processor_unavailable, processor_permission_denied/,
    )
  })
})
