import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sweepUsage } from '../../src/modules/esim/usage.js'
import { sweepValidity } from '../../src/modules/esim/validity.js'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { eventsFor } from '../helpers/api.js'
import { completedOrder, esimFixture, expectError, type EsimFixture } from './support.js'

/**
 * Alert settings (the organization's, an eSIM's own), the usage thresholds each announced once per package with its
 * details in `data`, esim.low_data at 80 % whatever the thresholds, validity warnings and expiry from the sweep, and
 * the usage sweep applying queued reports in batches.
 */

let t: TestApp
let fx: EsimFixture
let pkg: any

const HOUR = 3_600_000
const DAY = 24 * HOUR

before(async () => {
  t = await startTestApp()
  fx = await esimFixture(t)
  // 1 GB for 7 days: its volume makes round percentages.
  const res = await t.api(fx.token, 'GET', '/v1/esim/packages?country=FRA&region=local&limit=100')
  pkg = res.json().data.find((p: any) => p.data_mb === 1024 && p.validity_days === 7)
  assert.ok(pkg, 'a 1 GB · 7 days package for France')
})
after(async () => {
  await t.close()
})

const api = (method: string, url: string, body?: unknown) => t.api(fx.token, method, url, body)
const usage = (esimId: string, mb: number) =>
  api('POST', `/v1/simulate/esim/esims/${esimId}/usage`, { data_used_mb: mb })

async function newEsim(): Promise<any> {
  const o = await completedOrder(t, fx.token, {
    package_id: pkg.id,
    cardholder_id: fx.cardholder.id,
  })
  return (await api('GET', `/v1/esim/esims/${o.esim_id}`)).json()
}

const typesAbout = async (esimId: string, prefix = 'esim.') =>
  (await eventsFor(t, esimId)).filter((e) => e.type.startsWith(prefix)).map((e) => e.type)

describe('alert settings', () => {
  test('the defaults until set; PUT replaces them for the environment; GET reads them back', async () => {
    const fresh = (await api('GET', '/v1/esim/alert_settings')).json()
    assert.deepEqual(fresh, {
      object: 'esim_alert_settings',
      usage_thresholds_pct: [80, 100],
      validity_warning_hours: [24],
      updated_at: null,
    })
    const put = await api('PUT', '/v1/esim/alert_settings', {
      usage_thresholds_pct: [50, 80, 90, 100],
      validity_warning_hours: [72, 24],
    })
    assert.equal(put.statusCode, 200, put.body)
    assert.deepEqual(put.json().usage_thresholds_pct, [50, 80, 90, 100])
    assert.deepEqual((await api('GET', '/v1/esim/alert_settings')).json(), put.json())
    // Another organization still has the defaults.
    const other = await (await createTenant(t)).token()
    assert.deepEqual(
      (await t.api(other, 'GET', '/v1/esim/alert_settings')).json().usage_thresholds_pct,
      [80, 100],
    )
  })

  test('thresholds outside 1–100, unsorted or repeated, and hours not descending answer 400 naming the field', async () => {
    const put = (body: unknown) => api('PUT', '/v1/esim/alert_settings', body)
    const hours = { validity_warning_hours: [24] }
    expectError(await put({ usage_thresholds_pct: [0, 50], ...hours }), 400, 'invalid_parameter')
    const over = expectError(
      await put({ usage_thresholds_pct: [101], ...hours }),
      400,
      'invalid_parameter',
    )
    assert.match(over.param, /^usage_thresholds_pct/)
    expectError(
      await put({ usage_thresholds_pct: [80, 50], ...hours }),
      400,
      'invalid_parameter',
      'usage_thresholds_pct',
    )
    expectError(
      await put({ usage_thresholds_pct: [50, 50], ...hours }),
      400,
      'invalid_parameter',
      'usage_thresholds_pct',
    )
    expectError(
      await put({ usage_thresholds_pct: [50], validity_warning_hours: [24, 72] }),
      400,
      'invalid_parameter',
      'validity_warning_hours',
    )
    const esim = await newEsim()
    expectError(
      await api('PATCH', `/v1/esim/esims/${esim.id}`, {
        alert_settings: { usage_thresholds_pct: [90, 10] },
      }),
      400,
      'invalid_parameter',
      'alert_settings.usage_thresholds_pct',
    )
    const range = expectError(
      await api('PATCH', `/v1/esim/esims/${esim.id}`, {
        alert_settings: { validity_warning_hours: [721] },
      }),
      400,
      'invalid_parameter',
    )
    assert.match(range.param, /^alert_settings\.validity_warning_hours/)
    // Nothing changed.
    assert.equal((await api('GET', `/v1/esim/esims/${esim.id}`)).json().alert_settings, null)
  })
})

