import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { after, before, test } from 'node:test'
import { EVENT_TYPES } from '../../src/modules/events/catalog.js'
import { TRIGGERS, trigger } from '../../src/cli/trigger.js'
import type { TestApp } from '../helpers/app.js'
import { sdkTenant, startListeningApp, type SdkTenant } from '../sdk/support.js'

// `svc trigger --list` names every catalogue type a sandbox flow can cause, and each of those flows, run through the
// SDK against the real application on a real port, creates an event of that type about the object the flow made.
const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url))

/** Types no sandbox flow can cause: each waits for time to pass (a job), a client-side secret or a browser. */
const NO_SANDBOX_FLOW: Record<string, string> = {
  'card.expired': 'the card.expire job, once the expiry month has ended',
  'authorization_rule.backtest_completed':
    'the authorization_rule.backtest job, run by a worker (svc worker) after POST …/backtests',
  'card.pin_set': "a PIN block encrypted with the card's PIN key on the client",
  'card.details_viewed':
    'a browser opening the hosted card details page in an iframe on its origin',
  'esim.expired': "the esim.check_validity sweep, once the last package's validity has ended",
  'webhook_endpoint.disabled': 'the delivery worker, after 72 hours of failures',
}

let t: TestApp
let tenant: SdkTenant

before(async () => {
  const started = await startListeningApp({ env: { SVC_RELEASES: 'three_d_secure' } })
  t = started.t
  tenant = await sdkTenant(t, started.baseUrl)
  await tenant.svc().simulate.esim.provisioning({ latency_ms: 0 })
})
after(() => t.close())

test('svc trigger --list prints every catalogue type that has a sandbox flow, one a line, in catalogue order', () => {
  const env = { ...process.env }
  delete env.DATABASE_URL
  const res = spawnSync(process.execPath, [bin, 'trigger', '--list'], {
    encoding: 'utf8',
    env,
    timeout: 60_000,
  })
  assert.equal(res.status, 0, res.stderr)
  const listed = res.stdout.trim().split('\n')
  assert.deepEqual(
    listed,
    EVENT_TYPES.filter((type) => !(type in NO_SANDBOX_FLOW)),
  )
  assert.deepEqual(listed, Object.keys(TRIGGERS))
})

test('each listed trigger creates an event of its type about the object its flow made', async () => {
  const svc = tenant.svc()
  const failures: string[] = []
  for (const type of Object.keys(TRIGGERS)) {
    const steps: string[] = []
    try {
      const id = await trigger(svc, type, (line) => steps.push(line))
      if (!id) {
        failures.push(`${type}: no event found (${steps.join('; ')})`)
        continue
      }
      const event = await svc.events.retrieve(id)
      if (event.type !== type) failures.push(`${type}: the event ${id} is ${event.type}`)
    } catch (err) {
      failures.push(`${type}: ${(err as Error).message} (${steps.join('; ')})`)
    }
  }
  assert.deepEqual(failures, [])
})
