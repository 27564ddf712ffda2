import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { JobRunner } from '../../src/jobs/runner.js'
import { ensureSchedules } from '../../src/jobs/schedules.js'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import {
  availableProfiles,
  blankProfiles,
  completedOrder,
  esimFixture,
  eventsOf,
  expectError,
  order,
  packageFor,
  reference,
  type EsimFixture,
} from './support.js'

let t: TestApp
let fx: EsimFixture
let pkg: any

before(async () => {
  t = await startTestApp()
  fx = await esimFixture(t)
  pkg = await packageFor(t, fx.token)
})
after(async () => {
  await t.close()
})

const simulate = (body: Record<string, unknown>) =>
  t.api(fx.token, 'POST', '/v1/simulate/esim/provisioning', body)
const setStatus = (id: string, status: string) =>
  t.api(fx.token, 'POST', `/v1/simulate/esim/packages/${id}/status`, { status })
/** Lets the settlement job's next run come due, and runs what is due, as a worker would. */
async function settlementJob(): Promise<void> {
  await ensureSchedules(t.deps, t.jobs)
  t.clock.advance(31_000)
  await new JobRunner(t.deps, t.jobs).drain()
}
const byReference = async (ref: string) =>
  (await t.api(fx.token, 'GET', `/v1/esim/orders?reference=${encodeURIComponent(ref)}`)).json().data

describe('ordering a package', () => {
  test('an order on a package on sale answers 201 completed with an esim_id, and that eSIM runs the package', async () => {
    const ref = reference()
    const res = await t.api(fx.token, 'POST', '/v1/esim/orders', {
      package_id: pkg.id,
      reference: ref,
      cardholder_id: fx.cardholder.id,
      metadata: { trip: 'paris' },
    })
    assert.equal(res.statusCode, 201, res.body)
    const o = res.json()
    assert.match(o.id, /^esord_/)
    assert.equal(o.object, 'esim_order')
    assert.equal(o.type, 'package')
    assert.equal(o.status, 'completed')
    assert.match(o.esim_id, /^esim_/)
    assert.equal(o.price, pkg.price)
    assert.equal(o.currency, 'USD')
    assert.equal(o.reference, ref)
    assert.equal(o.cardholder_id, fx.cardholder.id)
    assert.equal(o.account_id, null)
    assert.deepEqual(o.metadata, { trip: 'paris' })
    const esim = (await t.api(fx.token, 'GET', `/v1/esim/esims/${o.esim_id}`)).json()
    assert.equal(esim.packages.length, 1)
    assert.equal(esim.packages[0].package_id, pkg.id)
    assert.equal(esim.packages[0].status, 'running')
    assert.equal(esim.packages[0].data_mb, pkg.data_mb)
    assert.equal(
      (await t.api(fx.token, 'GET', `/v1/esim/orders/${o.id}`)).json().esim_id,
      o.esim_id,
    )
    const created = (await eventsOf(t, fx.tenant.organizationId, 'esim_order.created')).find(
      (e) => e.object.id === o.id,
    )
    assert.equal(created?.object.status, 'completed')
  })

  test('each sale state: frozen refuses with 422 esim_package_unavailable, on_sale again accepts, withdrawn refuses for good', async () => {
    const target = await packageFor(t, fx.token, 'country=JPN&region=local')
    assert.equal((await setStatus(target.id, 'frozen')).json().status, 'frozen')
    expectError(
      await order(t, fx.token, { package_id: target.id }),
      422,
      'esim_package_unavailable',
      'package_id',
    )
    assert.equal(
      (await t.api(fx.token, 'GET', `/v1/esim/packages/${target.id}`)).json().status,
      'frozen',
    )
    assert.equal((await setStatus(target.id, 'on_sale')).json().status, 'on_sale')
    await completedOrder(t, fx.token, { package_id: target.id })
    assert.equal((await setStatus(target.id, 'withdrawn')).json().status, 'withdrawn')
    expectError(
      await order(t, fx.token, { package_id: target.id }),
      422,
      'esim_package_unavailable',
      'package_id',
    )
    expectError(await setStatus(target.id, 'on_sale'), 422, 'esim_package_unavailable')
    expectError(
      await order(t, fx.token, { package_id: target.id }),
      422,
      'esim_package_unavailable',
    )
  })

  test("the sandbox's sale states belong to the organization that set them", async () => {
    const target = await packageFor(t, fx.token, 'country=ITA&region=local')
    await setStatus(target.id, 'frozen')
    const other = await esimFixture(t)
    assert.equal(
      (await t.api(other.token, 'GET', `/v1/esim/packages/${target.id}`)).json().status,
      'on_sale',
    )
    await completedOrder(t, other.token, { package_id: target.id })
    await setStatus(target.id, 'on_sale')
  })

  test('an unknown package answers 404 esim_package_not_found; an unknown cardholder 404 cardholder_not_found', async () => {
    expectError(
      await order(t, fx.token, { package_id: 'pkg_00000000000000000000000000' }),
      404,
      'esim_package_not_found',
      'package_id',
    )
    expectError(
      await order(t, fx.token, {
        package_id: pkg.id,
        cardholder_id: 'chd_00000000000000000000000000',
      }),
      404,
      'cardholder_not_found',
      'cardholder_id',
    )
  })

  test('an empty stock answers 422 esim_inventory_exhausted, charges nothing and lists nothing; stock loaded by the operator is used at once', async () => {
    // Park the whole stock for this test, then give it back.
    await sql`UPDATE esim_profiles SET state = 'parked' WHERE state = 'available'`.execute(
      t.deps.db,
    )
    try {
      const ref = reference()
      const before = (await eventsOf(t, fx.tenant.organizationId)).length
      expectError(
        await t.api(fx.token, 'POST', '/v1/esim/orders', { package_id: pkg.id, reference: ref }),
        422,
        'esim_inventory_exhausted',
      )
      assert.deepEqual(await byReference(ref), [])
      assert.equal((await eventsOf(t, fx.tenant.organizationId)).length, before)
      // The same reference works once stock returns: the refusal reserved nothing.
      const loaded = await t.operator('POST', '/operator/v1/esim/inventory', {
        profiles: blankProfiles(2),
      })
      assert.deepEqual(loaded, { object: 'esim_inventory_load', loaded: 2, skipped: 0 })
      const ok = await t.api(fx.token, 'POST', '/v1/esim/orders', {
        package_id: pkg.id,
        reference: ref,
      })
      assert.equal(ok.statusCode, 201, ok.body)
    } finally {
      await sql`UPDATE esim_profiles SET state = 'available' WHERE state = 'parked'`.execute(
        t.deps.db,
      )
    }
  })

  test('a provisioning failure answers 502, leaves no order, returns the profile to stock and frees the reference', async () => {
    const stock = await availableProfiles(t)
    await simulate({ next_outcome: 'failure' })
    const ref = reference()
    expectError(
      await t.api(fx.token, 'POST', '/v1/esim/orders', { package_id: pkg.id, reference: ref }),
      502,
      'processor_unavailable',
    )
    assert.deepEqual(await byReference(ref), [])
    assert.equal(await availableProfiles(t), stock)
    const retry = await t.api(fx.token, 'POST', '/v1/esim/orders', {
      package_id: pkg.id,
      reference: ref,
    })
    assert.equal(retry.statusCode, 201, retry.body)
  })
})

