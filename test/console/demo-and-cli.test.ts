import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { seedDemo } from '../../src/seed/demo.js'
import { listenOnPort, OPERATOR_TOKEN, startTestApp, type TestApp } from '../helpers/app.js'
import { Agent, GOOD_PASSWORD } from './support.js'

const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url))

let t: TestApp
let origin: string

before(async () => {
  t = await startTestApp()
  origin = await listenOnPort(t)
})
after(() => t.close())

test('npm start\'s demo owner: a fresh one-time link at each start until the password is set, then the sign-in page', async () => {
  const first = await seedDemo(t.deps)
  assert.equal(first.console.kind, 'invitation')
  assert.equal(first.console.email, 'owner@demo.test')
  assert.match(first.console.url, /^http:\/\/svc\.test\/console\/invitations\/[A-Za-z0-9]+$/)
  const second = await seedDemo(t.deps)
  assert.equal(second.created, false)
  assert.equal(second.console.kind, 'invitation')
  assert.notEqual(second.console.url, first.console.url)
  assert.equal((await new Agent(t).get(new URL(first.console.url).pathname)).statusCode, 404, 'the previous start\'s link stopped working')

  const agent = new Agent(t)
  const set = await agent.submit(new URL(second.console.url).pathname, { password: GOOD_PASSWORD, password_confirmation: GOOD_PASSWORD })
  assert.equal(set.statusCode, 303)
  const home = await agent.get('/console')
  assert.match(home.body, /Demo organization/)
  assert.match(home.body, /1 of 4 done|2 of 4 done/, 'the demo has programs and a client')
  assert.match(home.body, /data-item="program">\s*<span class="mark" aria-hidden="true">✓/)
  const third = await seedDemo(t.deps)
  assert.deepEqual(third.console, { kind: 'sign_in', email: 'owner@demo.test', url: 'http://svc.test/console/sign-in' })
})

/** Runs the CLI against the test app (its operator token, its address); answers its exit code and output. */
function cli(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const env = { PATH: process.env.PATH, DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-cli-')), SVC_OPERATOR_TOKEN: OPERATOR_TOKEN, LOG_LEVEL: 'silent' }
  const child = spawn(process.execPath, [bin, ...args, '--base-url', origin], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => { out += d })
  child.stderr.on('data', (d) => { err += d })
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out, err })))
}

test('svc user invite prints a one-time link for a member of an organization and for an operator', { timeout: 60_000 }, async () => {
  const org = await t.operator('POST', '/operator/v1/organizations', { name: 'Hooli' })
  const member = await cli(['user', 'invite', '--org', org.id, '--email', 'gavin@example.test', '--role', 'viewer'])
  assert.equal(member.code, 0, member.err)
  assert.match(member.out, new RegExp(`Invitation for gavin@example.test \\(viewer of ${org.id}\\)`))
  const link = /http:\/\/svc\.test(\/console\/invitations\/[A-Za-z0-9]+)/.exec(member.out)
  assert.ok(link, member.out)
  assert.match((await new Agent(t).get(link[1])).body, /gavin@example\.test/)

  const operator = await cli(['user', 'invite', '--operator', '--email', 'root@example.test'])
  assert.equal(operator.code, 0, operator.err)
  assert.match(operator.out, /platform operator/)

  const wrong = await cli(['user', 'invite', '--email', 'x@example.test'])
  assert.equal(wrong.code, 1)
  assert.match(wrong.err, /--org ORG and --role/)
  const taken = await cli(['user', 'invite', '--operator', '--email', 'gavin@example.test'])
  assert.equal(taken.code, 1)
  assert.match(taken.err, /user_already_exists/)
})
