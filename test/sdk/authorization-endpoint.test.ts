import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { answerAuthorizationRequest, Svc, SvcError } from '../../sdk/src/index.js'
import type { TestApp } from '../helpers/app.js'
import { fundedCard, MERCHANT, sdkTenant, startListeningApp } from './support.js'

// svc.authorizationEndpoint against the real routes, and a local endpoint answering with answerAuthorizationRequest.
let t: TestApp
let svc: Svc
let programId: string
let server: Server
let url: string
let secret = ''
const seen: { ok: boolean; error?: string }[] = []

before(async () => {
  const started = await startListeningApp()
  t = started.t
  const tenant = await sdkTenant(t, started.baseUrl)
  svc = tenant.svc()
  programId = tenant.programs.full.id
  // Approves up to 20.00 of what is asked, declines above 50.00.
  server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      answerAuthorizationRequest(
        Buffer.concat(chunks),
        req.headers['svc-signature'],
        secret,
        (authorization) =>
          authorization.amount > 5_000
            ? false
            : authorization.amount > 2_000
              ? { approved: true, amount: 2_000 }
              : true,
      )
        .then((answer) => {
          seen.push({ ok: true })
          res.writeHead(answer.status, answer.headers).end(answer.body)
        })
        .catch((err: Error) => {
          seen.push({ ok: false, error: err.message })
          res.writeHead(400).end()
        })
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/authorize`
})
after(async () => {
  await new Promise((r) => server.close(r))
  await t.close()
})

test('put, retrieve, rotate the secret, answer real requests with answerAuthorizationRequest, page the attempts, delete', async () => {
  await assert.rejects(
    svc.authorizationEndpoint.retrieve(),
    (err: unknown) =>
      err instanceof SvcError &&
      err.status === 404 &&
      err.code === 'authorization_endpoint_not_found',
  )
  const created = await svc.authorizationEndpoint.update({
    url,
    timeout_ms: 1_000,
    stand_in: 'decline',
  })
  assert.equal(created.object, 'authorization_endpoint')
  assert.match(created.id, /^aep_/)
  assert.match(created.secret!, /^whsec_/)
  assert.deepEqual(
    [created.url, created.timeout_ms, created.stand_in, created.status],
    [url, 1_000, 'decline', 'enabled'],
  )
  const changed = await svc.authorizationEndpoint.update({ url, timeout_ms: 1_500 })
  assert.equal(changed.id, created.id)
  assert.equal(changed.timeout_ms, 1_500)
  assert.equal(changed.secret, undefined, 'the secret is shown only when created or rotated')
  assert.equal((await svc.authorizationEndpoint.retrieve()).secret, undefined)

  const rotated = await svc.authorizationEndpoint.rotateSecret()
  assert.match(rotated.secret!, /^whsec_/)
  assert.notEqual(rotated.secret, created.secret)
  secret = rotated.secret! // the receiver verifies with the new secret only

  const { cardId } = await fundedCard(svc, programId)
  const full = await svc.simulate.authorizations.create({
    card_id: cardId,
    amount: 1_500,
    currency: 'USD',
    merchant: MERCHANT,
  })
  const partial = await svc.simulate.authorizations.create({
    card_id: cardId,
    amount: 3_000,
    currency: 'USD',
    merchant: MERCHANT,
  })
  const declined = await svc.simulate.authorizations.create({
    card_id: cardId,
    amount: 6_000,
    currency: 'USD',
    merchant: MERCHANT,
  })
  assert.deepEqual(
    seen,
    [{ ok: true }, { ok: true }, { ok: true }],
    'each request verified with the rotated secret',
  )
  assert.deepEqual(
    [full.status, full.held_amount, full.decision.source],
    ['pending', 1_500, 'integrator'],
  )
  assert.deepEqual(
    [partial.status, partial.held_amount, partial.decision.source],
    ['pending', 2_000, 'integrator'],
  )
  assert.deepEqual(
    [declined.status, declined.decline_reason, declined.decision.source],
    ['declined', 'integrator_declined', 'integrator'],
  )

  // Newest first, one per page: the list follows next_cursor.
  const first = await svc.authorizationEndpoint.listAttempts({ limit: 1 }).firstPage()
  assert.equal(first.data.length, 1)
  assert.equal(first.has_more, true)
  const attempts = await svc.authorizationEndpoint.listAttempts({ limit: 1 }).toArray()
  assert.deepEqual(
    attempts.map((a) => [
      a.authorization_id,
      a.outcome,
      a.approved_amount,
      a.response_status,
      a.request_type,
    ]),
    [
      [declined.id, 'declined', null, 200, 'authorization'],
      [partial.id, 'partially_approved', 2_000, 200, 'authorization'],
      [full.id, 'approved', 1_500, 200, 'authorization'],
    ],
  )
  assert.ok(attempts.every((a) => a.object === 'authorization_endpoint_attempt' && a.url === url))

  const deleted = await svc.authorizationEndpoint.del()
  assert.deepEqual(deleted, { id: created.id, object: 'authorization_endpoint', deleted: true })
  const after = await svc.simulate.authorizations.create({
    card_id: cardId,
    amount: 100,
    currency: 'USD',
    merchant: MERCHANT,
  })
  assert.equal(after.decision.source, 'svc', 'without an endpoint the service decides alone')
  assert.equal(seen.length, 3)
})

test('answerAuthorizationRequest refuses a request not signed with the secret given', async () => {
  const body = JSON.stringify({
    id: 'evt_x',
    type: 'authorization.request',
    data: { object: { id: 'auth_x', amount: 100, currency: 'USD' } },
  })
  await assert.rejects(
    answerAuthorizationRequest(
      body,
      Svc.webhooks.generateTestHeader(body, 'whsec_other'),
      'whsec_mine',
      () => true,
    ),
    /Svc-Signature/i,
  )
  const ok = await answerAuthorizationRequest(
    body,
    Svc.webhooks.generateTestHeader(body, 'whsec_mine'),
    'whsec_mine',
    () => ({ approved: true, amount: 50 }),
  )
  assert.deepEqual(JSON.parse(ok.body), { approved: true, amount: 50 })
})
