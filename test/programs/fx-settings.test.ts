import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { expectError } from '../helpers/api.js'
import { createTenant, OPERATOR_TOKEN, startTestApp, type TestApp } from '../helpers/app.js'

/** A program's foreign-exchange settings through the operator API, and how the program object shows them. */

let t: TestApp
let orgId: string

before(async () => {
  t = await startTestApp()
  orgId = (await t.operator('POST', '/operator/v1/organizations', { name: 'Wanderlust' })).id
})
after(() => t.close())

const op = (method: string, url: string, body?: unknown) =>
  t.app.inject({
    method: method as never,
    url,
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    ...(body !== undefined ? { payload: body as never } : {}),
  })

const base = () => ({
  organization_id: orgId,
  environment: 'sandbox',
  name: 'Travel',
  processor: 'sim_full',
  currencies: ['EUR'],
})

async function programCount(): Promise<number> {
  return (
    await t.deps.db
      .selectFrom('programs')
      .select('id')
      .where('organization_id', '=', orgId)
      .execute()
  ).length
}

describe('POST /operator/v1/programs', () => {
  test('without settings a program allows foreign spend, with no markup, included; created_at and updated_at agree', async () => {
    const res = await op('POST', '/operator/v1/programs', base())
    assert.equal(res.statusCode, 201, res.body)
    const p = res.json()
    assert.deepEqual([p.foreign_spend, p.fx_markup_bps, p.fx_fee], ['allowed', 0, 'included'])
    assert.equal(p.updated_at, p.created_at)
  })

  test('takes the three settings and shows them on the program, to the operator and to the organization', async () => {
    const p = (
      await op('POST', '/operator/v1/programs', {
        ...base(),
        name: 'Blocked abroad',
        foreign_spend: 'blocked',
        fx_markup_bps: 1000,
        fx_fee: 'separate',
      })
    ).json()
    assert.deepEqual([p.foreign_spend, p.fx_markup_bps, p.fx_fee], ['blocked', 1000, 'separate'])
    assert.deepEqual(await t.operator('GET', `/operator/v1/programs/${p.id}`), p)
    const tenant = await createTenant(t, { organizationId: orgId })
    const listed = (await t.api(await tenant.token(), 'GET', '/v1/programs'))
      .json()
      .data.find((x: any) => x.id === p.id)
    assert.deepEqual(listed, p, 'GET /v1/programs presents the same program')
  })

  test('refuses a setting out of its range or of another type, naming it, and creates nothing', async () => {
    const count = await programCount()
    const bad: [Record<string, unknown>, string][] = [
      [{ fx_markup_bps: 1001 }, 'fx_markup_bps'],
      [{ fx_markup_bps: -1 }, 'fx_markup_bps'],
      [{ fx_markup_bps: 2.5 }, 'fx_markup_bps'],
      [{ fx_markup_bps: '200' }, 'fx_markup_bps'],
      [{ foreign_spend: 'sometimes' }, 'foreign_spend'],
      [{ foreign_spend: true }, 'foreign_spend'],
      [{ fx_fee: 'hidden' }, 'fx_fee'],
      [{ fx_fee: null }, 'fx_fee'],
    ]
    for (const [fields, param] of bad)
      expectError(
        await op('POST', '/operator/v1/programs', { ...base(), ...fields }),
        400,
        'invalid_parameter',
        param,
      )
    assert.equal(await programCount(), count)
  })

  test('a currency the service does not know is 400 invalid_parameter naming it; known ones in either case are kept upper-cased', async () => {
    const count = await programCount()
    expectError(
      await op('POST', '/operator/v1/programs', { ...base(), currencies: ['USD', 'XXX'] }),
      400,
      'invalid_parameter',
      'currencies[1]',
    )
    expectError(
      await op('POST', '/operator/v1/programs', { ...base(), currencies: ['xau'] }),
      400,
      'invalid_parameter',
      'currencies[0]',
    )
    expectError(
      await op('POST', '/operator/v1/programs', { ...base(), currencies: ['EUR', 'HRK'] }),
      400,
      'invalid_parameter',
      'currencies[1]',
    )
    assert.equal(await programCount(), count)
    const p = (
      await op('POST', '/operator/v1/programs', {
        ...base(),
        currencies: ['jpy', 'BHD', 'kwd', 'JPY'],
      })
    ).json()
    assert.deepEqual(p.currencies, ['JPY', 'BHD', 'KWD'])
  })
})