describe('usage thresholds', () => {
  test('each threshold is announced once per package with its details beside the object; low_data stays at 80 %', async () => {
    await api('PUT', '/v1/esim/alert_settings', {
      usage_thresholds_pct: [50, 90, 100],
      validity_warning_hours: [24],
    })
    const esim = await newEsim()
    await usage(esim.id, 400) // 39 %
    assert.deepEqual(await typesAbout(esim.id, 'esim.usage'), [])
    await usage(esim.id, 600) // 58 %: 50
    await usage(esim.id, 700)
    const reached = (await eventsFor(t, esim.id, 'esim.usage_threshold_reached')).map((e) => e.data)
    assert.equal(reached.length, 1)
    assert.deepEqual(
      { ...reached[0], object: undefined },
      { object: undefined, threshold_pct: 50, data_used_mb: 600, data_remaining_mb: 424 },
    )
    // 80 % is not a threshold here, but esim.low_data still fires there.
    assert.deepEqual(await typesAbout(esim.id, 'esim.low_data'), [])
    const res = await usage(esim.id, 1000) // 97 %: 90, and low_data
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(await typesAbout(esim.id), [
      'esim.installed',
      'esim.first_used',
      'esim.usage_threshold_reached',
      'esim.usage_threshold_reached',
      'esim.low_data',
    ])
    const last = (await eventsFor(t, esim.id)).at(-2)!
    assert.equal(last.data.threshold_pct, 90)
    // The event's object, built in SQL, is the eSIM as the API lists it.
    const listed = (await api('GET', `/v1/esim/esims?cardholder_id=${fx.cardholder.id}&limit=100`))
      .json()
      .data.find((e: any) => e.id === esim.id)
    assert.deepEqual(last.object, listed)
    // Announced once: more usage below 100 % sends nothing more; 100 % and the depletion come once.
    await usage(esim.id, 1010)
    await usage(esim.id, 1024)
    await usage(esim.id, 1024).catch(() => undefined)
    const all = await eventsFor(t, esim.id, 'esim.usage_threshold_reached')
    assert.deepEqual(
      all.map((e) => e.data.threshold_pct),
      [50, 90, 100],
    )
    assert.equal((await eventsFor(t, esim.id, 'esim.depleted')).length, 1)
  })

  test("an eSIM's own thresholds win over the organization's; null returns to them", async () => {
    await api('PUT', '/v1/esim/alert_settings', {
      usage_thresholds_pct: [10],
      validity_warning_hours: [24],
    })
    const esim = await newEsim()
    const patched = await api('PATCH', `/v1/esim/esims/${esim.id}`, {
      alert_settings: { usage_thresholds_pct: [30, 60] },
    })
    assert.equal(patched.statusCode, 200, patched.body)
    assert.deepEqual(patched.json().alert_settings, {
      usage_thresholds_pct: [30, 60],
      validity_warning_hours: null,
    })
    await usage(esim.id, 350) // 34 %: 30 (not 10)
    assert.deepEqual(
      (await eventsFor(t, esim.id, 'esim.usage_threshold_reached')).map(
        (e) => e.data.threshold_pct,
      ),
      [30],
    )
    const back = await api('PATCH', `/v1/esim/esims/${esim.id}`, { alert_settings: null })
    assert.equal(back.json().alert_settings, null)
    await usage(esim.id, 360) // the organization's 10 % is reached (and announced once)
    await usage(esim.id, 370)
    assert.deepEqual(
      (await eventsFor(t, esim.id, 'esim.usage_threshold_reached')).map(
        (e) => e.data.threshold_pct,
      ),
      [30, 10],
    )
  })

  test('concurrent usage reports about one eSIM announce each crossing once', async () => {
    await api('PUT', '/v1/esim/alert_settings', {
      usage_thresholds_pct: [25, 50, 75],
      validity_warning_hours: [24],
    })
    const esim = await newEsim()
    const answers = await Promise.all(
      [300, 500, 600, 700, 800, 900, 260, 780].map((mb) => usage(esim.id, mb)),
    )
    // Some reports arrive after a higher total and are refused; every applied one is counted once.
    for (const a of answers) assert.ok([200, 400].includes(a.statusCode), a.body)
    assert.deepEqual(
      (await eventsFor(t, esim.id, 'esim.usage_threshold_reached'))
        .map((e) => e.data.threshold_pct)
        .sort((a, b) => a - b),
      [25, 50, 75],
    )
    assert.equal((await eventsFor(t, esim.id, 'esim.low_data')).length, 1)
    assert.equal((await eventsFor(t, esim.id, 'esim.first_used')).length, 1)
    assert.equal((await eventsFor(t, esim.id, 'esim.installed')).length, 1)
  })
})

