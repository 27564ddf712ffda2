/**
 * Suspending and resuming an eSIM through the network port: the status changes (and comes back to what it was) with
 * esim.updated, no data flows while suspended, a repeat changes nothing, and a network adapter that cannot do it
 * answers operation_unsupported.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { EsimNetwork } from '../../src/esim-network/port.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { eventsFor } from '../helpers/api.js'
import {
  completedOrder,
  esimFixture,
  expectError,
  packageFor,
  type EsimFixture,
} from './support.js'

let t: TestApp
let fx: EsimFixture
let pkg: any

before(async () => {
  t = await startTestApp()
  fx = await esimFixture(t)
  pkg = await packageFor(t, fx.token, 'country=DEU&region=local', 5 * 1024)
})
after(() => t.close())

const api = (method: string, url: string, body?: unknown) => t.api(fx.token, method, url, body)

describe('suspend and resume', () => {
  test('suspended, no data flows; resumed, the eSIM is as it was; each change once, with esim.updated', async () => {
    const o = await completedOrder(t, fx.token, {
      package_id: pkg.id,
      cardholder_id: fx.cardholder.id,
    })
    await api('POST', `/v1/simulate/esim/esims/${o.esim_id}/usage`, { data_used_mb: 10 })
    const suspended = await api('POST', `/v1/esim/esims/${o.esim_id}/suspend`, {})
    assert.equal(suspended.statusCode, 200, suspended.body)
    assert.equal(suspended.json().status, 'suspended')
    assert.equal(
      (await api('POST', `/v1/esim/esims/${o.esim_id}/suspend`, {})).json().status,
      'suspended',
    )
    expectError(
      await api('POST', `/v1/simulate/esim/esims/${o.esim_id}/usage`, { data_used_mb: 20 }),
      422,
      'esim_invalid_state',
    )
    const updates = await eventsFor(t, o.esim_id, 'esim.updated')
    assert.equal(updates.length, 1)
    assert.equal(updates[0].object.status, 'suspended')

    const resumed = await api('POST', `/v1/esim/esims/${o.esim_id}/resume`, {})
    assert.equal(resumed.statusCode, 200, resumed.body)
    assert.equal(resumed.json().status, 'enabled')
    await api('POST', `/v1/esim/esims/${o.esim_id}/resume`, {})
    assert.equal((await eventsFor(t, o.esim_id, 'esim.updated')).length, 2)
    const used = await api('POST', `/v1/simulate/esim/esims/${o.esim_id}/usage`, {
      data_used_mb: 20,
    })
    assert.equal(used.statusCode, 200, used.body)
  })

  test('an eSIM never installed returns to released; concurrent suspensions change it once', async () => {
    const o = await completedOrder(t, fx.token, {
      package_id: pkg.id,
      cardholder_id: fx.cardholder.id,
    })
    const answers = await Promise.all(
      [1, 2, 3, 4].map(() => api('POST', `/v1/esim/esims/${o.esim_id}/suspend`, {})),
    )
    for (const a of answers) assert.equal(a.json().status, 'suspended', a.body)
    assert.equal((await eventsFor(t, o.esim_id, 'esim.updated')).length, 1)
    assert.equal(
      (await api('POST', `/v1/esim/esims/${o.esim_id}/resume`, {})).json().status,
      'released',
    )
  })

  test('a network adapter without suspension answers 422 operation_unsupported and changes nothing', async () => {
    const o = await completedOrder(t, fx.token, {
      package_id: pkg.id,
      cardholder_id: fx.cardholder.id,
    })
    const original = t.deps.esimNetwork
    const limited: EsimNetwork = {
      provision: (r) => original.provision(r),
      orderStatus: (id) => original.orderStatus(id),
      onDatabase: () => limited,
    }
    t.deps.esimNetwork = limited
    try {
      expectError(
        await api('POST', `/v1/esim/esims/${o.esim_id}/suspend`, {}),
        422,
        'operation_unsupported',
      )
    } finally {
      t.deps.esimNetwork = original
    }
    assert.equal((await api('GET', `/v1/esim/esims/${o.esim_id}`)).json().status, 'released')
    assert.equal((await eventsFor(t, o.esim_id, 'esim.updated')).length, 0)
  })
})
