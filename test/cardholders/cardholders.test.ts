import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ADDRESS_CHANGE_GUARD, CARDHOLDER_CARDS } from '../../src/modules/cardholders/index.js'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import {
  cardholderBody,
  createCardholder,
  eventsOf,
  expectError,
  withoutRequestId,
} from './support.js'

let t: TestApp
let a: TestClient
let b: TestClient
let token: string
let otherToken: string

before(async () => {
  t = await startTestApp()
  a = await createTenant(t)
  b = await createTenant(t)
  token = await a.token()
  otherToken = await b.token()
})
after(async () => {
  await t.close()
})

describe('create', () => {
  test('a new cardholder answers 201 with every field, the identity document withheld', async () => {
    const body = cardholderBody({
      address: {
        line1: '1 Main St',
        line2: 'Apt 4',
        city: 'Springfield',
        state: 'IL',
        postal_code: '62701',
        country: 'usa',
      },
      identity_document: { type: 'passport', number: 'X1234567' },
      metadata: { crm_id: '42' },
    })
    const res = await t.api(token, 'POST', '/v1/cardholders', body)
    assert.equal(res.statusCode, 201, res.body)
    const ch = res.json()
    assert.match(ch.id, /^chd_[0-9A-Z]{26}$/)
    assert.equal(ch.object, 'cardholder')
    assert.equal(ch.type, 'individual')
    assert.equal(ch.first_name, 'Ada')
    assert.equal(ch.last_name, 'Lovelace')
    assert.equal(ch.email, body.email)
    assert.equal(ch.phone_number, body.phone_number)
    assert.equal(ch.reference, body.reference)
    assert.deepEqual(ch.address, {
      line1: '1 Main St',
      line2: 'Apt 4',
      city: 'Springfield',
      state: 'IL',
      postal_code: '62701',
      country: 'USA',
    })
    assert.equal(ch.has_identity_document, true)
    assert.equal(ch.identity_document, undefined)
    assert.deepEqual(ch.metadata, { crm_id: '42' })
    assert.equal(ch.kyc_status, 'not_started')
    assert.match(ch.created_at, /Z$/)
    assert.equal(ch.updated_at, ch.created_at)
    assert.ok(!res.body.includes('X1234567'))
  })

  test('only type, first_name, last_name and email are required; absent optional fields are null', async () => {
    const ch = await createCardholder(t, token, {
      phone_number: undefined,
      reference: undefined,
      address: undefined,
    })
    assert.equal(ch.phone_number, null)
    assert.equal(ch.reference, null)
    assert.equal(ch.address, null)
    assert.equal(ch.has_identity_document, false)
    assert.deepEqual(ch.metadata, {})
  })

  test('the identity document is stored encrypted', async () => {
    const ch = await createCardholder(t, token, {
      identity_document: { type: 'national_id', number: 'NATID-998877' },
    })
    const row = await t.deps.db
      .selectFrom('cardholders')
      .selectAll()
      .where('id', '=', ch.id)
      .executeTakeFirstOrThrow()
    assert.ok(row.identity_document_sealed)
    assert.ok(!JSON.stringify(row).includes('NATID-998877'))
    assert.ok(!JSON.stringify(row).includes('national_id'))
  })

  test('cardholder.created carries the full REST object', async () => {
    const ch = await createCardholder(t, token)
    const events = await eventsOf(t, a.organizationId, 'cardholder.created')
    const event = events.find((e) => e.object.id === ch.id)
    assert.ok(event)
    assert.deepEqual(event.object, ch)
  })

  test('type business answers invalid_parameter saying business is not supported', async () => {
    const error = expectError(
      await t.api(token, 'POST', '/v1/cardholders', cardholderBody({ type: 'business' })),
      400,
      'invalid_parameter',
      'type',
    )
    assert.match(error.message, /business/i)
    expectError(
      await t.api(token, 'POST', '/v1/cardholders', cardholderBody({ type: 'company' })),
      400,
      'invalid_parameter',
      'type',
    )
  })

  test('type business beside other failing fields answers one errors entry per field, business first', async () => {
    const res = await t.api(token, 'POST', '/v1/cardholders', {
      type: 'business',
      first_name: 5,
      last_name: 'B',
      email: 'nope',
    })
    const error = expectError(res, 400, 'invalid_parameter', 'type')
    assert.deepEqual(
      error.errors.map((e: { param: string }) => e.param),
      ['type', 'first_name', 'email'],
    )
    assert.match(error.errors[0].message, /business/i)
    const missing = expectError(
      await t.api(token, 'POST', '/v1/cardholders', {
        type: 'business',
        first_name: 'A',
        email: 'a@example.com',
      }),
      400,
      'invalid_parameter',
    )
    assert.deepEqual(
      missing.errors.map((e: { code: string; param: string }) => [e.code, e.param]).sort(),
      [
        ['invalid_parameter', 'type'],
        ['missing_parameter', 'last_name'],
      ],
    )
    assert.match(
      missing.errors.find((e: { param: string }) => e.param === 'type').message,
      /business/i,
    )
  })

  test('missing required fields answer missing_parameter naming the field', async () => {
    for (const field of ['type', 'first_name', 'last_name', 'email']) {
      expectError(
        await t.api(token, 'POST', '/v1/cardholders', cardholderBody({ [field]: undefined })),
        400,
        'missing_parameter',
        field,
      )
    }
    expectError(
      await t.api(
        token,
        'POST',
        '/v1/cardholders',
        cardholderBody({ address: { line1: '1 Main St', city: 'X', country: 'USA' } }),
      ),
      400,
      'missing_parameter',
      'address.postal_code',
    )
  })

  test('unknown fields answer unknown_parameter, also inside address', async () => {
    expectError(
      await t.api(token, 'POST', '/v1/cardholders', cardholderBody({ nickname: 'ada' })),
      400,
      'unknown_parameter',
      'nickname',
    )
    expectError(
      await t.api(
        token,
        'POST',
        '/v1/cardholders',
        cardholderBody({
          address: { line1: 'a', city: 'b', postal_code: 'c', country: 'USA', floor: '2' },
        }),
      ),
      400,
      'unknown_parameter',
      'address.floor',
    )
  })

  test('malformed values answer invalid_parameter', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ email: 'not-an-email' }, 'email'],
      [{ phone_number: '0415 555' }, 'phone_number'],
      [{ reference: 'r'.repeat(129) }, 'reference'],
      [{ first_name: '' }, 'first_name'],
      [{ address: { line1: 'a', city: 'b', postal_code: 'c', country: 'US' } }, 'address.country'],
      [{ address: { line1: 'a', city: 'b', postal_code: 'c', country: 'ZZZ' } }, 'address.country'],
      [{ identity_document: { type: 'library_card', number: '1' } }, 'identity_document.type'],
      [{ metadata: { k: 'v'.repeat(501) } }, 'metadata.k'],
      [
        { metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) },
        'metadata',
      ],
      [{ metadata: { ['k'.repeat(41)]: 'v' } }, 'metadata'],
    ]
    for (const [overrides, param] of cases) {
      expectError(
        await t.api(token, 'POST', '/v1/cardholders', cardholderBody(overrides)),
        400,
        'invalid_parameter',
        param,
      )
    }
  })

  test('country fields take ISO 3166-1 alpha-3 codes only, in either case', async () => {
    const bad = expectError(
      await t.api(
        token,
        'POST',
        '/v1/cardholders',
        cardholderBody({ address: { line1: 'a', city: 'b', postal_code: 'c', country: 'XYZ' } }),
      ),
      400,
      'invalid_parameter',
      'address.country',
    )
    assert.match(bad.message, /ISO 3166-1/)
    const lower = await t.api(
      token,
      'POST',
      '/v1/cardholders',
      cardholderBody({ address: { line1: 'a', city: 'b', postal_code: 'c', country: 'prt' } }),
    )
    assert.equal(lower.statusCode, 201, lower.body)
    assert.equal(lower.json().address.country, 'PRT')
  })

  test('a body over 1 MiB answers 413 request_too_large', async () => {
    const res = await t.api(
      token,
      'POST',
      '/v1/cardholders',
      cardholderBody({ first_name: 'x'.repeat(1024 * 1024 + 10) }),
    )
    expectError(res, 413, 'request_too_large')
  })

  test('a token without cardholders:write answers insufficient_scope', async () => {
    const readOnly = await a.token('cardholders:read')
    expectError(
      await t.api(readOnly, 'POST', '/v1/cardholders', cardholderBody()),
      403,
      'insufficient_scope',
    )
    const writeOnly = await a.token('cardholders:write')
    expectError(await t.api(writeOnly, 'GET', '/v1/cardholders'), 403, 'insufficient_scope')
  })
})

