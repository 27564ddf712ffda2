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

test("npm start's demo owner: a fresh one-time link at each start until the password is set, then the sign-in page", async () => {
  const first = await seedDemo(t.deps)
  assert.equal(first.console.kind, 'invitation')
  assert.equal(first.console.email, 'owner@demo.test')
  assert.match(first.console.url, /^http:\/\/svc\.test\/console\/invitations\/[A-Za-z0-9]+$/)
  const second = await seedDemo(t.deps)
  assert.equal(second.created, false)
  assert.equal(second.console.kind, 'invitation')
  assert.notEqual(second.console.url, first.console.url)
  assert.equal(
    (await new Agent(t).get(new URL(first.console.url).pathname)).statusCode,
    404,
    "the previous start's link stopped working",
  )

  const agent = new Agent(t)
  const set = await agent.submit(new URL(second.console.url).pathname, {
    password: GOOD_PASSWORD,
    password_confirmation: GOOD_PASSWORD,
  })
  assert.equal(set.statusCode, 303)
  const home = await agent.get('/console')
  assert.match(home.body, /Demo organization/)
  assert.match(home.body, /1 of 4 done|2 of 4 done/, 'the demo has programs and a client')
  assert.match(home.body, /data-item="program">\s*<span class="mark" aria-hidden="true">✓/)
  const third = await seedDemo(t.deps)
  assert.deepEqual(third.console, {
    kind: 'sign_in',
    email: 'owner@demo.test',
    url: 'http://svc.test/console/sign-in',
  })
})

/** Runs the CLI against the test app (its operator token, its address); answers its exit code and output. */
function cli(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const env = {
    PATH: process.env.PATH,
    DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-cli-')),
    SVC_OPERATOR_TOKEN: OPERATOR_TOKEN,
    LOG_LEVEL: 'silent',
  }
  const child = spawn(process.execPath, [bin, ...args, '--base-url', origin], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => {
    out += d
  })
  child.stderr.on('data', (d) => {
    err += d
  })
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out, err })))
}

test('svc user invite prints a one-time link for a member of an organization and for an operator', {
  timeout: 60_000,
}, async () => {
  const org = await t.operator('POST', '/operator/v1/organizations', { name: 'Hooli' })
  const member = await cli([
    'user',
    'invite',
    '--org',
    org.id,
    '--email',
    'gavin@example.test',
    '--role',
    'viewer',
  ])
  assert.equal(member.code, 0, member.err)
  assert.match(
    member.out,
    new RegExp(`Invitation for gavin@example.test \\(viewer of ${org.id}\\)`),
  )
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

test("svc program create, update and list carry a program's foreign-exchange settings through the operator API", {
  timeout: 120_000,
}, async () => {
  const org = await t.operator('POST', '/operator/v1/organizations', { name: 'Pied Piper' })
  const created = await cli([
    'program',
    'create',
    '--org',
    org.id,
    '--env',
    'sandbox',
    '--name',
    'Travel',
    '--processor',
    'sim_full',
    '--currencies',
    'USD,jpy',
    '--foreign-spend',
    'blocked',
    '--fx-markup-bps',
    '175',
    '--fx-fee',
    'separate',
  ])
  assert.equal(created.code, 0, created.err)
  const program = JSON.parse(created.out)
  assert.deepEqual(
    [program.currencies, program.foreign_spend, program.fx_markup_bps, program.fx_fee],
    [['USD', 'JPY'], 'blocked', 175, 'separate'],
  )

  const updated = await cli([
    'program',
    'update',
    program.id,
    '--foreign-spend',
    'allowed',
    '--fx-markup-bps',
    '0',
  ])
  assert.equal(updated.code, 0, updated.err)
  assert.deepEqual(JSON.parse(updated.out), {
    ...program,
    foreign_spend: 'allowed',
    fx_markup_bps: 0,
    updated_at: JSON.parse(updated.out).updated_at,
  })

  const listed = await cli(['program', 'list', '--org', org.id])
  assert.equal(listed.code, 0, listed.err)
  assert.deepEqual(
    JSON.parse(listed.out).map((p: any) => [p.id, p.fx_markup_bps, p.fx_fee]),
    [[program.id, 0, 'separate']],
  )

  const refused = await cli(['program', 'update', program.id, '--fx-markup-bps', '2000'])
  assert.equal(refused.code, 1)
  assert.match(refused.err, /400 .*invalid_parameter.*fx_markup_bps/)
  const words = await cli(['program', 'update', program.id, '--fx-markup-bps', 'lots'])
  assert.equal(words.code, 1)
  assert.match(words.err, /invalid_parameter.*fx_markup_bps/)
  const unknown = await cli([
    'program',
    'create',
    '--org',
    org.id,
    '--env',
    'sandbox',
    '--name',
    'Gold',
    '--processor',
    'sim_full',
    '--currencies',
    'XAU',
  ])
  assert.equal(unknown.code, 1)
  assert.match(unknown.err, /invalid_parameter.*currencies\[0\]/)
  assert.equal((await t.operator('GET', `/operator/v1/programs/${program.id}`)).fx_markup_bps, 0)
})
