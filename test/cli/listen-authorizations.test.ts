import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, test } from 'node:test'
import { Svc, SvcError } from '../../sdk/src/index.js'
import type { TestApp } from '../helpers/app.js'
import {
  fundedCard,
  MERCHANT,
  sdkTenant,
  startListeningApp,
  type SdkTenant,
} from '../sdk/support.js'

// `svc listen --authorizations URL` as the developer runs it (bin/svc.js in a child process) against the real
// application with its authorization endpoint: the service asks the CLI, the CLI verifies and relays to a local process.
const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url))

let t: TestApp
let tenant: SdkTenant
let clientFile: string

function cliEnv(): NodeJS.ProcessEnv {
  const { DATABASE_URL: _d, BASE_URL: _b, ...env } = process.env
  return { ...env, DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-cli-auth-')) }
}

async function until(what: () => boolean, label: () => string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms
  while (!what()) {
    if (Date.now() > end) assert.fail(label())
    await new Promise((r) => setTimeout(r, 50))
  }
}

before(async () => {
  const started = await startListeningApp({ env: { EVENT_STREAM_POLL_MS: '50' } })
  t = started.t
  tenant = await sdkTenant(t, started.baseUrl)
  clientFile = join(mkdtempSync(join(tmpdir(), 'svc-cli-client-')), 'sandbox-client.json')
  writeFileSync(
    clientFile,
    JSON.stringify({
      client_id: tenant.clientId,
      organization_id: tenant.organizationId,
      environment: 'sandbox',
      token_url: `${started.baseUrl}/oauth/token`,
      kid: tenant.privateJwk.kid,
      alg: 'ES256',
      private_jwk: tenant.privateJwk,
      programs: [],
    }),
  )
})
after(() => t.close())

describe('svc listen --authorizations', () => {
  let local: Server
  let localUrl: string
  let relayPort = 0
  let child: ChildProcess
  let output = ''
  let errors = ''
  let secret = ''
  /** What the local process answers next, and the requests it received (verified with the printed secret). */
  let answer: unknown = { approved: false }
  const received: { verified: boolean; body: any }[] = []

  before(async () => {
    local = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const raw = Buffer.concat(chunks)
        received.push({
          verified: Svc.webhooks.verifySignature(raw, req.headers['svc-signature'], secret),
          body: JSON.parse(raw.toString('utf8')),
        })
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer))
      })
    })
    await new Promise<void>((r) => local.listen(0, '127.0.0.1', r))
    localUrl = `http://127.0.0.1:${(local.address() as AddressInfo).port}/authorize`
    // A port that was free a moment ago, for the relay (--authorizations-port pins it).
    const probe = createServer()
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r))
    relayPort = (probe.address() as AddressInfo).port
    await new Promise((r) => probe.close(r))
    child = spawn(
      process.execPath,
      [
        bin,
        'listen',
        '--forward-to',
        'http://127.0.0.1:9/none',
        '--events',
        'dispute.created',
        '--authorizations',
        localUrl,
        '--authorizations-port',
        String(relayPort),
        '--client-file',
        clientFile,
      ],
      { env: cliEnv() },
    )
    child.stdout!.on('data', (c) => {
      output += c
    })
    child.stderr!.on('data', (c) => {
      errors += c
    })
    await until(
      () => output.includes('Ready') || child.exitCode !== null,
      () => `svc listen did not start: ${output} ${errors}`,
    )
    assert.equal(child.exitCode, null, `${output} ${errors}`)
    secret = /verify Svc-Signature with (whsec_\S+) and answer/.exec(output)?.[1] ?? ''
    assert.ok(secret, output)
  })
  after(async () => {
    if (child.exitCode === null) {
      child.kill('SIGINT')
      await new Promise((r) => child.once('exit', r))
    }
    await new Promise((r) => local.close(r))
  })

  test('registers its relay as the endpoint; a local {"approved": false} declines the authorization as the integrator\'s decision', async () => {
    const svc = tenant.svc()
    const endpoint = await svc.authorizationEndpoint.retrieve()
    assert.equal(endpoint.url, `http://127.0.0.1:${relayPort}/svc-listen/authorizations`)
    assert.equal(endpoint.stand_in, 'decline')
    const { cardId } = await fundedCard(svc, tenant.programs.full.id)
    answer = { approved: false }
    const auth = await svc.simulate.authorizations.create({
      card_id: cardId,
      amount: 2_500,
      currency: 'USD',
      merchant: MERCHANT,
    })
    assert.equal(auth.status, 'declined')
    assert.equal(auth.decline_reason, 'integrator_declined')
    assert.equal(auth.decision.source, 'integrator')
    assert.equal(received.length, 1)
    assert.equal(
      received[0].verified,
      true,
      'the local process verifies the relayed request with the printed secret',
    )
    assert.equal(received[0].body.type, 'authorization.request')
    assert.equal(received[0].body.data.object.id, auth.id)
    await until(
      () => output.includes(`${auth.id}  authorization 25.00 USD  → ${localUrl} [200 declined]`),
      () => output,
      5_000,
    )
    const [attempt] = await svc.authorizationEndpoint
      .listAttempts({ limit: 1 })
      .firstPage()
      .then((p) => p.data)
    assert.equal(attempt.authorization_id, auth.id)
    assert.equal(attempt.outcome, 'declined')
  })

  test('a partial amount from the local process is the hold', async () => {
    const svc = tenant.svc()
    const { cardId } = await fundedCard(svc, tenant.programs.full.id)
    answer = { approved: true, amount: 1_800 }
    const auth = await svc.simulate.authorizations.create({
      card_id: cardId,
      amount: 2_500,
      currency: 'USD',
      merchant: MERCHANT,
    })
    assert.equal(auth.status, 'pending')
    assert.equal(auth.approved, true)
    assert.equal(auth.held_amount, 1_800)
    assert.equal(auth.decision.source, 'integrator')
    await until(
      () =>
        output.includes(
          `${auth.id}  authorization 25.00 USD  → ${localUrl} [200 approved 18.00 of 25.00]`,
        ),
      () => output,
      5_000,
    )
  })

  test("a request not signed with the endpoint's secret is refused and not relayed", async () => {
    const relayUrl = (await tenant.svc().authorizationEndpoint.retrieve()).url
    const before = received.length
    const body = JSON.stringify({
      type: 'authorization.request',
      data: { object: { id: 'auth_forged' } },
    })
    const res = await fetch(relayUrl, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'svc-signature': Svc.webhooks.generateTestHeader(body, 'whsec_not_the_one'),
      },
    })
    assert.equal(res.status, 400)
    assert.equal(received.length, before)
    await until(
      () => errors.includes('Refused an authorization request'),
      () => errors,
      5_000,
    )
  })

  test('on exit the endpoint registered for the session is removed', async () => {
    child.kill('SIGINT')
    await new Promise((r) => child.once('exit', r))
    assert.match(output, /Removed the authorization endpoint registered for this session/)
    await assert.rejects(
      tenant.svc().authorizationEndpoint.retrieve(),
      (err: unknown) => err instanceof SvcError && err.code === 'authorization_endpoint_not_found',
    )
  })
})

test('an authorization endpoint registered otherwise is not replaced: svc listen --authorizations stops and says so', async () => {
  const svc = tenant.svc()
  await svc.authorizationEndpoint.update({ url: 'http://127.0.0.1:9/mine' })
  try {
    const res = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
      const probe = spawn(
        process.execPath,
        [
          bin,
          'listen',
          '--forward-to',
          'http://127.0.0.1:9/none',
          '--authorizations',
          'http://127.0.0.1:9/auth',
          '--client-file',
          clientFile,
        ],
        { env: cliEnv() },
      )
      let stderr = ''
      probe.stderr.on('data', (c) => {
        stderr += c
      })
      probe.on('exit', (status) => resolve({ status, stderr }))
    })
    assert.equal(res.status, 1, res.stderr)
    assert.match(
      res.stderr,
      /already has an authorization endpoint \(http:\/\/127\.0\.0\.1:9\/mine\); --authorizations would replace it/,
    )
    assert.equal((await svc.authorizationEndpoint.retrieve()).url, 'http://127.0.0.1:9/mine')
  } finally {
    await svc.authorizationEndpoint.del()
  }
})
