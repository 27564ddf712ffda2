import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  base32Decode,
  base32Encode,
  hotp,
  matchTotp,
  totpCode,
  totpStep,
} from '../../src/modules/users/totp.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { Agent, cookieLine, csrfOf, person } from './support.js'

describe('TOTP (RFC 6238, node:crypto)', () => {
  const secret = Buffer.from('12345678901234567890')

  test('the RFC 4226 and RFC 6238 test vectors (SHA-1)', () => {
    const hotps = [
      '755224',
      '287082',
      '359152',
      '969429',
      '338314',
      '254676',
      '287922',
      '162583',
      '399871',
      '520489',
    ]
    hotps.forEach((code, counter) => assert.equal(hotp(secret, counter), code))
    const vectors: [number, string][] = [
      [59, '94287082'],
      [1111111109, '07081804'],
      [1111111111, '14050471'],
      [1234567890, '89005924'],
      [2000000000, '69279037'],
      [20000000000, '65353130'],
    ]
    for (const [seconds, code] of vectors)
      assert.equal(hotp(secret, Math.floor(seconds / 30), 8), code, `T=${seconds}`)
    assert.equal(totpCode(secret, new Date(59_000)), '287082')
  })

  test('a code is accepted one step early or late, not two, and never twice', () => {
    const at = new Date(1_700_000_000_000)
    const step = totpStep(at)
    assert.equal(matchTotp(secret, hotp(secret, step), at, null), step)
    assert.equal(matchTotp(secret, hotp(secret, step - 1), at, null), step - 1)
    assert.equal(matchTotp(secret, hotp(secret, step + 1), at, null), step + 1)
    assert.equal(matchTotp(secret, hotp(secret, step - 2), at, null), null)
    assert.equal(matchTotp(secret, hotp(secret, step + 2), at, null), null)
    assert.equal(matchTotp(secret, hotp(secret, step), at, step), null, 'the step already used')
    assert.equal(matchTotp(secret, '12345', at, null), null)
  })

  test('base32 round-trips (the key typed into an authenticator)', () => {
    assert.equal(base32Encode(Buffer.from('foobar')), 'MZXW6YTBOI')
    assert.deepEqual(base32Decode('mzxw 6ytb oi'), Buffer.from('foobar'))
  })
})

let t: TestApp
before(async () => {
  t = await startTestApp()
})
after(() => t.close())

/** The enrolment page's key, as shown (groups of four). */
function keyOf(body: string): Buffer {
  const match = /Key: <code class="mono">([A-Z2-7 ]+)<\/code>/.exec(body)
  assert.ok(match, 'the enrolment page shows the key')
  return base32Decode(match[1])
}

