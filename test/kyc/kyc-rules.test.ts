import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { JobRecord } from '../../src/jobs/queue.js'
import { ADDRESS_CHANGE_GUARD } from '../../src/modules/cardholders/index.js'
import { assertKycForProgram } from '../../src/modules/kyc/evidence.js'
import { KYC_EXPIRY_JOB } from '../../src/modules/kyc/expiry.js'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { createCardholder, eventsOf, expectError } from '../cardholders/support.js'
import { attestationBody, ctxOf, documentInput, IDENTITY } from './support.js'

const HOUR = 60 * 60 * 1000

let t: TestApp
let a: TestClient
let token: string

before(async () => {
  t = await startTestApp()
  a = await createTenant(t)
  token = await a.token()
})
after(async () => {
  await t.close()
})

/** Moves the clock and mints a new token (tokens live 15 minutes). */
async function advance(ms: number): Promise<void> {
  t.clock.advance(ms)
  token = await a.token()
}

const kyc = (id: string, body: unknown) => t.api(token, 'POST', `/v1/cardholders/${id}/kyc`, body)
const status = async (id: string) =>
  (await t.api(token, 'GET', `/v1/cardholders/${id}`)).json().kyc_status
/** Runs the KYC expiry jobs queued for one cardholder, as the worker would. */
async function runExpiryJobs(cardholderId: string): Promise<unknown[]> {
  const jobs = await t.deps.db
    .selectFrom('jobs')
    .selectAll()
    .where('type', '=', KYC_EXPIRY_JOB)
    .execute()
  const mine = jobs.filter(
    (j) =>
      (typeof j.payload === 'string' ? JSON.parse(j.payload) : j.payload).cardholder_id ===
      cardholderId,
  )
  const handler = t.jobs.handlers.get(KYC_EXPIRY_JOB)
  assert.ok(handler, 'the expiry job handler is registered')
  const outcomes = []
  for (const job of mine) {
    const payload = typeof job.payload === 'string' ? JSON.parse(job.payload) : job.payload
    outcomes.push(await handler(t.deps, { ...job, payload } as JobRecord))
  }
  return outcomes
}

describe('the KYC gate for accounts and cards', () => {
  const gate = (id: string, program: { identity_evidence_required: boolean }) =>
    assertKycForProgram(t.deps.db, ctxOf(a), t.deps.clock.now(), id, program)

  test('a cardholder whose kyc_status is not approved is refused with kyc_not_approved', async () => {
    const ch = await createCardholder(t, token)
    await assert.rejects(gate(ch.id, a.programs.full), {
      code: 'kyc_not_approved',
      param: 'cardholder_id',
    })
    for (const reported of ['pending', 'rejected']) {
      assert.equal((await kyc(ch.id, attestationBody(t, { status: reported }))).statusCode, 201)
      await assert.rejects(gate(ch.id, a.programs.full), { code: 'kyc_not_approved' })
    }
  })

  test('identity_evidence_required programs record an attestation without identity but refuse with kyc_identity_required', async () => {
    const ch = await createCardholder(t, token)
    assert.equal(a.programs.basic.identity_evidence_required, true)
    assert.equal((await kyc(ch.id, attestationBody(t))).statusCode, 201)
    assert.equal(await status(ch.id), 'approved')
    const row = await gate(ch.id, a.programs.full)
    assert.equal(row.id, ch.id)
    await assert.rejects(gate(ch.id, a.programs.basic), {
      code: 'kyc_identity_required',
      param: 'cardholder_id',
    })
    assert.equal(
      (await kyc(ch.id, attestationBody(t, { identity: IDENTITY, documents: [documentInput()] })))
        .statusCode,
      201,
    )
    assert.equal((await gate(ch.id, a.programs.basic)).id, ch.id)
  })

  test('identity evidence whose documents are no longer held no longer counts', async () => {
    const ch = await createCardholder(t, token)
    const att = (
      await kyc(ch.id, attestationBody(t, { identity: IDENTITY, documents: [documentInput()] }))
    ).json()
    await t.deps.db
      .updateTable('kyc_documents')
      .set({ ciphertext: null, wrapped_key: null })
      .where('attestation_id', '=', att.id)
      .execute()
    await assert.rejects(gate(ch.id, a.programs.basic), { code: 'kyc_identity_required' })
    assert.equal((await gate(ch.id, a.programs.full)).id, ch.id)
  })

  test("another organization's cardholder is cardholder_not_found", async () => {
    const other = await createTenant(t)
    const ch = await createCardholder(t, await other.token())
    await assert.rejects(gate(ch.id, a.programs.full), {
      code: 'cardholder_not_found',
      param: 'cardholder_id',
    })
    await assert.rejects(gate('chd_nope', a.programs.full), { code: 'cardholder_not_found' })
  })
})

