import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertCalled, guideApp, runGuide } from './support.js'

const app = guideApp()

test('docs/guides/sell-an-esim.md runs as written: every call answers as the guide shows', async () => {
  const { t, token } = app
  const run = await runGuide(t, token, 'docs/guides/sell-an-esim.md')

  assertCalled(run, [
    'GET /v1/esim/packages',
    'POST /v1/esim/orders',
    'GET /v1/esim/esims/{id}',
    'POST /v1/esim/h5_links',
    'POST /v1/simulate/esim/esims/{id}/usage',
    'GET /v1/esim/esims/{id}/top_ups',
    'POST /v1/esim/esims/{id}/top_ups',
    'PATCH /v1/esim/esims/{id}',
  ])

  // The retried order is the same order, bought once.
  const orders = run.runs
    .flatMap((r) => r.calls)
    .filter(
      (c) => c.request.method === 'POST' && new URL(c.request.url).pathname === '/v1/esim/orders',
    )
  const [first, retry] = orders.map((c) => JSON.parse(c.response.body))
  assert.equal(retry.id, first.id)
  assert.equal(retry.id, run.vars.get('ORDER'))
  const listed = (
    await t.api(await token(), 'GET', '/v1/esim/orders?reference=esim-order-1001')
  ).json().data
  assert.equal(listed.length, 1)

  // The auto top-up ran once, paid from the traveller's account.
  const auto = (await t.api(await token(), 'GET', '/v1/esim/orders?trigger=auto')).json().data
  assert.equal(auto.length, 1)
  assert.equal(auto[0].esim_id, run.vars.get('ESIM'))
  assert.equal(auto[0].account_id, run.vars.get('ACCOUNT'))

  // The hosted page the link leads to opens.
  const link = run.runs
    .flatMap((r) => r.calls)
    .find((c) => new URL(c.request.url).pathname === '/v1/esim/h5_links')!
  const page = await t.app.inject({
    method: 'GET',
    url: new URL(JSON.parse(link.response.body).url).pathname,
  })
  assert.equal(page.statusCode, 200)
  assert.match(page.body, /France 5 GB/)
})