describe('PATCH /operator/v1/programs/{id}', () => {
  test('changes the settings given and keeps the others; updated_at moves', async () => {
    const p = (await op('POST', '/operator/v1/programs', { ...base(), name: 'Before' })).json()
    t.clock.advance(5_000)
    const res = await op('PATCH', `/operator/v1/programs/${p.id}`, { fx_markup_bps: 150 })
    assert.equal(res.statusCode, 200, res.body)
    const changed = res.json()
    assert.deepEqual(
      { ...changed, updated_at: undefined },
      { ...p, fx_markup_bps: 150, updated_at: undefined },
    )
    assert.ok(Date.parse(changed.updated_at) >= Date.parse(p.updated_at) + 5_000)
    const again = (
      await op('PATCH', `/operator/v1/programs/${p.id}`, {
        name: 'After',
        foreign_spend: 'blocked',
        fx_fee: 'separate',
      })
    ).json()
    assert.deepEqual(
      [again.name, again.foreign_spend, again.fx_markup_bps, again.fx_fee],
      ['After', 'blocked', 150, 'separate'],
    )
    assert.deepEqual(await t.operator('GET', `/operator/v1/programs/${p.id}`), again)
    const same = await op('PATCH', `/operator/v1/programs/${p.id}`, {})
    assert.equal(same.statusCode, 200)
    assert.deepEqual(same.json(), again, 'an empty change changes nothing')
  })

  test('refuses bad values, fields it does not change, and an unknown program', async () => {
    const p = (await op('POST', '/operator/v1/programs', base())).json()
    expectError(
      await op('PATCH', `/operator/v1/programs/${p.id}`, { fx_markup_bps: 1001 }),
      400,
      'invalid_parameter',
      'fx_markup_bps',
    )
    expectError(
      await op('PATCH', `/operator/v1/programs/${p.id}`, { foreign_spend: 'never' }),
      400,
      'invalid_parameter',
      'foreign_spend',
    )
    expectError(
      await op('PATCH', `/operator/v1/programs/${p.id}`, { fx_fee: 1 }),
      400,
      'invalid_parameter',
      'fx_fee',
    )
    expectError(
      await op('PATCH', `/operator/v1/programs/${p.id}`, { name: '' }),
      400,
      'invalid_parameter',
      'name',
    )
    expectError(
      await op('PATCH', `/operator/v1/programs/${p.id}`, { currencies: ['USD'] }),
      400,
      'unknown_parameter',
      'currencies',
    )
    expectError(
      await op('PATCH', `/operator/v1/programs/${p.id}`, { processor: 'sim_basic' }),
      400,
      'unknown_parameter',
      'processor',
    )
    assert.deepEqual(await t.operator('GET', `/operator/v1/programs/${p.id}`), p, 'nothing changed')
    expectError(
      await op('PATCH', '/operator/v1/programs/prog_00000000000000000000000000', {
        fx_markup_bps: 10,
      }),
      404,
      'program_not_found',
    )
    expectError(
      await op('GET', '/operator/v1/programs/prog_00000000000000000000000000'),
      404,
      'program_not_found',
    )
  })

  test('needs the operator token', async () => {
    const p = (await op('POST', '/operator/v1/programs', base())).json()
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/operator/v1/programs/${p.id}`,
      payload: { fx_markup_bps: 10 },
    })
    assert.equal(res.statusCode, 401)
    const tenant = await createTenant(t, { organizationId: orgId })
    const withClientToken = await t.app.inject({
      method: 'PATCH',
      url: `/operator/v1/programs/${p.id}`,
      headers: { authorization: `Bearer ${await tenant.token()}` },
      payload: { fx_markup_bps: 10 },
    })
    assert.equal(withClientToken.statusCode, 401)
    assert.equal((await t.operator('GET', `/operator/v1/programs/${p.id}`)).fx_markup_bps, 0)
  })
})
