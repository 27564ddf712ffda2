import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { authorize, fundedCard } from './support.js'

const GUIDE = fileURLToPath(new URL('../../docs/guides/authorization-endpoint.md', import.meta.url))

/** The guide's endpoint program (its only `js` block), listening on `port` instead of 4343. */
function guideEndpoint(port: number): string {
  const blocks = [...readFileSync(GUIDE, 'utf8').matchAll(/^```js\n([\s\S]*?)^```/gm)].map(
    (m) => m[1],
  )
  assert.equal(blocks.length, 1)
  assert.ok(blocks[0].includes('.listen(4343,'))
  return blocks[0].replace('.listen(4343,', `.listen(${port},`)
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })

let t: TestApp
let tenant: TestClient
let child: ChildProcess | undefined

before(async () => {
  t = await startTestApp()
  tenant = await createTenant(t)
})
after(async () => {
  child?.kill()
  await t.close()
})

test("the guide's endpoint, run as written, verifies the signature and approves up to 100.00, declining above", async () => {
  const token = await tenant.token()
  const port = await freePort()
  const file = join(mkdtempSync(join(tmpdir(), 'authorize-')), 'authorize.mjs')
  writeFileSync(file, guideEndpoint(port))
  const ep = (
    await t.api(token, 'PUT', '/v1/authorization_endpoint', {
      url: `http://127.0.0.1:${port}/authorize`,
      timeout_ms: 2000,
    })
  ).json()
  child = spawn(process.execPath, [file], {
    env: { ...process.env, AUTH_SECRET: ep.secret },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  await new Promise<void>((resolve, reject) => {
    child!.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('listening')) resolve()
    })
    child!.on('exit', (code) => reject(new Error(`the guide's endpoint exited (${code})`)))
  })

  const f = await fundedCard(t, tenant, token, 100_000)
  const approved = await authorize(t, token, f.card.id, 2500)
  assert.equal(approved.status, 'pending')
  assert.equal(approved.decision.source, 'integrator')
  const declined = await authorize(t, token, f.card.id, 25000)
  assert.equal(declined.decline_reason, 'integrator_declined')
  assert.equal(declined.decision.source, 'integrator')

  // After a rotation the replaced secret still signs beside the new one: the endpoint started with it keeps verifying.
  await t.api(token, 'POST', '/v1/authorization_endpoint/rotate_secret', {})
  assert.equal((await authorize(t, token, f.card.id, 100)).decision.source, 'integrator')
  // A new endpoint has a new secret only: the signature check fails, the endpoint answers 400 and the stand-in (decline) decides.
  await t.api(token, 'DELETE', '/v1/authorization_endpoint')
  await t.api(token, 'PUT', '/v1/authorization_endpoint', {
    url: `http://127.0.0.1:${port}/authorize`,
    timeout_ms: 2000,
  })
  const refused = await authorize(t, token, f.card.id, 100)
  assert.equal(refused.decline_reason, 'integrator_unavailable')
  assert.equal(refused.decision.stand_in_reason, 'error')
  const [attempt] = (
    await t.api(token, 'GET', '/v1/authorization_endpoint/attempts?limit=1')
  ).json().data
  assert.equal(attempt.response_status, 400)
})