describe('an order in flight', () => {
  test('is not shown while its network call may still answer; a refusal then leaves nothing to find', async () => {
    await simulate({ next_outcome: 'failure', latency_ms: 400 })
    try {
      const ref = reference()
      const pending = t.api(fx.token, 'POST', '/v1/esim/orders', {
        package_id: pkg.id,
        reference: ref,
      })
      await new Promise((r) => setTimeout(r, 150))
      assert.deepEqual(await byReference(ref), [])
      const all = (await t.api(fx.token, 'GET', '/v1/esim/orders?status=unsettled')).json().data
      assert.ok(!all.some((o: { reference: string }) => o.reference === ref))
      expectError(await pending, 502, 'processor_unavailable')
      assert.deepEqual(await byReference(ref), [])
    } finally {
      await simulate({ latency_ms: null })
    }
  })

  test("past its call's deadline (its process died) it reads as unsettled, by list and by id", async () => {
    await simulate({ latency_ms: 400 })
    try {
      const ref = reference()
      const pending = t.api(fx.token, 'POST', '/v1/esim/orders', {
        package_id: pkg.id,
        reference: ref,
      })
      await new Promise((r) => setTimeout(r, 150))
      t.clock.advance(13_000)
      const [listed] = await byReference(ref)
      assert.equal(listed.status, 'unsettled')
      assert.ok(!('esim_id' in listed))
      assert.equal(
        (await t.api(fx.token, 'GET', `/v1/esim/orders/${listed.id}`)).json().status,
        'unsettled',
      )
      assert.equal((await pending).statusCode, 201)
    } finally {
      await simulate({ latency_ms: null })
    }
  })
})

