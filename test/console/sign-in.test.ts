import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { Agent, cookieLine, GOOD_PASSWORD, invite, person, stable } from './support.js'

let t: TestApp
let orgId: string

before(async () => {
  // app.inject connects from 127.0.0.1: named as the proxy, so a test's X-Forwarded-For stands for the caller's address.
  t = await startTestApp({ env: { TRUSTED_PROXIES: '127.0.0.1' } })
  orgId = (await t.operator('POST', '/operator/v1/organizations', { name: 'Globex Payments' })).id
})
after(() => t.close())

describe('invitation, password and first sign-in', () => {
  test('an invitation link sets a password (short, common and weak ones refused), signs in, and the home page shows the organization', async () => {
    const email = 'ada.first@example.test'
    const { path } = await invite(t, { email, role: 'owner', organization_id: orgId })
    const agent = new Agent(t)
    const page = await agent.get(path)
    assert.equal(page.statusCode, 200)
    assert.match(page.body, /Set your password/)
    assert.match(page.body, /ada\.first@example\.test/)
    assert.equal(
      page.headers['referrer-policy'],
      'no-referrer',
      'the token in the URL never leaves in a Referer',
    )

    const refusals: [string, RegExp][] = [
      ['short-pw-1', /at least 12 characters/],
      ['password1234', /too common/],
      ['Password2024!', /too common/],
      ['qwertyuiopasdf', /keyboard row or a sequence/],
      ['aaaaaaaaaaaaaaaa', /repeat the same characters/],
      ['ada.first-secret-99', /email address/],
    ]
    for (const [password, message] of refusals) {
      const res = await agent.submit(path, { password, password_confirmation: password })
      assert.equal(res.statusCode, 422, password)
      assert.match(res.body, message, password)
      assert.equal(cookieLine(res, 'svc_session'), undefined, `${password}: no session`)
    }
    const mismatch = await agent.submit(path, {
      password: GOOD_PASSWORD,
      password_confirmation: `${GOOD_PASSWORD}x`,
    })
    assert.equal(mismatch.statusCode, 422)
    assert.match(mismatch.body, /two passwords differ/)

    const accepted = await agent.submit(path, {
      password: GOOD_PASSWORD,
      password_confirmation: GOOD_PASSWORD,
    })
    assert.equal(accepted.statusCode, 303)
    assert.equal(accepted.headers.location, '/console')
    const home = await agent.get('/console')
    assert.equal(home.statusCode, 200)
    assert.match(home.body, /Globex Payments/)
    assert.match(home.body, /Getting started/)

    assert.equal((await new Agent(t).get(path)).statusCode, 404, 'the link works once')
    const fresh = new Agent(t)
    const again = await fresh.signIn(email, GOOD_PASSWORD)
    assert.equal(again.statusCode, 303)
    assert.match((await fresh.get('/console')).body, /Globex Payments/)
  })

  test('an invitation link expires after 72 hours', async () => {
    const { path } = await invite(t, {
      email: 'late.comer@example.test',
      role: 'viewer',
      organization_id: orgId,
    })
    t.clock.advance(72 * 60 * 60 * 1000 + 1000)
    try {
      const agent = new Agent(t)
      assert.equal((await agent.get(path)).statusCode, 404)
    } finally {
      t.clock.reset()
    }
  })
})

describe('sign-in answers', () => {
  test('an unknown email and a wrong password answer the same page with the same status, and both take the time of a hash', async () => {
    const p = await person(t, 'developer', orgId)
    const timings = { wrong: [] as number[], unknown: [] as number[] }
    let wrongBody = ''
    let unknownBody = ''
    for (let i = 0; i < 3; i++) {
      const a = new Agent(t, { 'x-forwarded-for': `198.51.100.${10 + i}` })
      let started = performance.now()
      const wrong = await a.signIn(p.email, 'not-the-password-at-all')
      timings.wrong.push(performance.now() - started)
      const b = new Agent(t, { 'x-forwarded-for': `198.51.100.${20 + i}` })
      started = performance.now()
      const unknown = await b.signIn('nobody.here@example.test', 'not-the-password-at-all')
      timings.unknown.push(performance.now() - started)
      assert.equal(wrong.statusCode, 401)
      assert.equal(unknown.statusCode, 401)
      wrongBody = stable(wrong.body)
        .replace(p.email, 'EMAIL')
        .replace(/value="[A-Za-z0-9_-]{40,}"/g, 'value=""')
      unknownBody = stable(unknown.body)
        .replace('nobody.here@example.test', 'EMAIL')
        .replace(/value="[A-Za-z0-9_-]{40,}"/g, 'value=""')
      assert.deepEqual(Object.keys(wrong.headers).sort(), Object.keys(unknown.headers).sort())
    }
    assert.equal(wrongBody, unknownBody)
    assert.match(wrongBody, /The email or the password is not right/)
    const median = (xs: number[]) => xs.sort((x, y) => x - y)[1]
    assert.ok(
      median(timings.unknown) > median(timings.wrong) / 3,
      `unknown email ${median(timings.unknown)} ms vs wrong password ${median(timings.wrong)} ms`,
    )
  })

  test('the session cookie is HttpOnly, SameSite=Lax, scoped to /console, without Secure on http', async () => {
    const p = await person(t, 'viewer', orgId)
    const agent = new Agent(t)
    const res = await agent.signIn(p.email, p.password)
    const line = cookieLine(res, 'svc_session')!
    assert.ok(line)
    assert.match(line, /; HttpOnly/)
    assert.match(line, /; SameSite=Lax/)
    assert.match(line, /; Path=\/console(;|$)/)
    assert.doesNotMatch(line, /Secure/)
    assert.match(line, /^svc_session=[A-Za-z0-9]{40,}/)
  })

  test('sign-in issues a new random token and ignores one the request brought (no fixation)', async () => {
    const p = await person(t, 'viewer', orgId)
    const planted = 'A'.repeat(43)
    const agent = new Agent(t)
    agent.cookies.set('svc_session', planted)
    const first = await agent.signIn(p.email, p.password)
    assert.equal(first.statusCode, 303)
    const issued = agent.cookies.get('svc_session')!
    assert.notEqual(issued, planted)
    const attacker = new Agent(t)
    attacker.cookies.set('svc_session', planted)
    assert.equal(
      (await attacker.get('/console')).statusCode,
      303,
      'the planted value grants nothing',
    )

    await agent.signIn(p.email, p.password)
    assert.notEqual(
      agent.cookies.get('svc_session'),
      issued,
      'each sign-in gets a token of its own',
    )
  })
})