describe('uniqueness', () => {
  test('an email already used in the organization, in any case, answers 409 naming email', async () => {
    const ch = await createCardholder(t, token, { email: 'Grace.Hopper@Example.com' })
    const res = await t.api(
      token,
      'POST',
      '/v1/cardholders',
      cardholderBody({ email: 'grace.hopper@example.COM' }),
    )
    expectError(res, 409, 'cardholder_already_exists', 'email')
    assert.ok(ch.id)
  })

  test('a phone number already used answers 409 naming phone_number', async () => {
    await createCardholder(t, token, { phone_number: '+442071838750' })
    expectError(
      await t.api(
        token,
        'POST',
        '/v1/cardholders',
        cardholderBody({ phone_number: '+442071838750' }),
      ),
      409,
      'cardholder_already_exists',
      'phone_number',
    )
  })

  test('the same email and phone are free in another organization and in the other environment', async () => {
    const body = cardholderBody()
    assert.equal((await t.api(token, 'POST', '/v1/cardholders', body)).statusCode, 201)
    assert.equal((await t.api(otherToken, 'POST', '/v1/cardholders', body)).statusCode, 201)
    const prod = await createTenant(t, {
      organizationId: a.organizationId,
      environment: 'production',
    })
    assert.equal((await t.api(await prod.token(), 'POST', '/v1/cardholders', body)).statusCode, 201)
  })

  test('parallel creates with one email: exactly one succeeds, the others answer 409', async () => {
    const email = `race.${Date.now()}@example.com`
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        t.api(token, 'POST', '/v1/cardholders', cardholderBody({ email, phone_number: undefined })),
      ),
    )
    assert.deepEqual(
      results.map((r) => r.statusCode).sort(),
      [201, 409, 409, 409, 409, 409, 409, 409],
    )
    for (const r of results.filter((x) => x.statusCode === 409))
      assert.equal(r.json().error.param, 'email')
    const list = await t.api(token, 'GET', '/v1/cardholders?limit=100')
    assert.equal(list.json().data.filter((c: any) => c.email === email).length, 1)
  })

  test('parallel creates with one phone number: exactly one succeeds', async () => {
    const phone = '+33612345678'
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        t.api(token, 'POST', '/v1/cardholders', cardholderBody({ phone_number: phone })),
      ),
    )
    assert.equal(results.filter((r) => r.statusCode === 201).length, 1)
    for (const r of results.filter((x) => x.statusCode !== 201))
      expectError(r, 409, 'cardholder_already_exists', 'phone_number')
  })
})

