import { test } from 'node:test'
import assert from 'node:assert/strict'
import { startTestApp, createTenant } from '../helpers/app.js'
test('smoke', async () => {
  const t = await startTestApp()
  try {
    const c = await createTenant(t)
    const tok = await c.token()
    const res = await t.api(tok, 'GET', '/v1/programs')
    console.log(res.statusCode, res.headers, res.body.slice(0, 300))
    const nf = await t.api(tok, 'GET', '/v1/nope')
    console.log(nf.statusCode, nf.headers, nf.body)
    const bad = await t.api(tok, 'GET', '/v1/programs?limit=500&foo=1')
    console.log(bad.statusCode, bad.body)
    const oa = await t.app.inject({ method: 'GET', url: '/openapi.json' })
    console.log(oa.statusCode, oa.body.slice(0, 200))
    assert.equal(res.statusCode, 200)
  } finally { await t.close() }
})
