import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { cookieLine, csrfOf, main, person, type Person } from './support.js'

/**
 * A form sent after the session ended: the sign-in, then back on the page the person was on with what they typed
 * filled in again; never a password, a code or the form's security fields; nothing kept for a form from
 * elsewhere, and no way back to another site.
 */

const WEBHOOKS = '/console/developers/webhooks'
let t: TestApp
let owner: Person
let base: string

before(async () => {
  t = await startTestApp()
  owner = await person(t, 'owner')
  base = t.deps.config.baseUrl
})
after(() => t.close())

/** The page's form token, then the session ended by 31 idle minutes. */
async function expiredOn(page: string): Promise<string> {
  const csrf = csrfOf((await owner.agent.get(page)).body)
  t.clock.advance(31 * 60 * 1000)
  return csrf
}

function draftOf(body: string): { action: string; fields: [string, string[]][] } | null {
  const json = /<script type="application\/json" id="svc-draft">([^<]*)<\/script>/.exec(body)?.[1]
  return json ? JSON.parse(json) : null
}

describe('a form sent after the session ended', () => {
  test('signing in again lands on the page it was on, with what was typed filled in (no secrets)', async () => {
    const csrf = await expiredOn(`${WEBHOOKS}?after=`)
    const sent = await owner.agent.post(
      WEBHOOKS,
      {
        _csrf: csrf,
        idempotency_key: 'idem-zq81',
        url: 'https://hooks.example.com/svc',
        description: 'Orders <service>',
        enabled_events: ['card.created', 'card.updated'],
        password: 'not-kept',
        code: '123456',
      },
      { referer: `${base}${WEBHOOKS}?after=`, origin: base },
    )
    assert.equal(sent.statusCode, 303)
    const next = `${WEBHOOKS}?after=`
    assert.equal(sent.headers.location, `/console/sign-in?next=${encodeURIComponent(next)}`)
    assert.ok(cookieLine(sent, 'svc_draft'), 'the draft is kept')
    assert.match(cookieLine(sent, 'svc_draft')!, /HttpOnly/)

    const signIn = await owner.agent.get(String(sent.headers.location))
    assert.match(signIn.body, /Your session has ended/)
    assert.ok(signIn.body.includes(`name="next" value="${next.replace('?', '?')}"`))
    assert.equal(draftOf(signIn.body), null, 'the sign-in page shows nothing of the draft')
    const signedIn = await owner.agent.post('/console/sign-in', {
      _csrf: csrfOf(signIn.body),
      email: owner.email,
      password: owner.password,
      next,
    })
    assert.equal(signedIn.headers.location, next)
    const back = await owner.agent.get(next)
    assert.equal(back.statusCode, 200)
    const draft = draftOf(main(back.body))
    assert.ok(draft, 'the page carries the draft')
    assert.equal(draft.action, WEBHOOKS)
    assert.deepEqual(Object.fromEntries(draft.fields), {
      url: ['https://hooks.example.com/svc'],
      description: ['Orders <service>'],
      enabled_events: ['card.created', 'card.updated'],
    })
    assert.ok(!back.body.includes('Orders <service>'), 'typed text is escaped in the page')
    assert.match(back.body, /what you typed is filled in again/)
    assert.doesNotMatch(back.body, /not-kept|123456|idem-zq81/)
    assert.match(cookieLine(back, 'svc_draft') ?? '', /Max-Age=0/, 'read once')
    assert.equal(draftOf((await owner.agent.get(next)).body), null)
  })

  test('a return_to of another site is not followed; a form from another site keeps nothing', async () => {
    let csrf = await expiredOn(WEBHOOKS)
    const offsite = await owner.agent.post(
      WEBHOOKS,
      { _csrf: csrf, url: 'https://a.example', return_to: 'https://evil.example/x' },
      { referer: `${base}${WEBHOOKS}` },
    )
    assert.equal(
      offsite.headers.location,
      `/console/sign-in?next=${encodeURIComponent(WEBHOOKS)}`,
      'back to the page it was sent from',
    )
    await owner.agent.signIn(owner.email, owner.password)
    owner.agent.cookies.delete('svc_draft')

    csrf = await expiredOn(WEBHOOKS)
    const foreign = await owner.agent.post(
      WEBHOOKS,
      { _csrf: csrf, url: 'https://planted.example', return_to: WEBHOOKS },
      { origin: 'https://evil.example', referer: 'https://evil.example/form' },
    )
    assert.equal(foreign.statusCode, 303)
    assert.equal(foreign.headers.location, '/console/sign-in')
    assert.equal(cookieLine(foreign, 'svc_draft'), undefined)
    await owner.agent.signIn(owner.email, owner.password)
  })
})
