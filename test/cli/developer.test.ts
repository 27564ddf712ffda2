import assert from 'node:assert/strict'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, test } from 'node:test'
import { Svc, type SvcEvent } from '../../sdk/src/index.js'
import { JobRunner } from '../../src/jobs/runner.js'
import type { TestApp } from '../helpers/app.js'
import { sdkTenant, startListeningApp, type SdkTenant } from '../sdk/support.js'
import { startReceiver, type Receiver } from '../webhooks/helpers.js'
import { TRIGGERS } from '../../src/cli/trigger.js'

// `svc listen`, `svc trigger` and `svc events resend` run as the developer runs them (bin/svc.js in a child process)
// against the real application on a real port, with a client file like the one `npm start` writes.
const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url))

let t: TestApp
let baseUrl: string
let tenant: SdkTenant
let clientFile: string

/** The test's environment without DATABASE_URL or BASE_URL: the CLI finds the server in the client file. */
function cliEnv(): NodeJS.ProcessEnv {
  const { DATABASE_URL: _d, BASE_URL: _b, ...env } = process.env
  return { ...env, DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-cli-dev-')) }
}

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    env: cliEnv(),
    timeout: 60_000,
  })
}

function runAsync(
  args: string[],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env: cliEnv() })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c) => {
      stdout += c
    })
    child.stderr.on('data', (c) => {
      stderr += c
    })
    child.on('exit', (status) => resolve({ status, stdout, stderr }))
  })
}

before(async () => {
  ;({ t, baseUrl } = await startListeningApp({
    env: { EVENT_STREAM_POLL_MS: '50', EVENT_STREAM_LIFETIME_MS: '4000' },
  }))
  tenant = await sdkTenant(t, baseUrl)
  clientFile = join(mkdtempSync(join(tmpdir(), 'svc-cli-client-')), 'sandbox-client.json')
  writeFileSync(
    clientFile,
    JSON.stringify({
      client_id: tenant.clientId,
      organization_id: tenant.organizationId,
      environment: 'sandbox',
      token_url: `${baseUrl}/oauth/token`,
      kid: tenant.privateJwk.kid,
      alg: 'ES256',
      private_jwk: tenant.privateJwk,
      programs: [],
    }),
  )
})
after(() => t.close())