describe('retrieve and list', () => {
  test('retrieve answers the cardholder', async () => {
    const ch = await createCardholder(t, token)
    const res = await t.api(token, 'GET', `/v1/cardholders/${ch.id}`)
    assert.equal(res.statusCode, 200)
    assert.deepEqual(res.json(), ch)
  })

  test("another organization's cardholder answers exactly like a missing one", async () => {
    const ch = await createCardholder(t, token)
    const missingId = `chd_${'0'.repeat(26)}`
    for (const [method, suffix, body] of [
      ['GET', '', undefined],
      ['PATCH', '', { first_name: 'X' }],
      ['GET', '/cards', undefined],
      ['GET', '/kyc', undefined],
    ] as const) {
      const foreign = await t.api(otherToken, method, `/v1/cardholders/${ch.id}${suffix}`, body)
      const missing = await t.api(otherToken, method, `/v1/cardholders/${missingId}${suffix}`, body)
      expectError(foreign, 404, 'cardholder_not_found')
      assert.deepEqual(withoutRequestId(foreign), withoutRequestId(missing))
      assert.deepEqual(Object.keys(foreign.headers).sort(), Object.keys(missing.headers).sort())
    }
    expectError(await t.api(token, 'GET', '/v1/cardholders/not-an-id'), 404, 'cardholder_not_found')
  })

  test('a production token of the same organization answers environment_mismatch', async () => {
    const ch = await createCardholder(t, token)
    const prod = await createTenant(t, {
      organizationId: a.organizationId,
      environment: 'production',
    })
    expectError(
      await t.api(await prod.token(), 'GET', `/v1/cardholders/${ch.id}`),
      403,
      'environment_mismatch',
    )
  })

  test("the list is newest first, paginates, and holds only the caller's cardholders", async () => {
    const tenant = await createTenant(t)
    const tk = await tenant.token()
    const made = []
    for (let i = 0; i < 5; i++) made.push(await createCardholder(t, tk))
    const first = (await t.api(tk, 'GET', '/v1/cardholders?limit=3')).json()
    assert.equal(first.object, 'list')
    assert.equal(first.url, '/v1/cardholders')
    assert.deepEqual(
      first.data.map((c: any) => c.id),
      made
        .slice(2)
        .reverse()
        .map((c) => c.id),
    )
    assert.equal(first.has_more, true)
    const second = (
      await t.api(
        tk,
        'GET',
        `/v1/cardholders?limit=3&starting_after=${encodeURIComponent(first.next_cursor)}`,
      )
    ).json()
    assert.deepEqual(
      second.data.map((c: any) => c.id),
      made
        .slice(0, 2)
        .reverse()
        .map((c) => c.id),
    )
    assert.equal(second.has_more, false)
    assert.equal(second.next_cursor, null)
  })

  test('the list filters by reference and kyc_status', async () => {
    const ch = await createCardholder(t, token, { reference: 'filter-me' })
    const byRef = (await t.api(token, 'GET', '/v1/cardholders?reference=filter-me')).json()
    assert.deepEqual(
      byRef.data.map((c: any) => c.id),
      [ch.id],
    )
    const approved = (await t.api(token, 'GET', '/v1/cardholders?kyc_status=approved')).json()
    assert.equal(approved.data.length, 0)
    const notStarted = (
      await t.api(token, 'GET', '/v1/cardholders?kyc_status=not_started&limit=100')
    ).json()
    assert.ok(notStarted.data.some((c: any) => c.id === ch.id))
    expectError(
      await t.api(token, 'GET', '/v1/cardholders?kyc_status=done'),
      400,
      'invalid_parameter',
      'kyc_status',
    )
    expectError(
      await t.api(token, 'GET', `/v1/cardholders?reference=${'r'.repeat(129)}`),
      400,
      'invalid_parameter',
      'reference',
    )
    expectError(
      await t.api(token, 'GET', '/v1/cardholders?email=x'),
      400,
      'unknown_parameter',
      'email',
    )
    expectError(
      await t.api(token, 'GET', '/v1/cardholders?limit=101'),
      400,
      'invalid_parameter',
      'limit',
    )
  })

  test('a new cardholder starts pending when every program of the organization starts verification itself', async () => {
    const org = await t.operator('POST', '/operator/v1/organizations', { name: 'Basic only' })
    await t.operator('POST', '/operator/v1/programs', {
      organization_id: org.id,
      environment: 'sandbox',
      name: 'Basic',
      processor: 'sim_basic',
      currencies: ['USD'],
    })
    const tenant = await createTenant(t, { organizationId: org.id })
    const ch = await createCardholder(t, await tenant.token())
    assert.equal(ch.kyc_status, 'pending')
  })
})