describe('a provisioning timeout', () => {
  test('answers 502 processor_unavailable and lists the order unsettled without esim_id; settling completes it with its eSIM', async () => {
    await simulate({ next_outcome: 'timeout', settles_as: 'completed' })
    const ref = reference()
    const res = await t.api(fx.token, 'POST', '/v1/esim/orders', {
      package_id: pkg.id,
      reference: ref,
      cardholder_id: fx.cardholder.id,
    })
    expectError(res, 502, 'processor_unavailable')
    const [listed] = await byReference(ref)
    assert.equal(listed.status, 'unsettled')
    assert.equal('esim_id' in listed, false)
    assert.equal(
      (await t.api(fx.token, 'GET', `/v1/esim/orders?status=unsettled`))
        .json()
        .data.some((o: any) => o.id === listed.id),
      true,
    )
    expectError(
      await t.api(fx.token, 'POST', '/v1/esim/orders', { package_id: pkg.id, reference: ref }),
      409,
      'esim_order_reference_exists',
      'reference',
    )

    const settled = await t.api(fx.token, 'POST', `/v1/simulate/esim/orders/${listed.id}/settle`)
    assert.equal(settled.statusCode, 200, settled.body)
    assert.equal(settled.json().status, 'completed')
    assert.match(settled.json().esim_id, /^esim_/)
    assert.equal(
      (await t.api(fx.token, 'GET', `/v1/esim/esims/${settled.json().esim_id}`)).statusCode,
      200,
    )
    const types = (await eventsOf(t, fx.tenant.organizationId))
      .filter((e) => e.object.id === listed.id)
      .map((e) => e.type)
    assert.deepEqual(types, ['esim_order.created', 'esim_order.settled'])
  })

  test('settled as failed by the settlement job: the order fails, the profile returns to stock, esim_order.failed is emitted', async () => {
    await simulate({ next_outcome: 'timeout', settles_as: 'failed' })
    const stock = await availableProfiles(t)
    const ref = reference()
    expectError(
      await t.api(fx.token, 'POST', '/v1/esim/orders', { package_id: pkg.id, reference: ref }),
      502,
      'processor_unavailable',
    )
    const [listed] = await byReference(ref)
    assert.equal(listed.status, 'unsettled')
    assert.equal(await availableProfiles(t), stock - 1)

    await settlementJob()
    const after = (
      await t.api(await fx.tenant.token(), 'GET', `/v1/esim/orders/${listed.id}`)
    ).json()
    assert.equal(after.status, 'failed')
    assert.equal('esim_id' in after, false)
    assert.ok(after.settled_at)
    assert.equal(await availableProfiles(t), stock)
    assert.equal(
      (await eventsOf(t, fx.tenant.organizationId, 'esim_order.failed')).some(
        (e) => e.object.id === listed.id,
      ),
      true,
    )
  })

  test('the settlement job settles an unsettled order within seconds: not at once, and by the next run after 5 s', async () => {
    await simulate({ next_outcome: 'timeout' })
    const ref = reference()
    expectError(
      await t.api(fx.token, 'POST', '/v1/esim/orders', { package_id: pkg.id, reference: ref }),
      502,
      'processor_unavailable',
    )
    const [listed] = await byReference(ref)
    await ensureSchedules(t.deps, t.jobs)
    await new JobRunner(t.deps, t.jobs).drain()
    assert.equal(
      (await byReference(ref))[0].status,
      'unsettled',
      'a caller looking it up right after the 502 finds it unsettled',
    )
    t.clock.advance(6_000)
    await new JobRunner(t.deps, t.jobs).drain()
    t.clock.advance(5_000)
    await new JobRunner(t.deps, t.jobs).drain()
    const token = await fx.tenant.token()
    const settled = (await t.api(token, 'GET', `/v1/esim/orders/${listed.id}`)).json()
    assert.equal(settled.status, 'completed')
    assert.match(settled.esim_id, /^esim_/)
    fx.token = token
  })

  test('the settlement job completes an order whose outcome came late, and leaves completed orders alone', async () => {
    await simulate({ next_outcome: 'timeout' })
    const ref = reference()
    expectError(
      await t.api(fx.token, 'POST', '/v1/esim/orders', { package_id: pkg.id, reference: ref }),
      502,
      'processor_unavailable',
    )
    const [listed] = await byReference(ref)
    await settlementJob()
    const token = await fx.tenant.token()
    const settled = (await t.api(token, 'GET', `/v1/esim/orders/${listed.id}`)).json()
    assert.equal(settled.status, 'completed')
    assert.match(settled.esim_id, /^esim_/)
    const again = await t.api(token, 'POST', `/v1/simulate/esim/orders/${listed.id}/settle`)
    assert.equal(again.json().esim_id, settled.esim_id)
    fx.token = token
  })
})

