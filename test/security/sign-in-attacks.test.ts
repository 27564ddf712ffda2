import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { base32Decode, hotp, totpCode, totpStep } from '../../src/modules/users/totp.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { Agent, cookieLine, csrfOf, person } from '../console/support.js'

/**
 * Attacks on the console sign-in, each as it was reported: a guessed second factor, bursts of concurrent
 * guesses against every limit, and a forged X-Forwarded-For. The app runs without TRUSTED_PROXIES (the default),
 * so the connection's peer is the caller's address; each test uses peers of its own.
 */

let t: TestApp
let orgId: string

before(async () => {
  t = await startTestApp()
  orgId = (await t.operator('POST', '/operator/v1/organizations', { name: 'Umbrella Payments' })).id
})
after(() => t.close())

const VERIFY = '/console/sign-in/verify'
const LOCK_SECONDS = 15 * 60

let peers = 0
/** A fresh peer address, so one test's failures never count against another's. */
const peer = () => `198.51.100.${++peers}`

/** A member with two-step verification on, and the key of their authenticator. */
async function twoStepPerson(): Promise<{ email: string; password: string; key: Buffer }> {
  const p = await person(t, 'developer', orgId)
  const start = await p.agent.submit('/console/account', {}, '/console/account/two-step')
  const match = /Key: <code class="mono">([A-Z2-7 ]+)<\/code>/.exec(start.body)
  assert.ok(match, 'the enrolment page shows the key')
  const key = base32Decode(match[1])
  const code = totpCode(key, t.clock.now())
  const on = await p.agent.post('/console/account/two-step/confirm', {
    _csrf: csrfOf(start.body),
    code,
  })
  assert.equal(on.statusCode, 200)
  // The enrolment code's step is spent: the next right code is the next step's.
  t.clock.advance(30_000)
  return { email: p.email, password: p.password, key }
}

/** A 6-digit code that no step near now accepts. */
function wrongCode(key: Buffer, n: number): string {
  const step = totpStep(t.clock.now())
  const valid = new Set([hotp(key, step - 1), hotp(key, step), hotp(key, step + 1)])
  for (let i = n; ; i++) {
    const code = String((i * 7919) % 1_000_000).padStart(6, '0')
    if (!valid.has(code)) return code
  }
}

/** A browser past the password step of `email`, on the code form (its CSRF token in hand). */
async function atCodeStep(
  email: string,
  password: string,
  address = peer(),
): Promise<{ agent: Agent; csrf: string }> {
  const agent = new Agent(t, {}, address)
  const res = await agent.signIn(email, password)
  assert.equal(res.statusCode, 303, res.body.slice(0, 300))
  assert.equal(res.headers.location, VERIFY)
  const form = await agent.get(VERIFY)
  assert.equal(form.statusCode, 200)
  return { agent, csrf: csrfOf(form.body) }
}

const tally = (answers: LightMyRequestResponse[]) => ({
  limited: answers.filter((r) => r.statusCode === 429).length,
  other: answers.filter((r) => r.statusCode !== 429).length,
})

/**
 * What an answer of the code step tells: `wrong` (the code was checked: 401, or the 429 of the wrong code that
 * locked the step), `limited` (429, nothing checked), `ended` (the pending sign-in is over: back to the password).
 */
function verdict(res: LightMyRequestResponse): 'wrong' | 'limited' | 'ended' {
  if (res.statusCode === 401) return 'wrong'
  if (res.statusCode === 429) return /code is not right/.test(res.body) ? 'wrong' : 'limited'
  assert.equal(res.statusCode, 303, res.body.slice(0, 300))
  assert.equal(res.headers.location, '/console/sign-in', 'a wrong code never signs in')
  return 'ended'
}

const verdicts = (answers: LightMyRequestResponse[]) => {
  const count = { wrong: 0, limited: 0, ended: 0 }
  for (const res of answers) count[verdict(res)]++
  return count
}

