import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { after, before, describe, test } from 'node:test'
import { withTx } from '../../src/db/tx.js'
import { audit, passwordProblem } from '../../src/modules/users/index.js'
import { base32Decode, totpCode } from '../../src/modules/users/totp.js'
import { OPERATOR_TOKEN, startTestApp, type TestApp } from '../helpers/app.js'
import { Agent, csrfOf, GOOD_PASSWORD, invite, person } from './support.js'

const logLines: string[] = []
const sink = new Writable({
  write(chunk, _enc, done) {
    logLines.push(String(chunk))
    done()
  },
})

let t: TestApp
let orgId: string

before(async () => {
  // app.inject connects from 127.0.0.1: named as the proxy, so a test's X-Forwarded-For stands for the caller's address.
  t = await startTestApp({
    env: { LOG_LEVEL: 'debug', TRUSTED_PROXIES: '127.0.0.1' },
    logDestination: sink,
  })
  orgId = (await t.operator('POST', '/operator/v1/organizations', { name: 'Umbrella Labs' })).id
})
after(() => t.close())

async function auditRows(organizationId: string | null) {
  let q = t.deps.db.selectFrom('audit_log').selectAll().orderBy('id')
  if (organizationId) q = q.where('organization_id', '=', organizationId)
  return q.execute()
}

describe('audit log', () => {
  test('console actions that change something each write a row (who, what, object, when, address) in their own transaction', async () => {
    const owner = await person(t, 'owner', orgId, { headers: { 'x-forwarded-for': '203.0.113.9' } })
    const ownerId = (
      await t.deps.db
        .selectFrom('users')
        .select('id')
        .where('email', '=', owner.email)
        .executeTakeFirstOrThrow()
    ).id
    const invited = await owner.agent.submit(
      '/console/team',
      { email: 'new.hire@example.test', role: 'developer' },
      '/console/team/invitations',
    )
    assert.equal(invited.statusCode, 201)
    assert.match(invited.body, /http:\/\/svc\.test\/console\/invitations\/[A-Za-z0-9]+/)
    await owner.agent.signIn(owner.email, owner.password)
    await owner.agent.submit(
      '/console/account',
      { current_password: owner.password, new_password: 'copper-willow-harbor-31' },
      '/console/account/password',
    )
    await owner.agent.submit('/console', {}, '/console/sign-out')

    const rows = (await auditRows(orgId)).filter(
      (r) => r.actor_user_id === ownerId || r.object_id === ownerId,
    )
    const actions = rows.map((r) => r.action)
    assert.deepEqual(actions, [
      'user.invited',
      'invitation.accepted',
      'user.invited',
      'session.signed_in',
      'password.changed',
      'session.signed_out',
    ])
    const byOperator = rows[0]
    assert.equal(byOperator.actor_user_id, null, 'the operator API invited the owner')
    const teammate = rows[2]
    assert.equal(teammate.actor_user_id, ownerId)
    assert.match(teammate.object_id!, /^usr_/)
    for (const r of rows.slice(1)) {
      assert.equal(r.address, '203.0.113.9')
      assert.equal(r.organization_id, orgId)
      assert.match(r.id, /^aud_/)
    }
  })

  test("owners read their organization's log, newest first, 50 a page; operators read the whole platform's", async () => {
    const owner = await person(t, 'owner', orgId)
    const other = await person(t, 'owner')
    const ownerId = (
      await t.deps.db
        .selectFrom('users')
        .select('id')
        .where('email', '=', owner.email)
        .executeTakeFirstOrThrow()
    ).id
    for (let i = 0; i < 60; i++) {
      await withTx(t.deps.db, (trx) =>
        audit(
          trx,
          { userId: ownerId, organizationId: orgId, now: t.deps.clock.now() },
          'test.bulk',
          `obj_${String(i).padStart(2, '0')}`,
          '192.0.2.1',
        ),
      )
    }
    const first = await owner.agent.get('/console/audit')
    assert.equal(first.statusCode, 200)
    const objects = [...first.body.matchAll(/<code>(obj_\d\d)<\/code>/g)].map((m) => m[1])
    assert.equal(objects[0], 'obj_59', 'newest first')
    assert.ok(objects.length <= 50)
    const older = /href="\/console\/audit\?before=(aud_[0-9A-Z]+)"/.exec(first.body)
    assert.ok(older, 'a link to the older page')
    const second = await owner.agent.get(`/console/audit?before=${older[1]}`)
    const more = [...second.body.matchAll(/<code>(obj_\d\d)<\/code>/g)].map((m) => m[1])
    assert.ok(more.includes('obj_00'))
    assert.ok(!more.some((o) => objects.includes(o)), 'pages do not overlap')
    assert.doesNotMatch(
      (await other.agent.get('/console/audit')).body,
      /obj_\d\d/,
      "another organization's owner sees none of it",
    )
    const operator = await person(t, 'operator')
    const platform = await operator.agent.get('/console/audit')
    assert.equal(platform.statusCode, 200)
    assert.match(platform.body, /obj_59/)
    assert.match(platform.body, new RegExp(orgId))
  })
})