describe('references', () => {
  test('a reference is unique per organization: a second order with it answers 409 esim_order_reference_exists', async () => {
    const ref = reference()
    await completedOrder(t, fx.token, { package_id: pkg.id, reference: ref })
    expectError(
      await t.api(fx.token, 'POST', '/v1/esim/orders', { package_id: pkg.id, reference: ref }),
      409,
      'esim_order_reference_exists',
      'reference',
    )
    const other = await esimFixture(t)
    await completedOrder(t, other.token, { package_id: pkg.id, reference: ref })
  })

  test('concurrent orders with one reference: exactly one is created, the others answer 409, and no profile stays reserved', async () => {
    const stock = await availableProfiles(t)
    const ref = reference()
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        t.api(fx.token, 'POST', '/v1/esim/orders', { package_id: pkg.id, reference: ref }),
      ),
    )
    const statuses = results.map((r) => r.statusCode).sort()
    assert.deepEqual(
      statuses,
      [201, 409, 409, 409, 409, 409],
      results.map((r) => r.body).join('\n'),
    )
    assert.equal((await byReference(ref)).length, 1)
    assert.equal(await availableProfiles(t), stock - 1)
  })

  test('concurrent orders never share a profile', async () => {
    await simulate({ latency_ms: 5 })
    try {
      const results = await Promise.all(
        Array.from({ length: 10 }, () => order(t, fx.token, { package_id: pkg.id })),
      )
      for (const r of results) assert.equal(r.statusCode, 201, r.body)
      const esims = await Promise.all(
        results.map((r) => t.api(fx.token, 'GET', `/v1/esim/esims/${r.json().esim_id}`)),
      )
      assert.equal(new Set(esims.map((e) => e.json().iccid)).size, 10)
    } finally {
      await simulate({ latency_ms: 0 })
    }
  })
})

describe('requests', () => {
  test('a retried create with the same Idempotency-Key replays the order instead of buying twice', async () => {
    const body = { package_id: pkg.id, reference: reference() }
    const first = await t.api(fx.token, 'POST', '/v1/esim/orders', body, {
      'idempotency-key': `k-${body.reference}`,
    })
    const again = await t.api(fx.token, 'POST', '/v1/esim/orders', body, {
      'idempotency-key': `k-${body.reference}`,
    })
    assert.equal(first.statusCode, 201)
    assert.equal(again.statusCode, 201)
    assert.equal(again.headers['idempotent-replay'], 'true')
    assert.equal(again.json().esim_id, first.json().esim_id)
    assert.equal((await byReference(body.reference)).length, 1)
  })

  test('bad bodies: missing reference, unknown fields, metadata beyond 20 keys or 40-character keys answer 400', async () => {
    expectError(
      await t.api(fx.token, 'POST', '/v1/esim/orders', { package_id: pkg.id }),
      400,
      'missing_parameter',
      'reference',
    )
    expectError(
      await order(t, fx.token, { package_id: pkg.id, colour: 'red' }),
      400,
      'unknown_parameter',
      'colour',
    )
    expectError(
      await order(t, fx.token, {
        package_id: pkg.id,
        metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])),
      }),
      400,
      'invalid_parameter',
    )
    expectError(
      await order(t, fx.token, { package_id: pkg.id, metadata: { ['k'.repeat(41)]: 'v' } }),
      400,
      'invalid_parameter',
    )
    expectError(
      await order(t, fx.token, { package_id: pkg.id, reference: 'r'.repeat(129) }),
      400,
      'invalid_parameter',
      'reference',
    )
  })
})

describe('reading orders', () => {
  test('lists filter by reference, status and cardholder; another organization sees none of them', async () => {
    const mine = await completedOrder(t, fx.token, {
      package_id: pkg.id,
      cardholder_id: fx.cardholder.id,
    })
    const list = (
      await t.api(
        fx.token,
        'GET',
        `/v1/esim/orders?cardholder_id=${fx.cardholder.id}&status=completed&limit=100`,
      )
    ).json()
    assert.equal(list.object, 'list')
    assert.equal(list.url, '/v1/esim/orders')
    assert.ok(
      list.data.every((o: any) => o.cardholder_id === fx.cardholder.id && o.status === 'completed'),
    )
    assert.equal(list.data[0].id, mine.id, 'newest first')
    const stranger = await createTenant(t)
    const strangerToken = await stranger.token()
    expectError(
      await t.api(strangerToken, 'GET', `/v1/esim/orders/${mine.id}`),
      404,
      'esim_order_not_found',
    )
    assert.deepEqual(
      (await t.api(strangerToken, 'GET', `/v1/esim/orders?reference=${mine.reference}`)).json()
        .data,
      [],
    )
  })

  test('ordering needs esim:write; reading needs esim:read', async () => {
    const readOnly = await (await createTenant(t, { scopes: ['esim:read'] })).token()
    expectError(await order(t, readOnly, { package_id: pkg.id }), 403, 'insufficient_scope')
    assert.equal((await t.api(readOnly, 'GET', '/v1/esim/orders')).statusCode, 200)
    const noEsim = await (await createTenant(t, { scopes: ['cardholders:read'] })).token()
    expectError(await t.api(noEsim, 'GET', '/v1/esim/orders'), 403, 'insufficient_scope')
  })
})