describe('the second factor', () => {
  test('re-entering the password does not reset the wrong-code count: 5 wrong codes lock the code step', async () => {
    const victim = await twoStepPerson()
    // The reported attack: the password (known to the attacker) again every 4 codes, 40 codes in all.
    const answers: LightMyRequestResponse[] = []
    for (let round = 0; round < 10; round++) {
      const { agent, csrf } = await atCodeStep(victim.email, victim.password)
      for (let i = 0; i < 4; i++) {
        answers.push(
          await agent.post(VERIFY, { _csrf: csrf, code: wrongCode(victim.key, round * 4 + i) }),
        )
      }
    }
    const { wrong } = verdicts(answers)
    assert.equal(wrong, 5, `${wrong} of 40 wrong codes were checked, 5 may be`)
    // The right code is refused too while the lock lasts.
    const { agent, csrf } = await atCodeStep(victim.email, victim.password)
    const right = await agent.post(VERIFY, {
      _csrf: csrf,
      code: totpCode(victim.key, t.clock.now()),
    })
    assert.equal(right.statusCode, 429)
    assert.equal(cookieLine(right, 'svc_session'), undefined)
  })

  test('after 5 wrong codes the pending sign-in ends and the right code answers 429 with Retry-After', async () => {
    const victim = await twoStepPerson()
    try {
      const { agent, csrf } = await atCodeStep(victim.email, victim.password)
      for (let i = 0; i < 4; i++) {
        const res = await agent.post(VERIFY, { _csrf: csrf, code: wrongCode(victim.key, i) })
        assert.equal(res.statusCode, 401, `wrong code ${i + 1}`)
      }
      const fifth = await agent.post(VERIFY, { _csrf: csrf, code: wrongCode(victim.key, 4) })
      assert.equal(fifth.statusCode, 429, 'the fifth wrong code locks the code step')
      assert.equal(Number(fifth.headers['retry-after']), LOCK_SECONDS)
      assert.match(fifth.body, /Too many/)
      // The pending sign-in is over: the same browser is sent back to the password.
      const again = await agent.post(VERIFY, {
        _csrf: csrf,
        code: totpCode(victim.key, t.clock.now()),
      })
      assert.equal(again.statusCode, 303)
      assert.equal(again.headers.location, '/console/sign-in')
      assert.equal(cookieLine(again, 'svc_session'), undefined)

      t.clock.advance(60_000)
      const fresh = await atCodeStep(victim.email, victim.password)
      const right = await fresh.agent.post(VERIFY, {
        _csrf: fresh.csrf,
        code: totpCode(victim.key, t.clock.now()),
      })
      assert.equal(right.statusCode, 429, 'the right code is refused during the lock')
      assert.equal(Number(right.headers['retry-after']), LOCK_SECONDS - 60)
      assert.equal(cookieLine(right, 'svc_session'), undefined)

      // Once the 15 minutes are over the right code signs in, and the count starts again from zero.
      t.clock.advance((LOCK_SECONDS - 60) * 1000)
      const later = await atCodeStep(victim.email, victim.password)
      const ok = await later.agent.post(VERIFY, {
        _csrf: later.csrf,
        code: totpCode(victim.key, t.clock.now()),
      })
      assert.equal(ok.statusCode, 303)
      assert.equal(ok.headers.location, '/console')
      assert.equal((await later.agent.get('/console')).statusCode, 200)
    } finally {
      t.clock.reset()
    }
  })

  test('wrong recovery codes count against the same limit', async () => {
    const victim = await twoStepPerson()
    const { agent, csrf } = await atCodeStep(victim.email, victim.password)
    const answers = []
    for (let i = 0; i < 6; i++) {
      answers.push((await agent.post(VERIFY, { _csrf: csrf, code: `abcde-fgh${i}j` })).statusCode)
    }
    assert.deepEqual(answers, [401, 401, 401, 401, 429, 303])
  })

  test('20 wrong codes sent at once: at most 5 are checked, the rest answer 429', async () => {
    const victim = await twoStepPerson()
    // Four pending sign-ins (the attacker knows the password), five codes each, all at once.
    const pending = await Promise.all(
      Array.from({ length: 4 }, () => atCodeStep(victim.email, victim.password)),
    )
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        pending[i % 4].agent.post(VERIFY, {
          _csrf: pending[i % 4].csrf,
          code: wrongCode(victim.key, i),
        }),
      ),
    )
    const { wrong } = verdicts(answers)
    assert.ok(wrong <= 5, `${wrong} of 20 concurrent wrong codes were checked, at most 5 may be`)
    // The burst's checked codes count, its refused ones do not: one by one, the fifth wrong code in all locks.
    const next = await atCodeStep(victim.email, victim.password)
    const after: string[] = []
    for (let i = 0; i < 6 - wrong; i++) {
      after.push(
        verdict(
          await next.agent.post(VERIFY, { _csrf: next.csrf, code: wrongCode(victim.key, 20 + i) }),
        ),
      )
    }
    assert.deepEqual(after, [...Array(5 - wrong).fill('wrong'), wrong === 5 ? 'limited' : 'ended'])
  })
})