describe('operator API for invitations', () => {
  const call = (body: unknown) =>
    t.app.inject({
      method: 'POST',
      url: '/operator/v1/users/invitations',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
      payload: body as never,
    })

  test('answers 201 with a one-time link; needs the operator token; checks the role against the organization', async () => {
    const ok = await call({
      email: 'Grace.Hopper@Example.TEST',
      role: 'developer',
      organization_id: orgId,
    })
    assert.equal(ok.statusCode, 201, ok.body)
    const body = ok.json()
    assert.equal(body.object, 'user_invitation')
    assert.equal(body.email, 'grace.hopper@example.test')
    assert.match(body.url, /^http:\/\/svc\.test\/console\/invitations\/[A-Za-z0-9]{40,}$/)
    assert.equal(
      new Date(body.expires_at).getTime() - new Date(body.created_at).getTime(),
      72 * 60 * 60 * 1000,
    )
    const op = await call({ email: 'ops@example.test', role: 'operator' })
    assert.equal(op.statusCode, 201)
    assert.equal(op.json().organization_id, null)

    const unauthenticated = await t.app.inject({
      method: 'POST',
      url: '/operator/v1/users/invitations',
      payload: { email: 'x@example.test', role: 'operator' },
    })
    assert.equal(unauthenticated.statusCode, 401)
    assert.equal(
      (await call({ email: 'x@example.test', role: 'operator', organization_id: orgId })).json()
        .error.code,
      'invalid_parameter',
    )
    assert.equal(
      (await call({ email: 'x@example.test', role: 'viewer' })).json().error.code,
      'missing_parameter',
    )
    assert.equal(
      (
        await call({
          email: 'x@example.test',
          role: 'viewer',
          organization_id: 'org_01J00000000000000000000000',
        })
      ).json().error.code,
      'organization_not_found',
    )
    assert.equal((await call({ email: 'not-an-email', role: 'operator' })).statusCode, 400)
    assert.equal((await call({ email: 'x@example.test', role: 'root' })).statusCode, 400)
  })

  test('inviting again before the password is set retires the older link; a person who can sign in is refused with user_already_exists', async () => {
    const first = await invite(t, {
      email: 'twice@example.test',
      role: 'viewer',
      organization_id: orgId,
    })
    const second = await invite(t, {
      email: 'TWICE@example.test',
      role: 'developer',
      organization_id: orgId,
    })
    assert.equal((await new Agent(t).get(first.path)).statusCode, 404)
    const agent = new Agent(t)
    assert.equal(
      (
        await agent.submit(second.path, {
          password: GOOD_PASSWORD,
          password_confirmation: GOOD_PASSWORD,
        })
      ).statusCode,
      303,
    )
    const again = await call({
      email: 'twice@example.test',
      role: 'viewer',
      organization_id: orgId,
    })
    assert.equal(again.statusCode, 409)
    assert.equal(again.json().error.code, 'user_already_exists')
    const elsewhere = await call({ email: 'twice@example.test', role: 'operator' })
    assert.equal(elsewhere.json().error.code, 'user_already_exists')
    const role = await t.deps.db
      .selectFrom('users')
      .select('role')
      .where('email', '=', 'twice@example.test')
      .executeTakeFirstOrThrow()
    assert.equal(role.role, 'developer')
  })
})

