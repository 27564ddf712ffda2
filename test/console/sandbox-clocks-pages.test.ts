import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { TestApp } from '../helpers/app.js'
import { ADDRESS, attest, cardBody, issuedCard, makeAccount } from '../cards/support.js'
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
 * The console's sandbox clocks: a clock created, advanced by a duration (a hold under it expires) and to a time, a bad
 * duration refused in words, its cardholders listed and the cardholder's page naming its clock; deleting asks on a page
 * of its own and deletes the clock's objects. A viewer reads only; production lists no clocks page and refuses the
 * POSTs; the navigation shows the page in the sandbox only.
 */

let t: TestApp, token: string, tenantProgram: string
let owner: Person, viewer: Person, prodOwner: Person

withObjectPages(async (fixture) => {
  ;({ t, token, owner, viewer, prodOwner } = fixture)
  tenantProgram = fixture.tenant.programs.full.id
})

const CLOCKS = '/console/sandbox/clocks'

async function holderOnClock(clockId: string) {
  const res = await t.api(token, 'POST', '/v1/cardholders', {
    type: 'individual',
    first_name: 'Tempo',
    last_name: 'Traveller',
    email: `tempo.${Date.now()}.${Math.random()}@example.com`,
    address: ADDRESS,
    identity_document: { type: 'passport', number: 'T1000222' },
    clock_id: clockId,
  })
  assert.equal(res.statusCode, 201, res.body)
  const holder = res.json()
  await attest(t, token, holder.id, 'approved', true)
  const account = await makeAccount(t, token, tenantProgram, holder.id)
  await t.api(token, 'POST', `/v1/accounts/${account.id}/credit`, { amount: 5000 })
  const card = await issuedCard(t, token, cardBody(holder.id, account.id))
  return { holder, account, card }
}

test('create, advance by and to, a refusal in words, the cardholder page names its clock, delete after confirming', async () => {
  const created = await follow(
    owner.agent,
    await owner.agent.submit(CLOCKS, { name: 'Hold expiry', frozen_time: '' }),
  )
  assert.match(created.body, /Clock created\./)
  const clockId = /Sandbox clock: Hold expiry/.test(created.body)
    ? /<code>(clk_[0-9A-Z]+)<\/code>/.exec(main(created.body))![1]
    : assert.fail(created.body.slice(0, 500))
  const f = await holderOnClock(clockId)
  const auth = await t.api(token, 'POST', '/v1/simulate/authorizations', {
    card_id: f.card.id,
    amount: 1200,
    currency: 'USD',
    merchant: { name: 'Corner Cafe', mcc: '5814', city: 'Springfield', country: 'USA' },
  })
  assert.equal(auth.json().status, 'pending', auth.body)

  const page = await owner.agent.get(`${CLOCKS}/${clockId}`)
  assert.match(main(page.body), new RegExp(`href="/console/cardholders/${f.holder.id}"`))
  const holderPage = main((await owner.agent.get(`/console/cardholders/${f.holder.id}`)).body)
  assert.match(
    holderPage,
    new RegExp(`<dt>Clock</dt><dd><a href="${CLOCKS}/${clockId}">Hold expiry</a>`),
  )

  const advanced = await follow(
    owner.agent,
    await owner.agent.submit(`${CLOCKS}/${clockId}`, { by: 'P8D' }, `${CLOCKS}/${clockId}/advance`),
  )
  assert.match(advanced.body, /The clock is at /)
  assert.equal(
    (await t.api(token, 'GET', `/v1/authorizations/${auth.json().id}`)).json().status,
    'expired',
  )
  const clock = (await t.api(token, 'GET', `/v1/simulate/clocks/${clockId}`)).json()
  const later = new Date(new Date(clock.frozen_time).getTime() + 3_600_000)
    .toISOString()
    .slice(0, 16)
  await follow(
    owner.agent,
    await owner.agent.submit(`${CLOCKS}/${clockId}`, { to: later }, `${CLOCKS}/${clockId}/advance`),
  )
  const moved = (await t.api(token, 'GET', `/v1/simulate/clocks/${clockId}`)).json()
  assert.equal(moved.frozen_time, `${later}:00.000Z`)

  const bad = await owner.agent.submit(
    `${CLOCKS}/${clockId}`,
    { by: 'a week' },
    `${CLOCKS}/${clockId}/advance`,
  )
  assert.equal(bad.statusCode, 400)
  assert.match(bad.body, /docs\/errors#invalid_parameter/)

  // Deleting asks first, on a page of its own.
  const detail = await owner.agent.get(`${CLOCKS}/${clockId}`)
  assert.doesNotMatch(main(detail.body), new RegExp(`action="${CLOCKS}/${clockId}/delete"`))
  const confirm = await owner.agent.get(`${CLOCKS}/${clockId}/delete`)
  assert.match(confirm.body, /Delete this sandbox clock\?/)
  const fields = formFields(confirm.body, `${CLOCKS}/${clockId}/delete`)
  const gone = await follow(
    owner.agent,
    await owner.agent.post(`${CLOCKS}/${clockId}/delete`, fields),
  )
  assert.match(gone.body, /The clock and its objects are deleted\./)
  assert.equal((await t.api(token, 'GET', `/v1/cardholders/${f.holder.id}`)).statusCode, 404)
  assert.equal((await owner.agent.get(`${CLOCKS}/${clockId}`)).statusCode, 404)
  for (const action of [
    'simulate.clock_created',
    'simulate.clock_advanced',
    'simulate.clock_deleted',
  ])
    assert.ok((await auditRows(t, action)).length >= 1, action)
})

test('a viewer reads the clocks without a control; production has no clocks page in its navigation and refuses the POSTs', async () => {
  const clock = (await t.api(token, 'POST', '/v1/simulate/clocks', { name: 'Read me' })).json()
  await expectReadOnly(
    viewer,
    [CLOCKS, `${CLOCKS}/${clock.id}`],
    [
      [CLOCKS, { name: 'nope' }],
      [`${CLOCKS}/${clock.id}/advance`, { by: 'P1D' }],
      [`${CLOCKS}/${clock.id}/delete`, {}],
    ],
  )
  assert.match((await viewer.agent.get('/console')).body, new RegExp(`href="${CLOCKS}"`))
  const prodHome = await prodOwner.agent.get('/console')
  assert.doesNotMatch(prodHome.body, new RegExp(`href="${CLOCKS}"`))
  await expectNoSandboxTools(
    prodOwner,
    [CLOCKS],
    [
      [CLOCKS, { name: 'nope' }],
      [`${CLOCKS}/${clock.id}/advance`, { by: 'P1D' }],
      [`${CLOCKS}/${clock.id}/delete`, {}],
    ],
  )
  assert.match((await prodOwner.agent.get(CLOCKS)).body, /switch to the sandbox/)
})
