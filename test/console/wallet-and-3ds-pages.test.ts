import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { TestApp, TestClient } from '../helpers/app.js'
import {
  auditRows,
  csrfOf,
  expectNoSandboxTools,
  expectReadOnly,
  follow,
  formFields,
  main,
  type Person,
  withObjectPages,
} from './support.js'

/**
 * The console's network token and 3-D Secure pages: the list pages through the API's cursors, each detail links its
 * card and events, each change goes through the /v1 service with its audit row and the API's idempotency, a viewer
 * only reads, production has no sandbox tools, and the 3-D Secure pages follow their release.
 */

let t: TestApp, tenant: TestClient, token: string
let owner: Person, viewer: Person, prodOwner: Person
let cardholder: any, account: any, card: any

withObjectPages(
  (fixture) =>
    ({ t, tenant, token, owner, viewer, prodOwner, cardholder, account, card } = fixture),
  {
    env: { SVC_RELEASES: 'three_d_secure' },
  },
)

const audits = (action: string) => auditRows(t, action)

describe('network tokens', () => {
  test('the sandbox provisions a token on a card; the list pages newest first and the detail links its card and events', async () => {
    const ids: string[] = []
    for (let i = 0; i < 27; i++) {
      const res = await t.api(token, 'POST', '/v1/simulate/network_tokens', {
        card_id: card.id,
        wallet: i % 2 ? 'google_pay' : 'apple_pay',
      })
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
    const google = main(
      (await owner.agent.get(`/console/network-tokens?wallet=google_pay&card_id=${card.id}`)).body,
    )
    assert.ok(google.includes(ids[25]) && !google.includes(ids[26]))

    // Provision through the console's sandbox tool: the result page shows the token, its card link and its events.
    const res = await owner.agent.submit(
      '/console/network-tokens',
      { card_id: card.id, wallet: 'samsung_pay', idempotency_key: 'console_ntok_1' },
      '/console/network-tokens/provision',
    )
    const page = await follow(owner.agent, res)
    const id = /Network token (ntok_[0-9A-Z]+)/.exec(page.body)![1]
    assert.ok(page.body.includes(`href="/console/cards/${card.id}"`), 'links the card')
    assert.match(page.body, /network_token\.created/)
    assert.match(page.body, /href="\/console\/developers\/events\/evt_/)
    const api = (await t.api(token, 'GET', `/v1/network_tokens/${id}`)).json()
    assert.equal(api.wallet, 'samsung_pay')
    assert.equal(api.status, 'active')

    // Suspend through the page: the API sees it, the audit log has it.
    const suspend = await owner.agent.submit(
      `/console/network-tokens/${id}`,
      { idempotency_key: 'console_ntok_suspend' },
      `/console/network-tokens/${id}/suspend`,
    )
    const suspended = await follow(owner.agent, suspend)
    assert.match(suspended.body, /The token is suspended now/)
    assert.equal((await t.api(token, 'GET', `/v1/network_tokens/${id}`)).json().status, 'suspended')
    assert.equal(
      (await audits('network_token.suspended')).filter((a) => a.object_id === id).length,
      1,
    )
    // Suspending again is the service's refusal, in words with its documentation link.
    const again = await owner.agent.submit(
      `/console/network-tokens/${id}`,
      { idempotency_key: 'console_ntok_suspend_2' },
      `/console/network-tokens/${id}/suspend`,
    )
    assert.equal(again.statusCode, 422, again.body.slice(0, 400))
    assert.match(again.body, /href="http:\/\/svc\.test\/docs\/errors#token_invalid_state"/)
  })
})

describe('3-D Secure', () => {
  test('a challenge started in the sandbox is approved once; a double-submitted form has one effect', async () => {
    const list = await owner.agent.get('/console/authentications')
    const fields = {
      ...formFields(list.body, '/console/authentications/simulate'),
      card_id: card.id,
      amount: '12.50',
      currency: 'USD',
      merchant: 'Corner Books',
    }
    const firstPost = await owner.agent.post('/console/authentications/simulate', fields)
    const secondPost = await owner.agent.post('/console/authentications/simulate', fields)
    assert.equal(firstPost.statusCode, 303)
    assert.equal(secondPost.statusCode, 303)
    assert.equal(
      firstPost.headers.location,
      secondPost.headers.location,
      'the resent form answers the first result',
    )
    const authToken = await tenant.token('authentications:read authentications:write')
    const listed = await t.api(authToken, 'GET', `/v1/authentications?card_id=${card.id}`)
    assert.equal(listed.statusCode, 200, listed.body)
    const all = listed.json().data
    assert.equal(all.length, 1, 'one challenge for two identical submissions')
    assert.equal(all[0].amount, 1250)
    const page = await owner.agent.get(String(firstPost.headers.location))
    assert.match(main(page.body), /\$12\.50/)
    assert.ok(page.body.includes(`href="/console/cards/${card.id}"`))
    const approve = await owner.agent.submit(
      String(firstPost.headers.location),
      {},
      `${firstPost.headers.location}/approve`,
    )
    const approved = await follow(owner.agent, approve)
    assert.match(approved.body, /The challenge is approved/)
    assert.equal(
      (await t.api(authToken, 'GET', `/v1/authentications/${all[0].id}`)).json().status,
      'approved',
    )
    assert.doesNotMatch(main(approved.body), />Approve</, 'no more answer once decided')
    assert.equal((await audits('authentication.simulated')).length, 1)
  })
})

describe('release', () => {
  test('without the three_d_secure release the 3-D Secure pages say so and change nothing', async () => {
    const nav = async () =>
      /<nav class="side"[\s\S]*?<\/nav>/.exec((await owner.agent.get('/console')).body)![0]
    assert.match(await nav(), /href="\/console\/authentications">3-D Secure</)
    t.deps.config.releases.delete('three_d_secure')
    try {
      assert.doesNotMatch(
        await nav(),
        /3-D Secure/,
        'a feature that is off is not in the navigation',
      )
      const res = await owner.agent.get('/console/authentications')
      assert.equal(res.statusCode, 404)
      assert.match(res.body, /SVC_RELEASES=three_d_secure/)
      const csrf = csrfOf((await owner.agent.get('/console')).body)
      const post = await owner.agent.post('/console/authentications/simulate', {
        _csrf: csrf,
        card_id: card.id,
        amount: '1',
        currency: 'USD',
      })
      assert.equal(post.statusCode, 404)
    } finally {
      t.deps.config.releases.add('three_d_secure')
    }
  })
})

describe('roles and environments', () => {
  test('a viewer reads every page, sees no forms that change things, and is refused 403 on every POST', async () => {
    await expectReadOnly(
      viewer,
      ['/console/network-tokens', '/console/authentications'],
      [
        ['/console/network-tokens/provision', { card_id: card.id, wallet: 'apple_pay' }],
        ['/console/authentications/simulate', { card_id: card.id, amount: '1', currency: 'USD' }],
      ],
    )
  })

  test('production shows no sandbox tools and refuses their POSTs', async () => {
    await expectNoSandboxTools(
      prodOwner,
      ['/console/network-tokens', '/console/authentications'],
      [
        ['/console/network-tokens/provision', { card_id: card.id, wallet: 'apple_pay' }],
        ['/console/authentications/simulate', { card_id: card.id, amount: '1', currency: 'USD' }],
      ],
    )
    assert.equal(
      (
        await t.api(
          token,
          'GET',
          `/v1/network_tokens?card_id=${card.id}&wallet=apple_pay&limit=100`,
        )
      ).json().data.length,
      14,
      'no token added',
    )
  })
})
