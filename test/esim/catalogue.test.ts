import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { isValidIccid } from '../../src/modules/esim/iccid.js'
import { createTenant, OPERATOR_TOKEN, startTestApp, type TestApp } from '../helpers/app.js'
import {
  availableProfiles,
  blankProfiles,
  completedOrder,
  esimFixture,
  expectError,
  order,
  type EsimFixture,
} from './support.js'

let t: TestApp
let fx: EsimFixture

before(async () => {
  t = await startTestApp()
  fx = await esimFixture(t)
})
after(async () => {
  await t.close()
})

const operator = (method: string, url: string, payload?: unknown) =>
  t.app.inject({
    method: method as never,
    url,
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    ...(payload !== undefined ? { payload: payload as never } : {}),
  })

async function allPackages(token: string, query = ''): Promise<any[]> {
  const out: any[] = []
  let cursor: string | null = null
  do {
    const res = await t.api(
      token,
      'GET',
      `/v1/esim/packages?limit=100${query}${cursor ? `&starting_after=${encodeURIComponent(cursor)}` : ''}`,
    )
    assert.equal(res.statusCode, 200, res.body)
    const page = res.json()
    out.push(...page.data)
    cursor = page.has_more ? page.next_cursor : null
  } while (cursor)
  return out
}

describe('the package catalogue', () => {
  test('a fresh deployment sells at least 60 local, regional and global packages in USD minor units, cacheable for 5 minutes', async () => {
    const res = await t.api(fx.token, 'GET', '/v1/esim/packages')
    assert.equal(res.headers['cache-control'], 'max-age=300')
    const first = res.json()
    assert.equal(first.object, 'list')
    assert.equal(first.data.length, 25)
    assert.equal(first.has_more, true)
    const all = await allPackages(fx.token)
    assert.ok(all.length >= 60, `only ${all.length} packages`)
    assert.equal(new Set(all.map((p) => p.id)).size, all.length, 'pages never repeat a package')
    for (const region of ['local', 'regional', 'global'])
      assert.ok(
        all.some((p) => p.region === region),
        region,
      )
    for (const p of all) {
      assert.match(p.id, /^pkg_[0-9A-Z]{26}$/)
      assert.equal(p.object, 'esim_package')
      assert.ok(
        p.countries.length > 0 && p.countries.every((c: string) => /^[A-Z]{3}$/.test(c)),
        p.name,
      )
      assert.ok(Number.isInteger(p.price) && p.price > 0)
      assert.equal(p.currency, 'USD')
      assert.ok(p.data_mb === null || p.data_mb >= 1024)
      assert.ok([1, 7, 15, 30, 60, 90].includes(p.validity_days), `${p.validity_days}`)
      assert.equal(p.status, 'on_sale')
      assert.ok(
        Array.isArray(p.top_up_ids) && p.top_up_ids.every((id: string) => id.startsWith('topup_')),
      )
    }
    assert.ok(
      all.some((p) => p.data_mb === null),
      'an unlimited plan exists',
    )
  })

  test('filters by country, region and status; a package is retrieved by id with the same cache header', async () => {
    const france = await allPackages(fx.token, '&country=fra')
    assert.ok(france.length >= 6)
    assert.ok(france.every((p) => p.countries.includes('FRA')))
    assert.ok(
      france.some((p) => p.region === 'local') &&
        france.some((p) => p.region === 'regional') &&
        france.some((p) => p.region === 'global'),
    )
    const regional = await allPackages(fx.token, '&region=regional')
    assert.ok(regional.length > 0 && regional.every((p) => p.region === 'regional'))
    const one = await t.api(fx.token, 'GET', `/v1/esim/packages/${france[0].id}`)
    assert.equal(one.statusCode, 200)
    assert.equal(one.headers['cache-control'], 'max-age=300')
    assert.deepEqual(one.json(), france[0])
    await t.api(fx.token, 'POST', `/v1/simulate/esim/packages/${france[0].id}/status`, {
      status: 'frozen',
    })
    const frozen = await allPackages(fx.token, '&status=frozen')
    assert.deepEqual(
      frozen.map((p) => p.id),
      [france[0].id],
    )
    assert.ok((await allPackages(fx.token, '&status=on_sale')).every((p) => p.id !== france[0].id))
    await t.api(fx.token, 'POST', `/v1/simulate/esim/packages/${france[0].id}/status`, {
      status: 'on_sale',
    })
  })

  test('a sale-status change moves updated_at; a withdrawn package lists no add-ons to buy', async () => {
    const withAddOns = (await allPackages(fx.token, '')).filter((p) => p.top_up_ids.length > 0)
    const pkg = withAddOns[withAddOns.length - 1]
    t.clock.advance(60_000)
    const frozen = await t.api(fx.token, 'POST', `/v1/simulate/esim/packages/${pkg.id}/status`, {
      status: 'frozen',
    })
    assert.equal(frozen.statusCode, 200, frozen.body)
    const read = (await t.api(fx.token, 'GET', `/v1/esim/packages/${pkg.id}`)).json()
    assert.equal(read.status, 'frozen')
    assert.ok(
      new Date(read.updated_at) > new Date(pkg.updated_at),
      `${read.updated_at} after ${pkg.updated_at}`,
    )
    await t.api(fx.token, 'POST', `/v1/simulate/esim/packages/${pkg.id}/status`, {
      status: 'withdrawn',
    })
    assert.deepEqual(
      (await t.api(fx.token, 'GET', `/v1/esim/packages/${pkg.id}`)).json().top_up_ids,
      [],
    )
  })

  test('bad filters and unknown ids answer the documented errors', async () => {
    expectError(
      await t.api(fx.token, 'GET', '/v1/esim/packages?country=FR'),
      400,
      'invalid_parameter',
      'country',
    )
    expectError(
      await t.api(fx.token, 'GET', '/v1/esim/packages?region=moon'),
      400,
      'invalid_parameter',
      'region',
    )
    expectError(
      await t.api(fx.token, 'GET', '/v1/esim/packages?colour=red'),
      400,
      'unknown_parameter',
      'colour',
    )
    expectError(
      await t.api(fx.token, 'GET', '/v1/esim/packages/pkg_00000000000000000000000000'),
      404,
      'esim_package_not_found',
    )
    expectError(
      await t.api(fx.token, 'GET', '/v1/esim/packages/nonsense'),
      404,
      'esim_package_not_found',
    )
  })

  test('reading the catalogue needs esim:read; the simulator answers 404 not_found in production', async () => {
    const noEsim = await (await createTenant(t, { scopes: ['cardholders:read'] })).token()
    expectError(await t.api(noEsim, 'GET', '/v1/esim/packages'), 403, 'insufficient_scope')
    const production = await (await createTenant(t, { environment: 'production' })).token()
    const pkg = (await t.api(production, 'GET', '/v1/esim/packages?limit=1')).json().data[0]
    expectError(
      await t.api(production, 'POST', `/v1/simulate/esim/packages/${pkg.id}/status`, {
        status: 'frozen',
      }),
      404,
      'not_found',
    )
    expectError(
      await t.api(production, 'POST', '/v1/simulate/esim/provisioning', {
        next_outcome: 'timeout',
      }),
      404,
      'not_found',
    )
  })
})

