import assert from 'node:assert/strict'
import { test } from 'node:test'
import { assertCalled, guideApp, runGuide } from './support.js'

const app = guideApp()

test('docs/guides/test-with-time.md runs as written: every call answers as the guide shows', async () => {
  const { t, token } = app
  const run = await runGuide(t, token, 'docs/guides/test-with-time.md')
  assertCalled(run, [
    'POST /v1/simulate/clocks',
    'GET /v1/simulate/clocks/{id}',
    'POST /v1/simulate/clocks/{id}/advance',
    'DELETE /v1/simulate/clocks/{id}',
    'POST /v1/simulate/authorizations',
  ])

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
