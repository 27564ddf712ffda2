import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createServer, connect, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, test } from 'node:test'
import { Svc, type SvcEvent } from '../../sdk/src/index.js'
import type { TestApp } from '../helpers/app.js'
import { freePort, sdkTenant, startListeningApp, type SdkTenant } from '../sdk/support.js'
import { startReceiver, type Receiver } from '../webhooks/helpers.js'

// `svc listen` as the developer runs it (bin/svc.js), reaching the service through a TCP relay the test can cut:
// events made while the connection is down arrive after it comes back, once each, signed with the session secret.
const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url))

let t: TestApp
let tenant: SdkTenant
let relayPort: number
let appPort: number
let relayUrl: string
let appUrl: string
let relay: Server | null = null
const sockets = new Set<Socket>()

/** Opens the relay on relayPort, forwarding each connection to the app. */
async function openRelay(): Promise<void> {
  relay = createServer((inbound) => {
    const outbound = connect(appPort, '127.0.0.1')
    sockets.add(inbound).add(outbound)
    inbound.pipe(outbound).pipe(inbound)
    const drop = () => {
      inbound.destroy()
      outbound.destroy()
      sockets.delete(inbound)
      sockets.delete(outbound)
    }
    inbound.on('error', drop).on('close', drop)
    outbound.on('error', drop).on('close', drop)
  })
  await new Promise<void>((resolve) => relay!.listen(relayPort, '127.0.0.1', resolve))
}

/** Stops accepting and drops every open connection, as a network outage would. */
async function cutRelay(): Promise<void> {
  const closed = new Promise<void>((resolve) => relay!.close(() => resolve()))
  for (const s of sockets) s.destroy()
  sockets.clear()
  await closed
  relay = null
}

let receiver: Receiver
let child: ChildProcess
let output = ''
let errors = ''

before(async () => {
  // The service's BASE_URL is the relay's address: the CLI signs its client assertion for that token URL.
  relayPort = await freePort()
  relayUrl = `http://127.0.0.1:${relayPort}`
  const started = await startListeningApp({
    env: { EVENT_STREAM_POLL_MS: '50', BASE_URL: relayUrl },
  })
  t = started.t
  appUrl = started.baseUrl
  appPort = Number(new URL(appUrl).port)
  tenant = await sdkTenant(t, appUrl)
  await openRelay()
  const clientFile = join(mkdtempSync(join(tmpdir(), 'svc-listen-resume-')), 'sandbox-client.json')
  writeFileSync(
    clientFile,
    JSON.stringify({
      client_id: tenant.clientId,
      organization_id: tenant.organizationId,
      environment: 'sandbox',
      token_url: `${relayUrl}/oauth/token`,
      kid: tenant.privateJwk.kid,
      alg: 'ES256',
      private_jwk: tenant.privateJwk,
      programs: [],
    }),
  )
  receiver = await startReceiver('/local-hooks')
  const { DATABASE_URL: _d, BASE_URL: _b, ...env } = process.env
  child = spawn(
    process.execPath,
    [
      bin,
      'listen',
      '--forward-to',
      receiver.url,
      '--events',
      'cardholder.created',
      '--client-file',
      clientFile,
      '--base-url',
      relayUrl,
    ],
    {
      env: { ...env, DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-listen-resume-data-')) },
    },
  )
  child.stdout!.on('data', (c) => {
    output += c
  })
  child.stderr!.on('data', (c) => {
    errors += c
  })
  const until = Date.now() + 30_000
  while (!output.includes('Ready')) {
    if (Date.now() > until || child.exitCode !== null)
      throw new Error(`svc listen did not start: ${output} ${errors}`)
    await new Promise((r) => setTimeout(r, 50))
  }
})
after(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r))
    child.kill('SIGINT')
    await exited
  }
  await receiver?.close()
  if (relay) await cutRelay()
  await t.close()
})

test('three events arrive signed with the printed secret; events made while the connection is cut arrive after it is back, none lost or repeated', {
  timeout: 90_000,
}, async () => {
  const secret = /signing secret is (whsec_\S+)/.exec(output)?.[1]
  assert.ok(secret, output)
  // The test's own calls go straight to the service (not through the relay), signed for its BASE_URL.
  const svc = tenant.svc({
    baseUrl: relayUrl,
    fetch: (url, init) => fetch(String(url).replace(relayUrl, appUrl), init),
  })
  const make = async (label: string) =>
    (
      await svc.cardholders.create({
        type: 'individual',
        first_name: 'Cut',
        last_name: label,
        email: `cut.${label}.${Date.now()}@example.com`,
      })
    ).id

  const first = [await make('a'), await make('b'), await make('c')]
  await receiver.waitFor(3, 15_000)

  await cutRelay()
  const whileCut = [await make('d'), await make('e')]
  await new Promise((r) => setTimeout(r, 1_500))
  assert.equal(receiver.received.length, 3, 'nothing arrives while the connection is cut')
  await openRelay()

  await receiver.waitFor(5, 30_000)
  const after = await make('f')
  await receiver.waitFor(6, 15_000)
  await new Promise((r) => setTimeout(r, 300))

  const got = receiver.received.map((r) => {
    const event = Svc.webhooks.constructEvent<SvcEvent>(
      r.raw,
      r.headers['svc-signature'] as string,
      secret,
    )
    return (event.data.object as { id: string }).id
  })
  assert.deepEqual(got, [...first, ...whileCut, after])
  assert.match(errors, /Stream closed/)
  assert.match(output, /Reconnected, resuming after evt_/)
})