describe('svc listen', () => {
  let receiver: Receiver
  let child: ChildProcess
  let output = ''
  let errors = ''

  before(async () => {
    receiver = await startReceiver('/local-hooks')
    child = spawn(
      process.execPath,
      [
        bin,
        'listen',
        '--forward-to',
        receiver.url,
        '--events',
        'card.*,cardholder.created',
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
    const until = Date.now() + 30_000
    while (!output.includes('Ready')) {
      if (Date.now() > until || child.exitCode !== null)
        throw new Error(`svc listen did not start: ${output} ${errors}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  })
  after(async () => {
    child.kill('SIGINT')
    await new Promise((r) => child.once('exit', r))
    await receiver.close()
  })

  test('forwards each event of the types asked for, signed with the printed session secret, one line per event with the local status', async () => {
    const secret = /signing secret is (whsec_\S+)/.exec(output)?.[1]
    assert.ok(secret, output)
    const svc = tenant.svc()
    const made: string[] = []
    for (let i = 0; i < 3; i++) {
      const holder = await svc.cardholders.create({
        type: 'individual',
        first_name: 'Listen',
        last_name: `Er${i}`,
        email: `listen.${i}.${Date.now()}@example.com`,
      })
      await svc.cardholders.update(holder.id, { metadata: { a: 'b' } }) // cardholder.updated: not asked for
      made.push(holder.id)
    }
    const created = (
      await svc.events.list({ type: 'cardholder.created', limit: 3 }).firstPage()
    ).data.reverse()
    assert.deepEqual(
      created.map((e) => (e.data.object as { id: string }).id),
      made,
    )
    const deliveries = await receiver.waitFor(3, 10_000)
    for (const [i, delivery] of deliveries.entries()) {
      const event: SvcEvent = Svc.webhooks.constructEvent<SvcEvent>(
        delivery.raw,
        delivery.headers['svc-signature'] as string,
        secret,
      )
      assert.deepEqual(event, created[i])
      assert.equal(delivery.headers['svc-event-type'], 'cardholder.created')
    }
    const until = Date.now() + 5_000
    while (!created.every((e) => output.includes(`${e.id}  → ${receiver.url} [200]`))) {
      if (Date.now() > until)
        assert.fail(`no line for each of ${created.map((e) => e.id)}: ${output}`)
      await new Promise((r) => setTimeout(r, 50))
    }
    await new Promise((r) => setTimeout(r, 300))
    assert.equal(receiver.received.length, 3, 'cardholder.updated is not forwarded')
  })

  test('when the server closes the stream it reconnects after the last event and misses nothing', async () => {
    const before = receiver.received.length
    // The stream's lifetime is 4 s here: events made across at least one reconnection all arrive, once each.
    const made: string[] = []
    const svc = tenant.svc()
    for (let i = 0; i < 5; i++) {
      const holder = await svc.cardholders.create({
        type: 'individual',
        first_name: 'Re',
        last_name: `C${i}`,
        email: `reconnect.${i}.${Date.now()}@example.com`,
      })
      made.push(holder.id)
      await new Promise((r) => setTimeout(r, 1_000))
    }
    await receiver.waitFor(before + 5, 15_000)
    const got = receiver.received.slice(before).map((r) => r.body.data.object.id)
    assert.deepEqual(got, made)
    const secret = /signing secret is (whsec_\S+)/.exec(output)![1]
    for (const r of receiver.received.slice(before))
      Svc.webhooks.constructEvent(r.raw, r.headers['svc-signature'] as string, secret)
    assert.match(output, /Reconnected, resuming after evt_/)
  })
})

describe('svc trigger and svc events resend', () => {
  test('trigger --help lists every supported event type', () => {
    const help = run(['trigger', '--help'])
    assert.equal(help.status, 0)
    for (const type of [
      'card.created',
      'authorization.created',
      'transaction.created',
      'cardholder.created',
      'account.credited',
    ])
      assert.match(help.stdout, new RegExp(`^    ${type.replace('.', '\\.')}$`, 'm'))
    assert.deepEqual(
      Object.keys(TRIGGERS).filter((type) => !help.stdout.includes(type)),
      [],
    )
  })

  test('trigger transaction.created runs the sandbox flow and prints the event it caused', async () => {
    const res = await runAsync(['trigger', 'transaction.created', '--client-file', clientFile])
    assert.equal(res.status, 0, res.stderr)
    const id = /Triggered transaction\.created: (evt_\S+)/.exec(res.stdout)?.[1]
    assert.ok(id, res.stdout)
    const event = await tenant.svc().events.retrieve(id)
    assert.equal(event.type, 'transaction.created')
    assert.match(res.stdout, /authorized 25\.00 USD/)
  })

  test('trigger --currency EUR spends abroad: the USD card pays in euros, converted', async () => {
    const res = await runAsync([
      'trigger',
      'authorization.created',
      '--currency',
      'eur',
      '--client-file',
      clientFile,
    ])
    assert.equal(res.status, 0, res.stderr)
    assert.match(res.stdout, /authorized 25\.00 EUR on card_\S+ \(\d+\.\d{2} USD at [\d.]+\)/)
    const id = /Triggered authorization\.created: (evt_\S+)/.exec(res.stdout)?.[1]
    assert.ok(id, res.stdout)
    const auth = (await tenant.svc().events.retrieve(id)).data.object as {
      merchant_amount: number
      merchant_currency: string
      currency: string
      fx: { rate: string } | null
    }
    assert.equal(auth.merchant_amount, 2500)
    assert.equal(auth.merchant_currency, 'EUR')
    assert.equal(auth.currency, 'USD')
    assert.ok(auth.fx?.rate)
    const bad = run([
      'trigger',
      'authorization.created',
      '--currency',
      'XYZ',
      '--client-file',
      clientFile,
    ])
    assert.equal(bad.status, 1)
    assert.match(bad.stderr, /--currency XYZ is not an ISO 4217 currency/)
  })

  test('trigger refuses a type it cannot cause, listing those it can', () => {
    const res = run(['trigger', 'card.expired', '--client-file', clientFile])
    assert.equal(res.status, 1)
    assert.match(res.stderr, /cannot cause "card\.expired"/)
    assert.match(res.stderr, /card\.created/)
  })

  test('events resend delivers a stored event again to its subscribed endpoint', async () => {
    const receiver = await startReceiver('/resend')
    try {
      const svc = tenant.svc()
      await svc.webhookEndpoints.create({ url: receiver.url, enabled_events: ['account.created'] })
      const trig = await runAsync(['trigger', 'account.created', '--client-file', clientFile])
      const id = /Triggered account\.created: (evt_\S+)/.exec(trig.stdout)![1]
      await new JobRunner(t.deps, t.jobs, { listen: false }).drain()
      await receiver.waitFor(1)
      const res = await runAsync(['events', 'resend', id, '--client-file', clientFile])
      assert.equal(res.status, 0, res.stderr)
      assert.equal(JSON.parse(res.stdout).queued, 1)
      await new JobRunner(t.deps, t.jobs, { listen: false }).drain()
      const got = await receiver.waitFor(2)
      assert.deepEqual(
        got.map((r) => r.body.id),
        [id, id],
      )
      assert.equal(got[1].headers['svc-delivery-attempt'], '2')
    } finally {
      await receiver.close()
    }
  })

  test('a server that cannot be reached is named with where its address came from', () => {
    const res = run([
      'trigger',
      'cardholder.created',
      '--client-file',
      clientFile,
      '--base-url',
      'http://127.0.0.1:47',
    ])
    assert.equal(res.status, 1)
    assert.match(
      res.stderr,
      /cannot reach the service at http:\/\/127\.0\.0\.1:47 \(address from --base-url\): ECONNREFUSED/,
    )
  })
})
