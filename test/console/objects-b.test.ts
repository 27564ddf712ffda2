import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { cardBody, issuedCard, makeAccount, makeCardholder, runJobs } from '../cards/support.js'
import { blankProfiles, packageFor } from '../esim/support.js'
import { Agent, csrfOf, person, type Person } from './support.js'

/**
 * The console's network tokens, 3-D Secure, eSIM and reports pages and its search: each list pages through the API's
 * cursors, each detail links its related objects, each change goes through the /v1 service with its audit row and
 * the API's idempotency, a viewer only reads, production has no sandbox tools, and search stays in its organization.
 */

let t: TestApp
let tenant: TestClient
let token: string
let owner: Person
let viewer: Person
let prodOwner: Person
let other: { tenant: TestClient; token: string }
let card: any
let cardholder: any
let account: any

before(async () => {
  t = await startTestApp({ env: { SVC_RELEASES: 'three_d_secure' } })
  tenant = await createTenant(t)
  token = await tenant.token()
  owner = await person(t, 'owner', tenant.organizationId)
  viewer = await person(t, 'viewer', tenant.organizationId)
  prodOwner = await person(t, 'owner', tenant.organizationId)
  // The third person works in production: the environment switch is theirs.
  await prodOwner.agent.submit('/console', { environment: 'production', return_to: '/console' }, '/console/environment')
  cardholder = await makeCardholder(t, token)
  account = await makeAccount(t, token, tenant.programs.full.id, cardholder.id)
  card = await issuedCard(t, token, cardBody(cardholder.id, account.id))
  const credit = await t.api(token, 'POST', `/v1/accounts/${account.id}/credit`, { amount: 50_000 })
  assert.equal(credit.statusCode, 200, credit.body)
  assert.equal((await t.api(token, 'POST', '/v1/simulate/esim/provisioning', { latency_ms: 0 })).statusCode, 200)
  await t.operator('POST', '/operator/v1/esim/inventory', { profiles: blankProfiles(4) })
  const otherTenant = await createTenant(t)
  other = { tenant: otherTenant, token: await otherTenant.token() }
})
after(() => t.close())

/** A page's main content without the layout (the navigation and the header's search box). */
function main(body: string): string {
  return body.slice(body.indexOf('<main'))
}

async function follow(agent: Agent, res: { statusCode: number; headers: Record<string, unknown>; body: string }) {
  assert.equal(res.statusCode, 303, res.body.slice(0, 1500))
  const page = await agent.get(String(res.headers.location))
  assert.equal(page.statusCode, 200, page.body.slice(0, 800))
  return page
}

async function audits(action: string) {
  return t.deps.db.selectFrom('audit_log').selectAll().where('action', '=', action).orderBy('id').execute()
}

