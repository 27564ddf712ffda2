import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { signClientAssertion, tokenRequestBody } from '../../src/lib/client-assertion.js'
import {
  createTenant,
  requestToken,
  startTestApp,
  TOKEN_URL,
  type TestApp,
  type TestClient,
} from '../helpers/app.js'
import { cardBody, expectError, issuedCard, makeAccount, makeCardholder } from '../cards/support.js'

// The default deployment: the three_d_secure release is not enabled.
let t: TestApp
let tenant: TestClient

before(async () => {
  t = await startTestApp()
  tenant = await createTenant(t)
})
after(async () => {
  await t.close()
})

async function tokenResponse(scope?: string) {
  const assertion = await signClientAssertion({
    clientId: tenant.clientId,
    privateJwk: tenant.privateJwk,
    audience: TOKEN_URL,
    nowSeconds: Math.floor(t.clock.now().getTime() / 1000),
  })
  return requestToken(t, tokenRequestBody(assertion, scope))
}

test('without the three_d_secure release the token endpoint refuses authentications scopes with invalid_scope', async () => {
  for (const scope of [
    'authentications:read',
    'authentications:write',
    'cards:read authentications:read',
  ]) {
    const res = await tokenResponse(scope)
    assert.equal(res.statusCode, 400, res.body)
    assert.equal(res.json().error, 'invalid_scope')
    assert.equal(res.json().code, undefined)
  }
})

test('a token without the release cannot read or answer authentications, though the sandbox can still create them', async () => {
  const all = await tokenResponse()
  assert.equal(all.statusCode, 200, all.body)
  const granted: string[] = all.json().scope.split(' ')
  assert.ok(
    !granted.includes('authentications:read') && !granted.includes('authentications:write'),
    all.body,
  )
  const token = all.json().access_token
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  const card = await issuedCard(t, token, cardBody(holder.id, account.id))
  const created = await t.api(token, 'POST', '/v1/simulate/authentications', {
    card_id: card.id,
    amount: 100,
    currency: 'USD',
  })
  assert.equal(created.statusCode, 201, created.body)
  expectError(await t.api(token, 'GET', '/v1/authentications'), 403, 'insufficient_scope')
  expectError(
    await t.api(token, 'GET', `/v1/authentications/${created.json().id}`),
    403,
    'insufficient_scope',
  )
  expectError(
    await t.api(token, 'POST', `/v1/authentications/${created.json().id}/approve`),
    403,
    'insufficient_scope',
  )
})