describe('the usage sweep', () => {
  test('queued reports are applied in batches with the same rules and events; unknown, lower and foreign ones are dropped', async () => {
    await api('PUT', '/v1/esim/alert_settings', {
      usage_thresholds_pct: [50, 100],
      validity_warning_hours: [24],
    })
    const [a, b, c] = [await newEsim(), await newEsim(), await newEsim()]
    const stranger = await createTenant(t)
    const strangerToken = await stranger.token()
    const queued = await api('POST', '/v1/simulate/esim/usage_reports', {
      reports: [
        { esim_id: a.id, data_used_mb: 600 },
        { esim_id: b.id, data_used_mb: 1024 },
        { esim_id: a.id, data_used_mb: 700 },
        { esim_id: 'esim_00000000000000000000000000', data_used_mb: 5 },
        { esim_id: a.id, data_used_mb: 650 }, // lower than 700: dropped
      ],
    })
    assert.equal(queued.statusCode, 202, queued.body)
    assert.deepEqual(queued.json(), { object: 'esim_usage_report_batch', queued: 5 })
    // Another organization cannot report usage on these eSIMs.
    await t.api(strangerToken, 'POST', '/v1/simulate/esim/usage_reports', {
      reports: [{ esim_id: c.id, data_used_mb: 1024 }],
    })
    assert.equal(await sweepUsage(t.deps, { batchSize: 2, parallel: 2 }), 6)
    assert.equal(await sweepUsage(t.deps), 0)
    const now = async (id: string) => (await api('GET', `/v1/esim/esims/${id}`)).json()
    assert.equal((await now(a.id)).packages[0].data_used_mb, 700)
    assert.equal((await now(b.id)).packages[0].status, 'depleted')
    assert.equal((await now(c.id)).packages[0].data_used_mb, 0)
    assert.deepEqual(
      (await eventsFor(t, a.id, 'esim.usage_threshold_reached')).map((e) => e.data.threshold_pct),
      [50],
    )
    assert.deepEqual(await typesAbout(b.id), [
      'esim.installed',
      'esim.first_used',
      'esim.usage_threshold_reached',
      'esim.usage_threshold_reached',
      'esim.low_data',
      'esim.depleted',
    ])
    assert.deepEqual(await typesAbout(c.id), [])
  })
})

describe('validity', () => {
  test('warnings are sent once each as the end nears, then esim.expired once; the packages read expired', async () => {
    await api('PUT', '/v1/esim/alert_settings', {
      usage_thresholds_pct: [],
      validity_warning_hours: [72, 24],
    })
    const start = t.clock.now().getTime()
    const esim = await newEsim()
    assert.equal(
      new Date(esim.valid_until).getTime(),
      new Date(esim.packages[0].expires_at).getTime(),
    )
    try {
      await sweepValidity(t.deps)
      assert.deepEqual(await typesAbout(esim.id), [])
      t.clock.advance(5 * DAY) // 48 h left: the 72-hour warning
      await sweepValidity(t.deps)
      await sweepValidity(t.deps)
      const first = await eventsFor(t, esim.id, 'esim.validity_expiring')
      assert.equal(first.length, 1)
      assert.ok(Math.abs(first[0].data.hours_left - 48) <= 1, String(first[0].data.hours_left))
      t.clock.advance(DAY + 12 * HOUR) // 12 h left: the 24-hour warning
      await sweepValidity(t.deps)
      const second = await eventsFor(t, esim.id, 'esim.validity_expiring')
      assert.equal(second.length, 2)
      assert.ok(second[1].data.hours_left <= 12, String(second[1].data.hours_left))
      t.clock.advance(13 * HOUR) // past the end
      await sweepValidity(t.deps)
      await sweepValidity(t.deps)
      const expired = await eventsFor(t, esim.id, 'esim.expired')
      assert.equal(expired.length, 1)
      assert.equal(expired[0].object.packages[0].status, 'expired')
      // A token minted now (the clock moved past the first one's lifetime).
      const token = await fx.tenant.token()
      const read = (await t.api(token, 'GET', `/v1/esim/esims/${esim.id}`)).json()
      assert.equal(read.packages[0].status, 'expired')
      expectError(
        await t.api(token, 'POST', `/v1/simulate/esim/esims/${esim.id}/usage`, {
          data_used_mb: 10,
        }),
        400,
        'invalid_parameter',
        'data_used_mb',
      )
    } finally {
      t.clock.advance(start - t.clock.now().getTime())
    }
  })

  test("an eSIM's own warning hours apply at once: a warning already due is sent by the PATCH", async () => {
    await api('PUT', '/v1/esim/alert_settings', {
      usage_thresholds_pct: [],
      validity_warning_hours: [],
    })
    const esim = await newEsim()
    const res = await api('PATCH', `/v1/esim/esims/${esim.id}`, {
      alert_settings: { validity_warning_hours: [720, 2] },
    })
    assert.equal(res.statusCode, 200, res.body)
    const warned = await eventsFor(t, esim.id, 'esim.validity_expiring')
    assert.equal(warned.length, 1)
    assert.equal(warned[0].data.hours_left, 7 * 24)
    await sweepValidity(t.deps)
    assert.equal((await eventsFor(t, esim.id, 'esim.validity_expiring')).length, 1)
  })

  test('a top-up that runs longer moves valid_until and starts the warnings again', async () => {
    await api('PUT', '/v1/esim/alert_settings', {
      usage_thresholds_pct: [],
      validity_warning_hours: [720],
    })
    const esim = await newEsim()
    await sweepValidity(t.deps)
    assert.equal((await eventsFor(t, esim.id, 'esim.validity_expiring')).length, 1)
    const offers = (await api('GET', `/v1/esim/esims/${esim.id}/top_ups`)).json().data
    const renewal = offers.find((o: any) => o.validity_days > 0)
    assert.ok(renewal, 'a renewal add-on')
    const bought = await api('POST', `/v1/esim/esims/${esim.id}/top_ups`, {
      top_up_id: renewal.id,
      reference: `renew-${esim.id}`,
    })
    assert.equal(bought.statusCode, 201, bought.body)
    const after = (await api('GET', `/v1/esim/esims/${esim.id}`)).json()
    assert.equal(after.valid_until, after.packages[1].expires_at)
    await sweepValidity(t.deps)
    assert.equal((await eventsFor(t, esim.id, 'esim.validity_expiring')).length, 2)
  })
})