/** The fields of the first form on `page` that posts to `action` (hidden ones included), to resend it exactly. */
function formFields(body: string, action: string): Record<string, string> {
  const start = body.indexOf(`action="${action}"`)
  assert.ok(start >= 0, `a form posts to ${action}`)
  const form = body.slice(start, body.indexOf('</form>', start))
  const fields: Record<string, string> = {}
  for (const m of form.matchAll(/<input [^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) fields[m[1]] = m[2]
  return fields
}

describe('network tokens', () => {
  test('the sandbox provisions a token on a card; the list pages newest first and the detail links its card and events', async () => {
    const ids: string[] = []
    for (let i = 0; i < 27; i++) {
      const res = await t.api(token, 'POST', '/v1/simulate/network_tokens', { card_id: card.id, wallet: i % 2 ? 'google_pay' : 'apple_pay' })
      assert.equal(res.statusCode, 201, res.body)
      ids.push(res.json().id)
    }
    const first = await owner.agent.get('/console/network-tokens')
    assert.equal(first.statusCode, 200)
    const body = main(first.body)
    assert.ok(body.indexOf(ids[26]) < body.indexOf(ids[2]), 'newest first')
    assert.ok(!body.includes(ids[1]), 'the 26th and 27th newest are on the next page')
    const next = /href="(\/console\/network-tokens\?after=[^"]+)"/.exec(body)
    assert.ok(next, 'a next-page link')
    const second = main((await owner.agent.get(next[1].replace(/&amp;/g, '&'))).body)
    assert.ok(second.includes(ids[0]) && second.includes(ids[1]) && !second.includes(ids[26]))
    // Filter by wallet: only Google Pay tokens.
    const google = main((await owner.agent.get(`/console/network-tokens?wallet=google_pay&card_id=${card.id}`)).body)
    assert.ok(google.includes(ids[25]) && !google.includes(ids[26]))

    // Provision through the console's sandbox tool: the result page shows the token, its card link and its events.
    const res = await owner.agent.submit('/console/network-tokens', { card_id: card.id, wallet: 'samsung_pay', idempotency_key: 'console_ntok_1' }, '/console/network-tokens/provision')
    const page = await follow(owner.agent, res)
    const id = /Network token (ntok_[0-9A-Z]+)/.exec(page.body)![1]
    assert.ok(page.body.includes(`href="/console/cards/${card.id}"`), 'links the card')
    assert.match(page.body, /network_token\.created/)
    assert.match(page.body, /href="\/console\/developers\/events\/evt_/)
    const api = (await t.api(token, 'GET', `/v1/network_tokens/${id}`)).json()
    assert.equal(api.wallet, 'samsung_pay')
    assert.equal(api.status, 'active')

    // Suspend through the page: the API sees it, the audit log has it.
    const suspend = await owner.agent.submit(`/console/network-tokens/${id}`, { idempotency_key: 'console_ntok_suspend' }, `/console/network-tokens/${id}/suspend`)
    const suspended = await follow(owner.agent, suspend)
    assert.match(suspended.body, /The token is suspended now/)
    assert.equal((await t.api(token, 'GET', `/v1/network_tokens/${id}`)).json().status, 'suspended')
    assert.equal((await audits('network_token.suspended')).filter((a) => a.object_id === id).length, 1)
    // Suspending again is the service's refusal, in words with its documentation link.
    const again = await owner.agent.submit(`/console/network-tokens/${id}`, { idempotency_key: 'console_ntok_suspend_2' }, `/console/network-tokens/${id}/suspend`)
    assert.equal(again.statusCode, 422, again.body.slice(0, 400))
    assert.match(again.body, /href="http:\/\/svc\.test\/docs\/errors#token_invalid_state"/)
  })
})

describe('3-D Secure', () => {
  test('a challenge started in the sandbox is approved once; a double-submitted form has one effect', async () => {
    const list = await owner.agent.get('/console/authentications')
    const fields = { ...formFields(list.body, '/console/authentications/simulate'), card_id: card.id, amount: '12.50', currency: 'USD', merchant: 'Corner Books' }
    const firstPost = await owner.agent.post('/console/authentications/simulate', fields)
    const secondPost = await owner.agent.post('/console/authentications/simulate', fields)
    assert.equal(firstPost.statusCode, 303)
    assert.equal(secondPost.statusCode, 303)
    assert.equal(firstPost.headers.location, secondPost.headers.location, 'the resent form answers the first result')
    const authToken = await tenant.token('authentications:read authentications:write')
    const listed = await t.api(authToken, 'GET', `/v1/authentications?card_id=${card.id}`)
    assert.equal(listed.statusCode, 200, listed.body)
    const all = listed.json().data
    assert.equal(all.length, 1, 'one challenge for two identical submissions')
    assert.equal(all[0].amount, 1250)
    const page = await owner.agent.get(String(firstPost.headers.location))
    assert.match(main(page.body), /\$12\.50/)
    assert.ok(page.body.includes(`href="/console/cards/${card.id}"`))
    const approve = await owner.agent.submit(String(firstPost.headers.location), {}, `${firstPost.headers.location}/approve`)
    const approved = await follow(owner.agent, approve)
    assert.match(approved.body, /The challenge is approved/)
    assert.equal((await t.api(authToken, 'GET', `/v1/authentications/${all[0].id}`)).json().status, 'approved')
    assert.doesNotMatch(main(approved.body), />Approve</, 'no more answer once decided')
    assert.equal((await audits('authentication.simulated')).length, 1)
  })
})

describe('eSIM', () => {
  let esimId: string
  let orderId: string
  test('an order paid from the cardholder\'s account; the eSIM page shows packages and usage, its activation code to owners only', async () => {
    const pkg = await packageFor(t, token, 'status=on_sale&region=global', 1)
    const form = await owner.agent.get(`/console/esim/orders/new?cardholder_id=${cardholder.id}`)
    assert.equal(form.statusCode, 200)
    const res = await owner.agent.post('/console/esim/orders', {
      ...formFields(form.body, '/console/esim/orders'), package_id: pkg.id, cardholder_id: cardholder.id, account_id: account.id, reference: 'order-1',
    })
    const page = await follow(owner.agent, res)
    esimId = /eSIM (esim_[0-9A-Z]+)/.exec(page.body)![1]
    const esim = (await t.api(token, 'GET', `/v1/esim/esims/${esimId}`)).json()
    orderId = esim.order_id
    assert.ok(page.body.includes(esim.activation_code.replace(/\$/g, '$')), 'the owner sees the activation code')
    assert.ok(page.body.includes(`href="/console/cardholders/${cardholder.id}"`) && page.body.includes(`href="/console/esim/orders/${orderId}"`))
    const order = (await t.api(token, 'GET', `/v1/esim/orders/${orderId}`)).json()
    assert.equal(order.account_id, account.id)
    const orderPage = main((await owner.agent.get(`/console/esim/orders/${orderId}`)).body)
    for (const link of [`/console/esims/${esimId}`, `/console/cardholders/${cardholder.id}`, `/console/accounts/${account.id}`]) assert.ok(orderPage.includes(`href="${link}"`), link)

    // Nobody else sees the code: not a viewer, not a list.
    const asViewer = await viewer.agent.get(`/console/esims/${esimId}`)
    assert.equal(asViewer.statusCode, 200)
    assert.ok(!asViewer.body.includes(esim.matching_id), 'no activation code for a viewer')
    assert.match(asViewer.body, /shown to owners and developers only/)
    for (const list of ['/console/esims', '/console/esim/orders']) {
      assert.ok(!(await owner.agent.get(list)).body.includes(esim.matching_id), list)
    }

    // Usage up to the volume depletes the package.
    const usage = await owner.agent.submit(`/console/esims/${esimId}`, { data_used_mb: String(pkg.data_mb) }, `/console/esims/${esimId}/usage`)
    const depleted = await follow(owner.agent, usage)
    assert.match(main(depleted.body), /class="badge bad">depleted/)
    assert.equal((await t.api(token, 'GET', `/v1/esim/esims/${esimId}`)).json().packages[0].status, 'depleted')
    assert.match(depleted.body, /esim\.depleted/)
  })

  test('an order form sent twice at once (a double click) buys one eSIM, and both answers lead to it', async () => {
    const pkg = await packageFor(t, token, 'status=on_sale&region=global', 1)
    const form = await owner.agent.get('/console/esim/orders/new')
    const fields = { ...formFields(form.body, '/console/esim/orders'), package_id: pkg.id, cardholder_id: cardholder.id, account_id: account.id, reference: 'double-1' }
    const [a, b] = await Promise.all([owner.agent.post('/console/esim/orders', fields), owner.agent.post('/console/esim/orders', fields)])
    assert.equal(a.statusCode, 303, a.body.slice(0, 500))
    assert.equal(b.statusCode, 303, b.body.slice(0, 500))
    assert.equal(a.headers.location, b.headers.location)
    const orders = (await t.api(token, 'GET', '/v1/esim/orders?reference=double-1')).json().data
    assert.equal(orders.length, 1)
    assert.equal((await audits('esim_order.created')).filter((r) => r.object_id === orders[0].id).length, 1)
  })

  test('a refusal of the order shows the API\'s message and doc link, and nothing is bought', async () => {
    const pkg = await packageFor(t, token, 'status=on_sale&region=global', 1)
    const form = await owner.agent.get('/console/esim/orders/new')
    const before = (await t.api(token, 'GET', '/v1/esim/orders')).json().data.length
    const res = await owner.agent.post('/console/esim/orders', { ...formFields(form.body, '/console/esim/orders'), package_id: pkg.id, cardholder_id: 'chd_01JD3Q7Y6X5W4V3T2S1R0Q9P8N' })
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
    const byEmail = await owner.agent.get(`/console/search?q=${encodeURIComponent(cardholder.email.toUpperCase())}`)
    assert.equal(byEmail.statusCode, 200)
    assert.ok(main(byEmail.body).includes(`href="/console/cardholders/${cardholder.id}"`))
    const byReference = await owner.agent.get('/console/search?q=order-1')
    assert.ok(main(byReference.body).includes(`href="/console/esim/orders/${orderId}"`))
  })
})

describe('processor faults and releases', () => {
  test('a fault armed in the sandbox makes the next processor call fail, as the simulator endpoint does', async () => {
    const res = await owner.agent.submit('/console/sandbox/processor-faults', { operation: 'issue_card', error: 'processor_unavailable', count: '1' })
    const page = await follow(owner.agent, res)
    assert.match(page.body, /The next 1 issue_card call will answer processor_unavailable/)
    assert.match(main(page.body), /<code>issue_card<\/code>/)
    const created = await t.api(token, 'POST', '/v1/cards', cardBody(cardholder.id, account.id))
    const issued = await t.api(token, 'POST', `/v1/simulate/cards/${created.json().id}/issue`)
    assert.equal(issued.statusCode, 502, issued.body)
    assert.equal((await audits('processor_fault.set')).length, 1)
    // A bad count is refused in words, and nothing is armed.
    const bad = await owner.agent.submit('/console/sandbox/processor-faults', { operation: 'set_pin', error: 'processor_unavailable', count: 'lots' })
    assert.equal(bad.statusCode, 400)
    assert.match(bad.body, /docs\/errors#invalid_parameter/)
    assert.doesNotMatch(main((await owner.agent.get('/console/sandbox/processor-faults')).body), /<code>set_pin<\/code>/)
  })

  test('without the three_d_secure release the 3-D Secure pages say so and change nothing', async () => {
    t.deps.config.releases.delete('three_d_secure')
    try {
      const res = await owner.agent.get('/console/authentications')
      assert.equal(res.statusCode, 404)
      assert.match(res.body, /SVC_RELEASES=three_d_secure/)
      const csrf = csrfOf((await owner.agent.get('/console')).body)
      const post = await owner.agent.post('/console/authentications/simulate', { _csrf: csrf, card_id: card.id, amount: '1', currency: 'USD' })
      assert.equal(post.statusCode, 404)
    } finally {
      t.deps.config.releases.add('three_d_secure')
    }
  })
})

describe('search', () => {
  test('an unknown id, or another organization\'s, is not found', async () => {
    const foreign = await makeCardholder(t, other.token)
    for (const q of [foreign.id, 'chd_01JD3Q7Y6X5W4V3T2S1R0Q9P8N', 'esim_01JD3Q7Y6X5W4V3T2S1R0Q9P8N', 'nobody@example.com']) {
      const res = await owner.agent.get(`/console/search?q=${encodeURIComponent(q)}`)
      assert.equal(res.statusCode, 404, q)
      assert.match(res.body, /Not found/)
    }
    // The sandbox's own cardholder is not found from production.
    const fromProduction = await prodOwner.agent.get(`/console/search?q=${cardholder.id}`)
    assert.equal(fromProduction.statusCode, 404)
  })
})

describe('reports', () => {
  test('requested, generated in the background, then downloaded', async () => {
    const res = await owner.agent.submit('/console/reports', { type: 'esim_orders', from: '2026-01-01', to: '2027-01-01' })
    const pending = await follow(owner.agent, res)
    const id = /Report (rpt_[0-9A-Z]+)/.exec(pending.body)![1]
    assert.match(main(pending.body), /pending/)
    await runJobs(t)
    const done = await owner.agent.get(`/console/reports/${id}`)
    assert.match(main(done.body), /succeeded/)
    const file = await owner.agent.get(`/console/reports/${id}/download`)
    assert.equal(file.statusCode, 200)
    assert.match(String(file.headers['content-type']), /text\/csv/)
    assert.equal(Number(file.headers['content-length']), Buffer.byteLength(file.body), 'the streamed file carries its length')
    const api = await t.api(token, 'GET', `/v1/reports/${id}/download`)
    assert.equal(file.body, api.body)
    assert.equal((await audits('report.requested')).filter((a) => a.object_id === id).length, 1)
  })
})

describe('reports list and keys', () => {
  test('the list pages 25 at a time with its filter kept, and a key sent with another form is refused in words', async () => {
    const ids: string[] = []
    for (let i = 0; i < 26; i++) {
      const res = await t.api(token, 'POST', '/v1/reports', { type: 'ledger', from: '2026-01-01', to: '2026-02-01' })
      assert.equal(res.statusCode, 201, res.body)
      ids.push(res.json().id)
    }
    const first = main((await owner.agent.get('/console/reports?type=ledger')).body)
    assert.ok(first.includes(ids[25]) && first.includes(ids[1]) && !first.includes(ids[0]))
    const next = /href="(\/console\/reports\?[^"]*after=[^"]+)"/.exec(first)
    assert.ok(next, 'a next-page link')
    assert.match(next[1], /type=ledger/)
    const second = main((await owner.agent.get(next[1].replace(/&amp;/g, '&'))).body)
    assert.ok(second.includes(ids[0]) && !second.includes(ids[25]))

    const once = await owner.agent.submit('/console/reports', { type: 'ledger', from: '2026-03-01', to: '2026-04-01', idempotency_key: 'console_reuse_1' })
    assert.equal(once.statusCode, 303)
    const reused = await owner.agent.submit('/console/reports', { type: 'transactions', from: '2026-03-01', to: '2026-04-01', idempotency_key: 'console_reuse_1' })
    assert.equal(reused.statusCode, 409, reused.body.slice(0, 300))
    assert.match(reused.body, /already used with a different request body/)
    assert.match(reused.body, /docs\/errors#idempotency_key_reuse/)
  })
})

describe('roles and environments', () => {
  test('a viewer reads every page, sees no forms that change things, and is refused 403 on every POST', async () => {
    for (const page of ['/console/network-tokens', '/console/authentications', '/console/esim/orders', '/console/esim/orders/new', '/console/esims', '/console/reports', '/console/search', '/console/sandbox/processor-faults']) {
      const res = await viewer.agent.get(page)
      assert.equal(res.statusCode, 200, page)
      assert.doesNotMatch(main(res.body), /method="post"/, `${page} has no change form for a viewer`)
    }
    const csrf = csrfOf((await viewer.agent.get('/console')).body)
    for (const [url, fields] of [
      ['/console/network-tokens/provision', { card_id: card.id, wallet: 'apple_pay' }],
      ['/console/authentications/simulate', { card_id: card.id, amount: '1', currency: 'USD' }],
      ['/console/esim/orders', { package_id: 'pkg_x', cardholder_id: cardholder.id, reference: 'viewer-1' }],
      ['/console/reports', { type: 'ledger', from: '2026-01-01', to: '2026-02-01' }],
    ] as const) {
      const res = await viewer.agent.post(url, { _csrf: csrf, ...fields })
      assert.equal(res.statusCode, 403, url)
    }
    assert.equal((await t.api(token, 'GET', '/v1/esim/orders?reference=viewer-1')).json().data.length, 0)
  })

  test('production shows no sandbox tools and refuses their POSTs', async () => {
    for (const page of ['/console/network-tokens', '/console/authentications', '/console/esim/orders', '/console/esim/orders/new']) {
      const res = await prodOwner.agent.get(page)
      assert.equal(res.statusCode, 200, page)
      assert.doesNotMatch(res.body, /class="card sandbox"/, page)
    }
    const csrf = csrfOf((await prodOwner.agent.get('/console')).body)
    for (const [url, fields] of [
      ['/console/network-tokens/provision', { card_id: card.id, wallet: 'apple_pay' }],
      ['/console/authentications/simulate', { card_id: card.id, amount: '1', currency: 'USD' }],
      [`/console/esims/esim_01JD3Q7Y6X5W4V3T2S1R0Q9P8N/usage`, { data_used_mb: '1' }],
      ['/console/esim/orders/provisioning', { next_outcome: 'failure' }],
      ['/console/sandbox/processor-faults', { operation: 'issue_card', error: 'processor_unavailable', count: '1' }],
    ] as const) {
      const res = await prodOwner.agent.post(url, { _csrf: csrf, ...fields })
      assert.equal(res.statusCode, 404, url)
    }
    assert.equal((await t.api(token, 'GET', `/v1/network_tokens?card_id=${card.id}&wallet=apple_pay&limit=100`)).json().data.length, 14, 'no token added')
  })
})