describe('expiry', () => {
  test('kyc_status reads expired as soon as the current attestation expires_at passes', async () => {
    const ch = await createCardholder(t, token)
    const expiresAt = new Date(t.clock.now().getTime() + HOUR)
    assert.equal(
      (await kyc(ch.id, attestationBody(t, { expires_at: expiresAt.toISOString() }))).statusCode,
      201,
    )
    assert.equal(await status(ch.id), 'approved')
    await assert.doesNotReject(
      assertKycForProgram(t.deps.db, ctxOf(a), t.deps.clock.now(), ch.id, a.programs.full),
    )
    await advance(HOUR + 1000)
    assert.equal(await status(ch.id), 'expired')
    const expired = (await t.api(token, 'GET', '/v1/cardholders?kyc_status=expired&limit=100'))
      .json()
      .data.map((c: any) => c.id)
    const approved = (await t.api(token, 'GET', '/v1/cardholders?kyc_status=approved&limit=100'))
      .json()
      .data.map((c: any) => c.id)
    assert.ok(expired.includes(ch.id))
    assert.ok(!approved.includes(ch.id))
    await assert.rejects(
      assertKycForProgram(t.deps.db, ctxOf(a), t.deps.clock.now(), ch.id, a.programs.full),
      { code: 'kyc_not_approved' },
    )
  })

  test('the expiry job announces cardholder.kyc_updated once, with kyc_status expired', async () => {
    const ch = await createCardholder(t, token)
    const expiresAt = new Date(t.clock.now().getTime() + HOUR)
    await kyc(ch.id, attestationBody(t, { expires_at: expiresAt.toISOString() }))
    const job = await t.deps.db
      .selectFrom('jobs')
      .selectAll()
      .where('type', '=', KYC_EXPIRY_JOB)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow()
    assert.equal(job.run_at.getTime(), expiresAt.getTime())
    const count = async () =>
      (await eventsOf(t, a.organizationId, 'cardholder.kyc_updated')).filter(
        (e) => e.object.id === ch.id,
      )
    // Picked up early: nothing is announced and the job asks to run again at expiry.
    assert.deepEqual(await runExpiryJobs(ch.id), [{ retryAt: expiresAt }])
    assert.equal((await count()).length, 1)
    await advance(HOUR)
    await runExpiryJobs(ch.id)
    await runExpiryJobs(ch.id)
    const events = await count()
    assert.equal(events.length, 2)
    assert.equal(events[1].object.kyc_status, 'expired')
  })

  test("a new attestation replaces an expired one, and the old one's expiry announces nothing", async () => {
    const ch = await createCardholder(t, token)
    await kyc(
      ch.id,
      attestationBody(t, { expires_at: new Date(t.clock.now().getTime() + HOUR).toISOString() }),
    )
    await advance(HOUR + 1)
    assert.equal(await status(ch.id), 'expired')
    await kyc(ch.id, attestationBody(t))
    assert.equal(await status(ch.id), 'approved')
    const before = (await eventsOf(t, a.organizationId, 'cardholder.kyc_updated')).length
    await runExpiryJobs(ch.id)
    assert.equal((await eventsOf(t, a.organizationId, 'cardholder.kyc_updated')).length, before)
  })

  test('an attestation reported with an expires_at already past is recorded as expired', async () => {
    const ch = await createCardholder(t, token)
    const now = t.clock.now().getTime()
    const res = await kyc(
      ch.id,
      attestationBody(t, {
        verified_at: new Date(now - 48 * HOUR).toISOString(),
        expires_at: new Date(now - HOUR).toISOString(),
      }),
    )
    assert.equal(res.statusCode, 201, res.body)
    assert.equal(await status(ch.id), 'expired')
  })
})

describe('address through KYC', () => {
  const moved = { line1: '10 Downing St', city: 'London', postal_code: 'SW1A 2AA', country: 'GBR' }

  test('on an address_change_requires_kyc program the address changes through an attestation', async () => {
    const ch = await createCardholder(t, token)
    const restore = t.deps.hooks.replace(
      ADDRESS_CHANGE_GUARD,
      async (_deps, row) => row.id === ch.id,
    )
    try {
      expectError(
        await t.api(token, 'PATCH', `/v1/cardholders/${ch.id}`, { address: moved }),
        422,
        'address_change_requires_kyc',
        'address',
      )
      const res = await kyc(ch.id, attestationBody(t, { address: moved, method: 'electronic' }))
      assert.equal(res.statusCode, 201, res.body)
      assert.deepEqual(res.json().address, { ...moved, line2: null, state: null })
      const now = (await t.api(token, 'GET', `/v1/cardholders/${ch.id}`)).json()
      assert.deepEqual(now.address, { ...moved, line2: null, state: null })
      const updated = (await eventsOf(t, a.organizationId, 'cardholder.updated')).filter(
        (e) => e.object.id === ch.id,
      )
      assert.deepEqual(updated.at(-1)?.object, now)
    } finally {
      restore()
    }
  })

  test('an account on sim_basic makes an address PATCH answer address_change_requires_kyc (end to end)', async () => {
    const ch = await createCardholder(t, token)
    assert.equal((await kyc(ch.id, attestationBody(t, { identity: IDENTITY }))).statusCode, 201)
    const opened = await t.api(token, 'POST', '/v1/accounts', {
      program_id: a.programs.basic.id,
      cardholder_id: ch.id,
      currency: 'USD',
    })
    assert.equal(opened.statusCode, 201, opened.body)
    expectError(
      await t.api(token, 'PATCH', `/v1/cardholders/${ch.id}`, { address: moved }),
      422,
      'address_change_requires_kyc',
      'address',
    )
    assert.equal(
      (await t.api(token, 'PATCH', `/v1/cardholders/${ch.id}`, { first_name: 'Still' })).statusCode,
      200,
    )
    assert.equal(
      (await kyc(ch.id, attestationBody(t, { identity: IDENTITY, address: moved }))).statusCode,
      201,
    )
    assert.equal(
      (await t.api(token, 'GET', `/v1/cardholders/${ch.id}`)).json().address.line1,
      moved.line1,
    )
  })

  test('a rejected attestation does not change the address', async () => {
    const ch = await createCardholder(t, token)
    assert.equal(
      (await kyc(ch.id, attestationBody(t, { status: 'rejected', address: moved }))).statusCode,
      201,
    )
    const now = (await t.api(token, 'GET', `/v1/cardholders/${ch.id}`)).json()
    assert.deepEqual(now.address, ch.address)
    assert.equal(now.kyc_status, 'rejected')
  })
})
