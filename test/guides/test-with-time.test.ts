import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { TestApp } from '../helpers/app.js'
import { routesCalled, runGuide, startLikeNpmStart } from './support.js'

let t: TestApp
let token: () => Promise<string>

before(async () => {
  ;({ t, token } = await startLikeNpmStart())
})
after(async () => {
  await t.close()
})

test('docs/guides/test-with-time.md runs as written: every call answers as the guide shows', async () => {
  const run = await runGuide(t, token, 'docs/guides/test-with-time.md')
  const called = routesCalled(run)
  for (const route of [
    'POST /v1/simulate/clocks',
    'GET /v1/simulate/clocks/{id}',
    'POST /v1/simulate/clocks/{id}/advance',
    'DELETE /v1/simulate/clocks/{id}',
    'POST /v1/simulate/authorizations',
  ])
    assert.ok(called.includes(route), `the guide no longer calls ${route}: ${called.join(', ')}`)

  // What the guide made is gone with its clock: the account and the authorization answer their own 404.
  const tok = await token()
  for (const [url, code] of [
    [`/v1/accounts/${run.vars.get('ACCOUNT')}`, 'account_not_found'],
    [`/v1/authorizations/${run.vars.get('AUTH')}`, 'authorization_not_found'],
  ]) {
    const res = await t.api(tok, 'GET', url)
    assert.deepEqual([res.statusCode, res.json().error.code], [404, code])
  }
})
