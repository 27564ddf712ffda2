import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { TestApp } from '../helpers/app.js'
import { blankProfiles, packageFor } from '../esim/support.js'
import {
  auditRows,
  expectNoSandboxTools,
  expectReadOnly,
  follow,
  formFields,
  main,
  type Person,
  withObjectPages,
} from './support.js'

/**
 * The console's eSIM pages: orders paid from an account, the eSIM's packages, usage and activation code (owners
 * only), one eSIM for a double-submitted order, refusals in words, search by the eSIM's ids, email and reference;
 * a viewer only reads, and production has no sandbox tools.
 */

let t: TestApp, token: string
let owner: Person, viewer: Person, prodOwner: Person
let cardholder: any, account: any, card: any

withObjectPages(async (fixture) => {
  ;({ t, token, owner, viewer, prodOwner, cardholder, account, card } = fixture)
  assert.equal(
    (await t.api(token, 'POST', '/v1/simulate/esim/provisioning', { latency_ms: 0 })).statusCode,
    200,
  )
  await t.operator('POST', '/operator/v1/esim/inventory', { profiles: blankProfiles(4) })
})

const audits = (action: string) => auditRows(t, action)

describe('eSIM', () => {
  let esimId: string
  let orderId: string
  test("an order paid from the cardholder's account; the eSIM page shows packages and usage, its activation code to owners only", async () => {
    const pkg = await packageFor(t, token, 'status=on_sale&region=global', 1)
    const form = await owner.agent.get(`/console/esim/orders/new?cardholder_id=${cardholder.id}`)
    assert.equal(form.statusCode, 200)
    const res = await owner.agent.post('/console/esim/orders', {
      ...formFields(form.body, '/console/esim/orders'),
      package_id: pkg.id,
      cardholder_id: cardholder.id,
      account_id: account.id,
      reference: 'order-1',
    })
    const page = await follow(owner.agent, res)
    esimId = /eSIM (esim_[0-9A-Z]+)/.exec(page.body)![1]
    const esim = (await t.api(token, 'GET', `/v1/esim/esims/${esimId}`)).json()
    orderId = esim.order_id
    assert.ok(
      page.body.includes(esim.activation_code.replace(/\$/g, '$')),
      'the owner sees the activation code',
    )
    assert.ok(
      page.body.includes(`href="/console/cardholders/${cardholder.id}"`) &&
        page.body.includes(`href="/console/esim/orders/${orderId}"`),
    )
    const order = (await t.api(token, 'GET', `/v1/esim/orders/${orderId}`)).json()
    assert.equal(order.account_id, account.id)
    const orderPage = main((await owner.agent.get(`/console/esim/orders/${orderId}`)).body)
    for (const link of [
      `/console/esims/${esimId}`,
      `/console/cardholders/${cardholder.id}`,
      `/console/accounts/${account.id}`,
    ])
      assert.ok(orderPage.includes(`href="${link}"`), link)

    // Nobody else sees the code: not a viewer, not a list.
    const asViewer = await viewer.agent.get(`/console/esims/${esimId}`)
    assert.equal(asViewer.statusCode, 200)
    assert.ok(!asViewer.body.includes(esim.matching_id), 'no activation code for a viewer')
    assert.match(asViewer.body, /shown to owners and developers only/)
    for (const list of ['/console/esims', '/console/esim/orders']) {
      assert.ok(!(await owner.agent.get(list)).body.includes(esim.matching_id), list)
    }

    // Usage up to the volume depletes the package.
    const usage = await owner.agent.submit(
      `/console/esims/${esimId}`,
      { data_used_mb: String(pkg.data_mb) },
      `/console/esims/${esimId}/usage`,
    )
    const depleted = await follow(owner.agent, usage)
    assert.match(main(depleted.body), /class="badge bad">depleted/)
    assert.equal(
      (await t.api(token, 'GET', `/v1/esim/esims/${esimId}`)).json().packages[0].status,
      'depleted',
    )
    assert.match(depleted.body, /esim\.depleted/)
  })

  test('an order form sent twice at once (a double click) buys one eSIM, and both answers lead to it', async () => {
    const pkg = await packageFor(t, token, 'status=on_sale&region=global', 1)
    const form = await owner.agent.get('/console/esim/orders/new')
    const fields = {
      ...formFields(form.body, '/console/esim/orders'),
      package_id: pkg.id,
      cardholder_id: cardholder.id,
      account_id: account.id,
      reference: 'double-1',
    }
    const [a, b] = await Promise.all([
      owner.agent.post('/console/esim/orders', fields),
      owner.agent.post('/console/esim/orders', fields),
    ])
    assert.equal(a.statusCode, 303, a.body.slice(0, 500))
    assert.equal(b.statusCode, 303, b.body.slice(0, 500))
    assert.equal(a.headers.location, b.headers.location)
    const orders = (await t.api(token, 'GET', '/v1/esim/orders?reference=double-1')).json().data
    assert.equal(orders.length, 1)
    assert.equal(
      (await audits('esim_order.created')).filter((r) => r.object_id === orders[0].id).length,
      1,
    )
  })

  test("an eSIM's own alerts are set, refused and reset from its page, through PATCH /v1/esim/esims/{id}", async () => {
    const page = await owner.agent.get(`/console/esims/${esimId}`)
    assert.match(page.body, /This eSIM&#39;s usage alerts \(%\)/)
    // Each save is a new form, with its own idempotency key, as a person reloading the page sends.
    const save = async (usage: string, hours: string) => {
      const form = await owner.agent.get(`/console/esims/${esimId}`)
      return owner.agent.post(`/console/esims/${esimId}/alerts`, {
        ...formFields(form.body, `/console/esims/${esimId}/alerts`),
        usage_thresholds_pct: usage,
        validity_warning_hours: hours,
      })
    }
    const saved = await save('50, 75 95', '48')
    assert.equal(saved.statusCode, 303, saved.body.slice(0, 500))
    const esim = (await t.api(token, 'GET', `/v1/esim/esims/${esimId}`)).json()
    assert.deepEqual(esim.alert_settings, {
      usage_thresholds_pct: [50, 75, 95],
      validity_warning_hours: [48],
    })
    assert.equal((await audits('esim.alert_settings_set')).at(-1)!.object_id, esimId)

    const typo = await save('50, lots', '48')
    assert.equal(typo.statusCode, 400)
    assert.match(typo.body, /alert_settings\.usage_thresholds_pct/)
    assert.match(typo.body, /value="50, lots"/, 'what was typed is kept')
    const unsorted = await save('90, 50', '')
    assert.equal(unsorted.statusCode, 400)
    assert.match(unsorted.body, /usage_thresholds_pct/)
    const after = (await t.api(token, 'GET', `/v1/esim/esims/${esimId}`)).json()
    assert.deepEqual(after.alert_settings.usage_thresholds_pct, [50, 75, 95], 'nothing changed')

    assert.equal((await save('', '')).statusCode, 303)
    const reset = (await t.api(token, 'GET', `/v1/esim/esims/${esimId}`)).json()
    assert.equal(reset.alert_settings?.usage_thresholds_pct ?? null, null)
    assert.equal(reset.alert_settings?.validity_warning_hours ?? null, null)
  })

  test("a refusal of the order shows the API's message and doc link, and nothing is bought", async () => {
    const pkg = await packageFor(t, token, 'status=on_sale&region=global', 1)
    const form = await owner.agent.get('/console/esim/orders/new')
    const before = (await t.api(token, 'GET', '/v1/esim/orders')).json().data.length
    const res = await owner.agent.post('/console/esim/orders', {
      ...formFields(form.body, '/console/esim/orders'),
      package_id: pkg.id,
      cardholder_id: 'chd_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
    })
    assert.equal(res.statusCode, 404)
    assert.match(res.body, /docs\/errors#cardholder_not_found/)
    assert.equal((await t.api(token, 'GET', '/v1/esim/orders')).json().data.length, before)
  })

  test('search finds the eSIM, its order and the cardholder by id, email and reference', async () => {
    for (const id of [esimId, orderId, cardholder.id, card.id, account.id]) {
      const res = await owner.agent.get(`/console/search?q=${id}`)
      assert.equal(res.statusCode, 303, `${id}: ${res.body.slice(0, 300)}`)
      assert.match(String(res.headers.location), new RegExp(`/${id}$`))
    }
    const byEmail = await owner.agent.get(
      `/console/search?q=${encodeURIComponent(cardholder.email.toUpperCase())}`,
    )
    assert.equal(byEmail.statusCode, 200)
    assert.ok(main(byEmail.body).includes(`href="/console/cardholders/${cardholder.id}"`))
    const byReference = await owner.agent.get('/console/search?q=order-1')
    assert.ok(main(byReference.body).includes(`href="/console/esim/orders/${orderId}"`))
    // The start of the eSIM's or the order's id goes to it.
    for (const id of [esimId, orderId]) {
      const res = await owner.agent.get(`/console/search?q=${id.slice(0, -3)}`)
      assert.equal(res.statusCode, 303, id)
      assert.match(String(res.headers.location), new RegExp(`/${id}$`))
    }
    // The full ICCID, or its last digits, lists the eSIM.
    const { iccid } = (await t.api(token, 'GET', `/v1/esim/esims/${esimId}`)).json()
    for (const q of [iccid, iccid.slice(-8)]) {
      const byIccid = await owner.agent.get(`/console/search?q=${q}`)
      assert.equal(byIccid.statusCode, 200, q)
      assert.ok(main(byIccid.body).includes(`href="/console/esims/${esimId}"`), q)
    }
  })
})

describe('roles and environments', () => {
  test('a viewer reads every page, sees no forms that change things, and is refused 403 on every POST', async () => {
    await expectReadOnly(
      viewer,
      ['/console/esim/orders', '/console/esim/orders/new', '/console/esims'],
      [
        [
          '/console/esim/orders',
          { package_id: 'pkg_x', cardholder_id: cardholder.id, reference: 'viewer-1' },
        ],
        [
          '/console/esims/esim_01JD3Q7Y6X5W4V3T2S1R0Q9P8N/auto_top_up',
          { top_up_id: 'topup_x', account_id: account.id, trigger: 'depleted', max_per_month: '1' },
        ],
        ['/console/esims/esim_01JD3Q7Y6X5W4V3T2S1R0Q9P8N/auto_top_up/off', {}],
        [
          '/console/esims/esim_01JD3Q7Y6X5W4V3T2S1R0Q9P8N/alerts',
          { usage_thresholds_pct: '50', validity_warning_hours: '' },
        ],
      ],
    )
    assert.equal(
      (await t.api(token, 'GET', '/v1/esim/orders?reference=viewer-1')).json().data.length,
      0,
    )
  })

  test('production shows no sandbox tools and refuses their POSTs', async () => {
    await expectNoSandboxTools(
      prodOwner,
      ['/console/esim/orders', '/console/esim/orders/new'],
      [
        [`/console/esims/esim_01JD3Q7Y6X5W4V3T2S1R0Q9P8N/usage`, { data_used_mb: '1' }],
        ['/console/esim/orders/provisioning', { next_outcome: 'failure' }],
      ],
    )
  })
})