describe('session lifetime', () => {
  test('a session ends after 30 idle minutes, and 12 hours after sign-in however busy', async () => {
    const p = await person(t, 'developer', orgId)
    try {
      const agent = new Agent(t)
      await agent.signIn(p.email, p.password)
      t.clock.advance(29 * 60 * 1000)
      assert.equal((await agent.get('/console')).statusCode, 200, '29 idle minutes')
      t.clock.advance(29 * 60 * 1000)
      assert.equal(
        (await agent.get('/console')).statusCode,
        200,
        'used again: the idle time starts over',
      )
      t.clock.advance(31 * 60 * 1000)
      const idle = await agent.get('/console')
      assert.equal(idle.statusCode, 303)
      assert.equal(idle.headers.location, '/console/sign-in')
      assert.match(cookieLine(idle, 'svc_session') ?? '', /Max-Age=0/)
      const notice = await agent.get('/console/sign-in')
      assert.match(notice.body, /Your session has ended/)

      await agent.signIn(p.email, p.password)
      for (let hour = 0; hour < 12 * 3; hour++) {
        t.clock.advance(20 * 60 * 1000)
        const res = await agent.get('/console/account')
        if (hour < 12 * 3 - 1) assert.equal(res.statusCode, 200, `after ${(hour + 1) * 20} minutes`)
        else assert.equal(res.statusCode, 303, 'after 12 hours the session is over')
      }
    } finally {
      t.clock.reset()
    }
  })

  test('signing out ends every session of the person', async () => {
    const p = await person(t, 'developer', orgId)
    const laptop = new Agent(t)
    const phone = new Agent(t)
    await laptop.signIn(p.email, p.password)
    await phone.signIn(p.email, p.password)
    const home = await laptop.get('/console')
    const out = await laptop.post('/console/sign-out', {
      _csrf: /name="_csrf" value="([^"]+)"/.exec(home.body)![1],
    })
    assert.equal(out.statusCode, 303)
    assert.equal(out.headers.location, '/console/sign-in')
    assert.match(cookieLine(out, 'svc_session') ?? '', /Max-Age=0/)
    assert.equal((await laptop.get('/console')).statusCode, 303)
    assert.equal((await phone.get('/console')).statusCode, 303)
    assert.equal(
      (await p.agent.get('/console')).statusCode,
      303,
      'the session of the invitation too',
    )
  })

  test('a password change ends the other sessions, keeps this browser signed in with a new token, and the old password stops working', async () => {
    const p = await person(t, 'owner', orgId)
    const other = new Agent(t)
    await other.signIn(p.email, p.password)
    const before = p.agent.cookies.get('svc_session')
    const weak = await p.agent.submit(
      '/console/account',
      { current_password: p.password, new_password: 'password' },
      '/console/account/password',
    )
    assert.equal(weak.statusCode, 422)
    const wrong = await p.agent.submit(
      '/console/account',
      { current_password: 'not-my-password-1', new_password: 'amber-quartz-meadow-77' },
      '/console/account/password',
    )
    assert.equal(wrong.statusCode, 422)
    assert.match(wrong.body, /current password is not right/)
    assert.equal((await other.get('/console')).statusCode, 200, 'refusals change nothing')

    const changed = await p.agent.submit(
      '/console/account',
      { current_password: p.password, new_password: 'amber-quartz-meadow-77' },
      '/console/account/password',
    )
    assert.equal(changed.statusCode, 303)
    assert.notEqual(p.agent.cookies.get('svc_session'), before)
    assert.equal((await p.agent.get('/console')).statusCode, 200)
    assert.equal((await other.get('/console')).statusCode, 303)
    const stale = new Agent(t)
    stale.cookies.set('svc_session', before!)
    assert.equal((await stale.get('/console')).statusCode, 303)
    assert.equal((await new Agent(t).signIn(p.email, p.password)).statusCode, 401)
    assert.equal((await new Agent(t).signIn(p.email, 'amber-quartz-meadow-77')).statusCode, 303)
  })
})