describe('installation, first use and country', () => {
  test('install, location and the first usage report each announce once; the same country again changes nothing', async () => {
    const esim = await newEsim()
    assert.equal(esim.country, null)
    assert.equal(esim.installed_at, null)
    const installed = await api('POST', `/v1/simulate/esim/esims/${esim.id}/install`, {})
    assert.equal(installed.statusCode, 200, installed.body)
    assert.equal(installed.json().status, 'installed')
    assert.ok(installed.json().installed_at)
    await api('POST', `/v1/simulate/esim/esims/${esim.id}/install`, {})
    const moved = await api('POST', `/v1/simulate/esim/esims/${esim.id}/location`, {
      country: 'fra',
    })
    assert.equal(moved.json().country, 'FRA')
    await api('POST', `/v1/simulate/esim/esims/${esim.id}/location`, { country: 'FRA' })
    await api('POST', `/v1/simulate/esim/esims/${esim.id}/location`, { country: 'JPN' })
    await usage(esim.id, 0)
    await usage(esim.id, 5)
    await usage(esim.id, 6)
    assert.deepEqual(await typesAbout(esim.id), [
      'esim.installed',
      'esim.country_changed',
      'esim.country_changed',
      'esim.first_used',
    ])
    const changes = (await eventsFor(t, esim.id, 'esim.country_changed')).map((e) => ({
      country: e.data.country,
      previous_country: e.data.previous_country,
    }))
    assert.deepEqual(changes, [
      { country: 'FRA', previous_country: null },
      { country: 'JPN', previous_country: 'FRA' },
    ])
    const read = (await api('GET', `/v1/esim/esims/${esim.id}`)).json()
    assert.equal(read.status, 'enabled')
    assert.equal(read.country, 'JPN')
    assert.ok(read.first_used_at)
    expectError(
      await api('POST', `/v1/simulate/esim/esims/${esim.id}/location`, { country: 'XXX' }),
      400,
      'invalid_parameter',
      'country',
    )
  })

  test('events read through the API carry their details in data beside the object', async () => {
    const esim = await newEsim()
    await api('POST', `/v1/simulate/esim/esims/${esim.id}/location`, { country: 'ITA' })
    const listed = (await api('GET', '/v1/events?type=esim.country_changed&limit=100')).json().data
    const mine = listed.find((e: any) => e.data.object.id === esim.id)
    assert.ok(mine)
    assert.deepEqual(Object.keys(mine.data), ['object', 'country', 'previous_country'])
    assert.equal(mine.data.country, 'ITA')
    assert.equal(mine.data.previous_country, null)
  })
})