describe('the operator', () => {
  test('adds a package with its add-ons, freezes it (orders refused) and puts it back on sale', async () => {
    const res = await operator('POST', '/operator/v1/esim/packages', {
      name: 'Iceland 2 GB · 15 days',
      data_mb: 2048,
      validity_days: 15,
      countries: ['isl'],
      region: 'local',
      price: 850,
      currency: 'USD',
      top_ups: [{ name: '+1 GB', data_mb: 1024, validity_days: 0, price: 450 }],
    })
    assert.equal(res.statusCode, 201, res.body)
    const pkg = res.json()
    assert.deepEqual(pkg.countries, ['ISL'])
    assert.equal(pkg.top_up_ids.length, 1)
    assert.ok(
      (await t.api(fx.token, 'GET', '/v1/esim/packages?country=ISL&region=local'))
        .json()
        .data.some((p: any) => p.id === pkg.id),
    )
    assert.equal(
      (await operator('PATCH', `/operator/v1/esim/packages/${pkg.id}`, { status: 'frozen' })).json()
        .status,
      'frozen',
    )
    expectError(await order(t, fx.token, { package_id: pkg.id }), 422, 'esim_package_unavailable')
    assert.equal(
      (
        await operator('PATCH', `/operator/v1/esim/packages/${pkg.id}`, {
          status: 'on_sale',
          price: 900,
        })
      ).json().price,
      900,
    )
    assert.equal((await completedOrder(t, fx.token, { package_id: pkg.id })).price, 900)
    assert.equal(
      (await operator('PATCH', `/operator/v1/esim/packages/${pkg.id}`, { status: 'withdrawn' }))
        .statusCode,
      200,
    )
    expectError(
      await operator('PATCH', `/operator/v1/esim/packages/${pkg.id}`, { status: 'on_sale' }),
      422,
      'esim_package_unavailable',
    )
    expectError(await order(t, fx.token, { package_id: pkg.id }), 422, 'esim_package_unavailable')
  })

  test('loads blank profiles: 201 {loaded}, duplicates skipped, ICCIDs without the 89 prefix or a valid Luhn digit refused', async () => {
    const before = await availableProfiles(t)
    const profiles = blankProfiles(3)
    const res = await operator('POST', '/operator/v1/esim/inventory', { profiles })
    assert.equal(res.statusCode, 201, res.body)
    assert.deepEqual(res.json(), { object: 'esim_inventory_load', loaded: 3, skipped: 0 })
    assert.deepEqual((await operator('POST', '/operator/v1/esim/inventory', { profiles })).json(), {
      object: 'esim_inventory_load',
      loaded: 0,
      skipped: 3,
    })
    assert.equal(await availableProfiles(t), before + 3)
    const good = blankProfiles(1)[0]
    const badLuhn = {
      ...good,
      iccid: good.iccid.slice(0, 18) + String((Number(good.iccid[18]) + 1) % 10),
    }
    expectError(
      await operator('POST', '/operator/v1/esim/inventory', { profiles: [badLuhn] }),
      400,
      'invalid_parameter',
      'profiles[0].iccid',
    )
    expectError(
      await operator('POST', '/operator/v1/esim/inventory', {
        profiles: [{ ...good, iccid: `12${good.iccid.slice(2)}` }],
      }),
      400,
      'invalid_parameter',
      'profiles[0].iccid',
    )
    expectError(
      await operator('POST', '/operator/v1/esim/inventory', { profiles: [{ ...good, extra: 1 }] }),
      400,
      'unknown_parameter',
    )
    expectError(
      await t.app.inject({
        method: 'POST',
        url: '/operator/v1/esim/inventory',
        payload: { profiles: [good] },
      }),
      401,
      'missing_credentials',
    )
  })

  test('the seeded stock is 19-digit ICCIDs with the 89 prefix and a Luhn check digit', async () => {
    const rows = await t.deps.db
      .selectFrom('esim_profiles')
      .select(['iccid', 'smdp_address', 'matching_id'])
      .limit(50)
      .execute()
    assert.ok(rows.length > 0)
    for (const r of rows) {
      assert.ok(isValidIccid(r.iccid), r.iccid)
      assert.equal(r.iccid.length, 19)
      assert.ok(r.smdp_address.length > 0 && r.matching_id.length > 0)
    }
  })
})