describe('two-step verification in the console', () => {
  test('enrolment shows a QR code and the key, refuses a wrong code, then turns on and shows ten recovery codes once', async () => {
    const p = await person(t, 'viewer')
    const start = await p.agent.submit('/console/account', {}, '/console/account/two-step')
    assert.equal(start.statusCode, 200)
    assert.match(start.body, /<svg/)
    const key = keyOf(start.body)
    assert.equal(key.length, 20)
    const wrong = await p.agent.post('/console/account/two-step/confirm', {
      _csrf: csrfOf(start.body),
      code: '000000' === totpCode(key, t.clock.now()) ? '111111' : '000000',
    })
    assert.equal(wrong.statusCode, 422)
    assert.deepEqual(keyOf(wrong.body), key, 'the same key is shown again')
    const done = await p.agent.post('/console/account/two-step/confirm', {
      _csrf: csrfOf(start.body),
      code: totpCode(key, t.clock.now()),
    })
    assert.equal(done.statusCode, 200)
    const codes = [...done.body.matchAll(/<li>([a-z2-7]{5}-[a-z2-7]{5})<\/li>/g)].map((m) => m[1])
    assert.equal(codes.length, 10)
    const account = await p.agent.get('/console/account')
    assert.match(
      account.body,
      /Two-step verification is <strong>on<\/strong>. 10 recovery codes left/,
    )
    for (const c of codes)
      assert.ok(!account.body.includes(c), 'recovery codes are shown only once')
    const stored = await t.deps.db
      .selectFrom('users')
      .select(['totp_secret_sealed', 'recovery_code_hashes'])
      .where('email', '=', p.email)
      .executeTakeFirstOrThrow()
    assert.ok(
      !stored.totp_secret_sealed!.includes(base32Encode(key)),
      'the secret is stored sealed',
    )
    assert.equal(stored.recovery_code_hashes.length, 10)
    for (const c of codes) assert.ok(!JSON.stringify(stored.recovery_code_hashes).includes(c))
  })

  test('sign-in asks for the code after the password; a code works once; each recovery code works once', async () => {
    const p = await person(t, 'developer')
    const start = await p.agent.submit('/console/account', {}, '/console/account/two-step')
    const key = keyOf(start.body)
    const enabled = await p.agent.post('/console/account/two-step/confirm', {
      _csrf: csrfOf(start.body),
      code: totpCode(key, t.clock.now()),
    })
    const codes = [...enabled.body.matchAll(/<li>([a-z2-7]{5}-[a-z2-7]{5})<\/li>/g)].map(
      (m) => m[1],
    )
    try {
      // The code used to enrol cannot sign in again within its step.
      const agent = new Agent(t)
      const first = await agent.signIn(p.email, p.password)
      assert.equal(first.statusCode, 303)
      assert.equal(first.headers.location, '/console/sign-in/verify')
      assert.equal(
        cookieLine(first, 'svc_session'),
        undefined,
        'no session before the second factor',
      )
      assert.match(cookieLine(first, 'svc_pending') ?? '', /Path=\/console\/sign-in;.*HttpOnly/)
      assert.equal((await agent.get('/console')).statusCode, 303, 'the pending step opens nothing')
      const replay = await agent.submit('/console/sign-in/verify', {
        code: totpCode(key, t.clock.now()),
      })
      assert.equal(replay.statusCode, 401)

      t.clock.advance(30_000)
      const ok = await agent.submit('/console/sign-in/verify', {
        code: totpCode(key, t.clock.now()),
      })
      assert.equal(ok.statusCode, 303)
      assert.equal(ok.headers.location, '/console')
      assert.match(cookieLine(ok, 'svc_session') ?? '', /^svc_session=[A-Za-z0-9]{40,}/)
      assert.equal((await agent.get('/console')).statusCode, 200)

      // A recovery code, typed in capitals without its dash, signs in once.
      const other = new Agent(t)
      await other.signIn(p.email, p.password)
      const recovered = await other.submit('/console/sign-in/verify', {
        code: codes[3].replace('-', '').toUpperCase(),
      })
      assert.equal(recovered.statusCode, 303)
      assert.equal((await other.get('/console')).statusCode, 200)
      const third = new Agent(t)
      await third.signIn(p.email, p.password)
      assert.equal(
        (await third.submit('/console/sign-in/verify', { code: codes[3] })).statusCode,
        401,
        'a recovery code works once',
      )
      assert.equal(
        (await third.submit('/console/sign-in/verify', { code: codes[4] })).statusCode,
        303,
      )
      assert.match((await third.get('/console/account')).body, /8 recovery codes left/)
    } finally {
      t.clock.reset()
    }
  })

  test('the code step expires after 5 minutes; turning two-step off needs the password', async () => {
    const p = await person(t, 'owner')
    const start = await p.agent.submit('/console/account', {}, '/console/account/two-step')
    const key = keyOf(start.body)
    await p.agent.post('/console/account/two-step/confirm', {
      _csrf: csrfOf(start.body),
      code: totpCode(key, t.clock.now()),
    })
    const agent = new Agent(t)
    await agent.signIn(p.email, p.password)
    t.clock.advance(5 * 60 * 1000 + 31_000)
    try {
      assert.equal((await agent.get('/console/sign-in/verify')).statusCode, 303, 'the form is gone')
      const late = await agent.post('/console/sign-in/verify', {
        _csrf: csrfOf((await agent.get('/console/sign-in')).body),
        code: totpCode(key, t.clock.now()),
      })
      assert.equal(late.statusCode, 303)
      assert.equal(late.headers.location, '/console/sign-in')
      assert.equal(cookieLine(late, 'svc_session'), undefined)
    } finally {
      t.clock.reset()
    }
    const refused = await p.agent.submit(
      '/console/account',
      { password: 'not-the-password-9' },
      '/console/account/two-step/disable',
    )
    assert.equal(refused.statusCode, 422)
    const off = await p.agent.submit(
      '/console/account',
      { password: p.password },
      '/console/account/two-step/disable',
    )
    assert.equal(off.statusCode, 303)
    assert.equal((await new Agent(t).signIn(p.email, p.password)).headers.location, '/console')
  })
})