describe('the password', () => {
  test('48 wrong passwords for one account sent at once: at most 5 are checked, the rest answer 429', async () => {
    const victim = await person(t, 'viewer', orgId)
    // Each guess from an address of its own, so only the account's limit stands in the way.
    const agents = await Promise.all(
      Array.from({ length: 48 }, async () => {
        const agent = new Agent(t, {}, peer())
        return { agent, csrf: csrfOf((await agent.get('/console/sign-in')).body) }
      }),
    )
    const answers = await Promise.all(
      agents.map(({ agent, csrf }, i) =>
        agent.post('/console/sign-in', {
          _csrf: csrf,
          email: victim.email,
          password: `wrong-password-${i}-xyz`,
        }),
      ),
    )
    const { limited, other } = tally(answers)
    assert.ok(
      other <= 5,
      `${other} of 48 concurrent wrong passwords were checked, at most 5 may be`,
    )
    for (const r of answers) assert.ok([401, 429].includes(r.statusCode), `answer ${r.statusCode}`)
    assert.equal(limited + other, 48)
    // The burst's checked passwords count, its refused ones do not: one by one, 5 in all are checked.
    const after: number[] = []
    for (let i = 0; i < 6 - other; i++) {
      after.push(
        (await new Agent(t, {}, peer()).signIn(victim.email, `wrong-again-${i}-xyz`)).statusCode,
      )
    }
    assert.deepEqual(after, [...Array(5 - other).fill(401), 429])
  })

  test('30 wrong passwords from one address sent at once: at most 20 are checked', async () => {
    const agent = new Agent(t, {}, peer())
    const csrf = csrfOf((await agent.get('/console/sign-in')).body)
    const guesses = Array.from({ length: 30 }, (_, i) => ({
      _csrf: csrf,
      email: `sprayed.${i}@example.test`,
      password: 'guessed-password-1',
    }))
    const answers = await Promise.all(guesses.map((form) => agent.post('/console/sign-in', form)))
    const { other } = tally(answers)
    assert.ok(
      other <= 20,
      `${other} of 30 concurrent wrong passwords from one address were checked, at most 20 may be`,
    )
  })
})

describe('X-Forwarded-For from an untrusted peer', () => {
  test('rotating the header does not escape the per-address limit', async () => {
    const agent = new Agent(t, {}, peer())
    const csrf = csrfOf((await agent.get('/console/sign-in')).body)
    const answers: number[] = []
    for (let i = 0; i < 25; i++) {
      const form = {
        _csrf: csrf,
        email: `rotated.${i}@example.test`,
        password: 'guessed-password-1',
      }
      const res = await agent.post('/console/sign-in', form, {
        'x-forwarded-for': `203.0.113.${i + 1}`,
      })
      answers.push(res.statusCode)
    }
    assert.deepEqual(answers, [...Array(20).fill(401), ...Array(5).fill(429)])
  })
})