describe('update', () => {
  test('only supplied fields change, and cardholder.updated carries the full object', async () => {
    const ch = await createCardholder(t, token, { metadata: { a: '1', b: '2' } })
    t.clock.advance(1000)
    const res = await t.api(token, 'PATCH', `/v1/cardholders/${ch.id}`, {
      first_name: 'Augusta',
      metadata: { b: null, c: '3' },
    })
    assert.equal(res.statusCode, 200, res.body)
    const updated = res.json()
    assert.equal(updated.first_name, 'Augusta')
    assert.equal(updated.last_name, ch.last_name)
    assert.equal(updated.email, ch.email)
    assert.deepEqual(updated.address, ch.address)
    assert.deepEqual(updated.metadata, { a: '1', c: '3' })
    assert.ok(updated.updated_at > ch.updated_at)
    const events = await eventsOf(t, a.organizationId, 'cardholder.updated')
    assert.deepEqual(events.at(-1)?.object, updated)
  })

  test('every updatable field can change; phone_number and reference can be removed with null', async () => {
    const ch = await createCardholder(t, token)
    const patch = {
      last_name: 'Byron',
      email: `new.${ch.id}@example.com`,
      phone_number: null,
      reference: null,
      address: { line1: '2 Side St', city: 'Shelbyville', postal_code: '54321', country: 'GBR' },
      identity_document: { type: 'driving_licence', number: 'DL-1' },
    }
    const res = await t.api(token, 'PATCH', `/v1/cardholders/${ch.id}`, patch)
    assert.equal(res.statusCode, 200, res.body)
    const u = res.json()
    assert.equal(u.last_name, 'Byron')
    assert.equal(u.email, patch.email)
    assert.equal(u.phone_number, null)
    assert.equal(u.reference, null)
    assert.deepEqual(u.address, {
      line1: '2 Side St',
      line2: null,
      city: 'Shelbyville',
      state: null,
      postal_code: '54321',
      country: 'GBR',
    })
    assert.equal(u.has_identity_document, true)
  })

  test('an address as returned (null line2 and state) can be sent back; null clears an optional part', async () => {
    const ch = await createCardholder(t, token, {
      address: {
        line1: '1 Main St',
        line2: 'Apt 4',
        city: 'Springfield',
        state: 'IL',
        postal_code: '12345',
        country: 'USA',
      },
    })
    const same = await t.api(token, 'PATCH', `/v1/cardholders/${ch.id}`, { address: ch.address })
    assert.equal(same.statusCode, 200, same.body)
    assert.deepEqual(same.json(), ch)
    const cleared = await t.api(token, 'PATCH', `/v1/cardholders/${ch.id}`, {
      address: { ...ch.address, line2: null, state: null },
    })
    assert.equal(cleared.statusCode, 200, cleared.body)
    assert.deepEqual(cleared.json().address, { ...ch.address, line2: null, state: null })
    const created = await t.api(
      token,
      'POST',
      '/v1/cardholders',
      cardholderBody({ address: cleared.json().address }),
    )
    assert.equal(created.statusCode, 201, created.body)
    assert.deepEqual(created.json().address, cleared.json().address)
  })

  test('a PATCH that changes nothing emits no event', async () => {
    const ch = await createCardholder(t, token)
    const before = (await eventsOf(t, a.organizationId, 'cardholder.updated')).length
    const res = await t.api(token, 'PATCH', `/v1/cardholders/${ch.id}`, {
      first_name: ch.first_name,
    })
    assert.equal(res.statusCode, 200)
    assert.deepEqual(res.json(), ch)
    assert.equal((await eventsOf(t, a.organizationId, 'cardholder.updated')).length, before)
  })

  test('changing to an email or phone of another cardholder answers 409', async () => {
    const one = await createCardholder(t, token)
    const two = await createCardholder(t, token)
    expectError(
      await t.api(token, 'PATCH', `/v1/cardholders/${two.id}`, { email: one.email.toUpperCase() }),
      409,
      'cardholder_already_exists',
      'email',
    )
    expectError(
      await t.api(token, 'PATCH', `/v1/cardholders/${two.id}`, { phone_number: one.phone_number }),
      409,
      'cardholder_already_exists',
      'phone_number',
    )
    assert.equal(
      (await t.api(token, 'PATCH', `/v1/cardholders/${one.id}`, { email: one.email.toUpperCase() }))
        .statusCode,
      200,
    )
  })

  test('fields that are not updatable answer unknown_parameter', async () => {
    const ch = await createCardholder(t, token)
    expectError(
      await t.api(token, 'PATCH', `/v1/cardholders/${ch.id}`, { type: 'individual' }),
      400,
      'unknown_parameter',
      'type',
    )
    expectError(
      await t.api(token, 'PATCH', `/v1/cardholders/${ch.id}`, { kyc_status: 'approved' }),
      400,
      'unknown_parameter',
      'kyc_status',
    )
  })

  test('metadata may not grow beyond 20 keys', async () => {
    const ch = await createCardholder(t, token, {
      metadata: Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`k${i}`, 'v'])),
    })
    const more = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`n${i}`, 'v']))
    expectError(
      await t.api(token, 'PATCH', `/v1/cardholders/${ch.id}`, { metadata: more }),
      400,
      'invalid_parameter',
      'metadata',
    )
  })

  test('an address PATCH on an address_change_requires_kyc program answers 422; other fields still change', async () => {
    const ch = await createCardholder(t, token)
    const restore = t.deps.hooks.replace(
      ADDRESS_CHANGE_GUARD,
      async (_deps, row) => row.id === ch.id,
    )
    try {
      const newAddress = {
        line1: '9 Elm St',
        city: 'Ogdenville',
        postal_code: '999',
        country: 'USA',
      }
      expectError(
        await t.api(token, 'PATCH', `/v1/cardholders/${ch.id}`, { address: newAddress }),
        422,
        'address_change_requires_kyc',
        'address',
      )
      const same = await t.api(token, 'PATCH', `/v1/cardholders/${ch.id}`, {
        address: { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'USA' },
        last_name: 'K',
      })
      assert.equal(same.statusCode, 200, same.body)
      assert.deepEqual(same.json().address, ch.address)
      assert.equal((await t.api(token, 'GET', `/v1/cardholders/${ch.id}`)).json().last_name, 'K')
    } finally {
      restore()
    }
  })

  test('without an account on such a program the address changes by PATCH', async () => {
    const ch = await createCardholder(t, token)
    const res = await t.api(token, 'PATCH', `/v1/cardholders/${ch.id}`, {
      address: { line1: '5 Oak St', city: 'Capital City', postal_code: '1', country: 'USA' },
    })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().address.line1, '5 Oak St')
  })
})

describe('cards of a cardholder', () => {
  test('answers an empty list until cards exist', async () => {
    const ch = await createCardholder(t, token)
    const res = await t.api(token, 'GET', `/v1/cardholders/${ch.id}/cards`)
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), {
      object: 'list',
      url: `/v1/cardholders/${ch.id}/cards`,
      data: [],
      has_more: false,
      next_cursor: null,
    })
    expectError(
      await t.api(token, 'GET', `/v1/cardholders/${ch.id}/cards?limit=0`),
      400,
      'invalid_parameter',
      'limit',
    )
  })

  test('the cards module plugs its listing in', async () => {
    const ch = await createCardholder(t, token)
    const restore = t.deps.hooks.replace(CARDHOLDER_CARDS, async (_deps, _ctx, row) => ({
      object: 'list',
      url: `/v1/cardholders/${row.id}/cards`,
      data: [{ id: 'card_x', object: 'card', cardholder_id: row.id }],
      has_more: false,
      next_cursor: null,
    }))
    try {
      const res = await t.api(token, 'GET', `/v1/cardholders/${ch.id}/cards`)
      assert.deepEqual(res.json().data, [{ id: 'card_x', object: 'card', cardholder_id: ch.id }])
    } finally {
      restore()
    }
  })
})