describe('secrets stay secret', () => {
  test('passwords are argon2id hashes carrying their parameters (m=19 MiB, t=2, p=1)', async () => {
    const p = await person(t, 'viewer', orgId)
    const row = await t.deps.db
      .selectFrom('users')
      .select('password_hash')
      .where('email', '=', p.email)
      .executeTakeFirstOrThrow()
    assert.match(
      row.password_hash!,
      /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/,
    )
    assert.ok(!row.password_hash!.includes(p.password))
    const sessions = await t.deps.db.selectFrom('console_sessions').select('token_hash').execute()
    for (const s of sessions) assert.match(s.token_hash, /^[0-9a-f]{64}$/)
  })

  test('no password, session or invitation token, TOTP secret or recovery code reaches a page it was not made for, a log line or an error', async () => {
    logLines.length = 0
    const pages: string[] = []
    const { path, url } = await invite(t, {
      email: 'secretive@example.test',
      role: 'owner',
      organization_id: orgId,
    })
    const invitationToken = url.split('/').pop()!
    const agent = new Agent(t)
    const password = 'saffron-glacier-tundra-58'
    const weak = 'secretive-pass-1'
    pages.push((await agent.submit(path, { password: weak, password_confirmation: weak })).body)
    const accepted = await agent.submit(path, { password, password_confirmation: password })
    const sessionToken = agent.cookies.get('svc_session')!
    pages.push(accepted.body)
    for (const page of [
      '/console',
      '/console/account',
      '/console/team',
      '/console/audit',
      '/console/nothing',
    ])
      pages.push((await agent.get(page)).body)
    const start = await agent.submit('/console/account', {}, '/console/account/two-step')
    const key = /Key: <code class="mono">([A-Z2-7 ]+)<\/code>/
      .exec(start.body)![1]
      .replace(/ /g, '')
    const enabled = await agent.post('/console/account/two-step/confirm', {
      _csrf: csrfOf(start.body),
      code: totpCode(base32Decode(key), t.clock.now()),
    })
    const codes = [...enabled.body.matchAll(/<li>([a-z2-7]{5}-[a-z2-7]{5})<\/li>/g)].map(
      (m) => m[1],
    )
    for (const page of ['/console', '/console/account']) pages.push((await agent.get(page)).body)
    const stranger = new Agent(t)
    pages.push((await stranger.signIn('secretive@example.test', 'wrong-guess-password-7')).body)
    pages.push((await stranger.signIn('secretive@example.test', password)).body)
    pages.push((await stranger.submit('/console/sign-in/verify', { code: codes[0] })).body)
    pages.push(
      (
        await stranger.post('/console/sign-in', {
          email: 'secretive@example.test',
          password,
          _csrf: 'forged',
        })
      ).body,
    )
    pages.push(
      (
        await agent.post('/console/account/password', {
          current_password: password,
          new_password: 'x',
        })
      ).body,
    )

    const secrets: Record<string, string> = {
      password,
      weak,
      'wrong password': 'wrong-guess-password-7',
      'session token': sessionToken,
      'TOTP key': key,
      ...Object.fromEntries(codes.map((c, i) => [`recovery code ${i}`, c])),
    }
    const logs = logLines.join('')
    assert.ok(logs.length > 0, 'the test reads the service log')
    for (const [name, secret] of Object.entries(secrets)) {
      pages.forEach((page, i) => assert.ok(!page.includes(secret), `${name} in page ${i}`))
      assert.ok(!logs.includes(secret), `${name} in the log`)
    }
    assert.ok(!logs.includes(invitationToken), 'invitation token in the log')
    assert.ok(
      !logs.includes('secretive@example.test') || !/refused[^\n]*secretive/.test(logs),
      'a refused sign-in logs no email',
    )
    assert.match(logs, /console sign-in refused/)
  })

  test('the password rules: length, the shipped list (also decorated or repeated), the email, repetition and runs', () => {
    const email = 'marie.curie@example.test'
    assert.equal(passwordProblem('correct-horse-battery-staple', email), null)
    assert.equal(passwordProblem('Tr0ub4dor&3-xylophone', email), null)
    assert.match(passwordProblem('elevenchars', email)!, /at least 12/)
    assert.match(passwordProblem('x'.repeat(257), email)!, /at most 256/)
    for (const common of [
      'iloveyou1234',
      'Qwerty123456',
      '1qaz2wsx3edc',
      'passwordpassword',
      'trustno1trustno1',
      'sunshine!!!!2024',
      'football12345',
    ]) {
      assert.match(passwordProblem(common, email) ?? '', /too common|keyboard row|repeat/, common)
    }
    assert.match(passwordProblem('MarieCurie2024!', email)!, /email/)
    assert.match(passwordProblem('abcabcabcabcabc', email)!, /repeat/)
    assert.match(passwordProblem('1234567890123', email)!, /sequence/)
    assert.match(passwordProblem('zyxwvutsrqponm', email)!, /sequence/)
  })
})