describe('purge', () => {
  test('the users.purge schedule deletes sessions past their limits, expired invitations and old sign-in failures', async () => {
    const p = await person(t, 'viewer', orgId)
    await new Agent(t, { 'x-forwarded-for': '192.0.2.250' }).signIn(
      p.email,
      'wrong-password-for-purge',
    )
    await invite(t, { email: 'never.came@example.test', role: 'viewer', organization_id: orgId })
    const count = async (
      table: 'console_sessions' | 'user_invitations' | 'console_sign_in_failures',
    ) =>
      Number(
        (
          await t.deps.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      )
    assert.ok((await count('console_sessions')) > 0)
    assert.ok((await count('user_invitations')) > 0)
    assert.ok((await count('console_sign_in_failures')) > 0)
    const schedule = t.jobs.schedules.find((s) => s.type === 'users.purge')
    assert.ok(schedule, 'registered as a schedule of the users module')
    t.clock.advance(73 * 60 * 60 * 1000)
    try {
      await schedule.run(t.deps)
      assert.equal(await count('console_sessions'), 0)
      assert.equal(await count('user_invitations'), 0)
      assert.equal(await count('console_sign_in_failures'), 0)
    } finally {
      t.clock.reset()
    }
  })
})

describe('sign-in rate limits', () => {
  test('five failures for one account within 15 minutes answer 429 with Retry-After, even with the right password, until the window passes', async () => {
    const p = await person(t, 'viewer', orgId)
    try {
      for (let i = 0; i < 5; i++) {
        const res = await new Agent(t, { 'x-forwarded-for': `192.0.2.${100 + i}` }).signIn(
          p.email,
          `wrong-password-${i}-xx`,
        )
        assert.equal(res.statusCode, 401)
      }
      const blocked = await new Agent(t, { 'x-forwarded-for': '192.0.2.200' }).signIn(
        p.email,
        p.password,
      )
      assert.equal(blocked.statusCode, 429)
      assert.match(blocked.body, /Too many/)
      const retryAfter = Number(blocked.headers['retry-after'])
      assert.ok(retryAfter > 0 && retryAfter <= 15 * 60, `Retry-After ${retryAfter}`)
      assert.equal(cookieLine(blocked, 'svc_session'), undefined)
      // An unknown email is limited the same way: the limit does not tell which accounts exist.
      for (let i = 0; i < 5; i++)
        await new Agent(t, { 'x-forwarded-for': `192.0.2.${120 + i}` }).signIn(
          'ghost@example.test',
          `wrong-password-${i}-xx`,
        )
      assert.equal(
        (
          await new Agent(t, { 'x-forwarded-for': '192.0.2.201' }).signIn(
            'ghost@example.test',
            'whatever-password',
          )
        ).statusCode,
        429,
      )

      t.clock.advance(retryAfter * 1000 + 1000)
      assert.equal(
        (await new Agent(t, { 'x-forwarded-for': '192.0.2.202' }).signIn(p.email, p.password))
          .statusCode,
        303,
      )
    } finally {
      t.clock.reset()
    }
  })

  test('twenty failures from one address within 15 minutes answer 429 for any account', async () => {
    const p = await person(t, 'viewer', orgId)
    const address = { 'x-forwarded-for': '203.0.113.77' }
    for (let i = 0; i < 20; i++) {
      const res = await new Agent(t, address).signIn(
        `spray.${i}@example.test`,
        'guessed-password-1',
      )
      assert.equal(res.statusCode, 401, `attempt ${i + 1}`)
    }
    const blocked = await new Agent(t, address).signIn(p.email, p.password)
    assert.equal(blocked.statusCode, 429)
    assert.ok(Number(blocked.headers['retry-after']) > 0)
    assert.equal(
      (await new Agent(t, { 'x-forwarded-for': '203.0.113.78' }).signIn(p.email, p.password))
        .statusCode,
      303,
      'another address is not limited',
    )
  })
})

describe('on https', () => {
  test('the session cookie is Secure when BASE_URL is https', async () => {
    const secure = await startTestApp({ env: { BASE_URL: 'https://console.example.test' } })
    try {
      const p = await person(secure, 'viewer')
      const res = await new Agent(secure).signIn(p.email, p.password)
      assert.match(cookieLine(res, 'svc_session') ?? '', /; Secure/)
      assert.match(cookieLine(res, 'svc_session') ?? '', /; HttpOnly/)
    } finally {
      await secure.close()
    }
  })
})
