import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { withTx } from '../../src/db/tx.js'
import { allowed, type Area } from '../../src/modules/console/access.js'
import { html } from '../../src/lib/html.js'
import { CONSOLE_PAGES } from '../../src/modules/console/pages/index.js'
import { PAGES, type PlannedPage } from '../../src/modules/console/nav.js'
import { registerPlaceholders } from '../../src/modules/console/pages/placeholders.js'
import { mountConsole, type ConsolePage } from '../../src/modules/console/router.js'
import { postForm } from '../../src/modules/console/components.js'
import { MODULES } from '../../src/modules/index.js'
import { audit } from '../../src/modules/users/index.js'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { Agent, csrfOf, person, type Person } from './support.js'

/**
 * A page added the way a later page is: a `ConsolePage` with an organization area, mounted beside the real
 * ones. Its POST changes something (an audit row), so the role guard and the CSRF check have a write to refuse.
 */
/** A page planned but not built: the placeholders serve it. */
const PLANNED: PlannedPage = {
  href: '/console/things',
  label: 'Things',
  area: 'organization',
  meanwhile: 'use GET /v1/things.',
}

const probePage: ConsolePage = {
  name: 'probe',
  register(router) {
    router.get('/console/probe', 'organization', (ctx) =>
      ctx.render({
        title: 'Probe',
        body: postForm('/console/probe', ctx.csrf, html`<button type="submit">Change</button>`),
      }),
    )
    router.post('/console/probe', 'organization', async (ctx) => {
      await withTx(ctx.deps.db, (trx) =>
        audit(trx, ctx.actor(), 'probe.changed', ctx.scope!.organizationId, ctx.visitor.address),
      )
      return ctx.redirect('/console/probe', { kind: 'ok', text: 'Changed.' })
    })
  },
}

let t: TestApp
let orgId: string
let owner: Person
let developer: Person
let viewer: Person
let operator: Person

before(async () => {
  const modules = MODULES.map((m) =>
    m.name === 'console'
      ? {
          name: 'console',
          routes: (app: any, deps: any) =>
            mountConsole(app, deps, [...CONSOLE_PAGES, probePage], (router) =>
              registerPlaceholders(router, [...PAGES, PLANNED]),
            ),
        }
      : m,
  )
  t = await startTestApp({ modules })
  orgId = (await t.operator('POST', '/operator/v1/organizations', { name: 'Initech' })).id
  owner = await person(t, 'owner', orgId)
  developer = await person(t, 'developer', orgId)
  viewer = await person(t, 'viewer', orgId)
  operator = await person(t, 'operator')
})
after(() => t.close())

const probes = async () =>
  Number(
    (
      await t.deps.db
        .selectFrom('audit_log')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('action', '=', 'probe.changed')
        .executeTakeFirstOrThrow()
    ).n,
  )

describe('the role guard', () => {
  test('the rule table: viewers read organization pages only, developers change everything but the team, owners all, operators only their pages and the audit log', () => {
    const table: Record<string, Partial<Record<Area, [read: boolean, write: boolean]>>> = {
      owner: {
        account: [true, true],
        organization: [true, true],
        team: [true, true],
        audit: [true, false],
        operator: [false, false],
      },
      developer: {
        account: [true, true],
        organization: [true, true],
        team: [false, false],
        audit: [false, false],
        operator: [false, false],
      },
      viewer: {
        account: [true, true],
        organization: [true, false],
        team: [false, false],
        audit: [false, false],
        operator: [false, false],
      },
      operator: {
        account: [true, true],
        organization: [false, false],
        team: [false, false],
        audit: [true, false],
        operator: [true, true],
      },
    }
    for (const [role, areas] of Object.entries(table)) {
      for (const [area, [read, write]] of Object.entries(areas)) {
        assert.equal(allowed(role as never, area as Area, 'GET'), read, `${role} GET ${area}`)
        assert.equal(allowed(role as never, area as Area, 'POST'), write, `${role} POST ${area}`)
      }
    }
  })

  test("a viewer reads an organization page but its POST answers 403 and changes nothing; a developer's goes through", async () => {
    const page = await viewer.agent.get('/console/probe')
    assert.equal(page.statusCode, 200)
    const before = await probes()
    const refused = await viewer.agent.post('/console/probe', { _csrf: csrfOf(page.body) })
    assert.equal(refused.statusCode, 403)
    assert.match(refused.body, /Your role does not allow this change/)
    assert.equal(await probes(), before)

    const done = await developer.agent.submit('/console/probe', {})
    assert.equal(done.statusCode, 303)
    assert.equal(await probes(), before + 1)
  })

  test("the team and its invitations are the owners': a developer and a viewer get 403 for the page and the POST", async () => {
    assert.equal((await owner.agent.get('/console/team')).statusCode, 200)
    for (const p of [developer, viewer]) {
      assert.equal((await p.agent.get('/console/team')).statusCode, 403)
      const home = await p.agent.get('/console')
      const res = await p.agent.post('/console/team/invitations', {
        _csrf: csrfOf(home.body),
        email: 'sneaky@example.test',
        role: 'owner',
      })
      assert.equal(res.statusCode, 403)
    }
    assert.equal(
      await t.deps.db
        .selectFrom('users')
        .select('id')
        .where('email', '=', 'sneaky@example.test')
        .executeTakeFirst(),
      undefined,
    )
    assert.equal((await viewer.agent.get('/console/audit')).statusCode, 403)
    assert.equal((await developer.agent.get('/console/audit')).statusCode, 403)
  })

  test('an operator cannot open organization pages, and a member cannot open operator pages', async () => {
    for (const path of [
      '/console/developers/webhooks',
      '/console/developers/api-clients',
      '/console/team',
      '/console/probe',
      '/console/cards',
    ]) {
      const res = await operator.agent.get(path)
      assert.equal(res.statusCode, 403, path)
      assert.match(res.body, /operator pages/)
    }
    const opHome = await operator.agent.get('/console')
    assert.equal(opHome.statusCode, 200)
    assert.match(opHome.body, /Operator console/)
    assert.doesNotMatch(opHome.body, /href="\/console\/team"/)
    for (const path of [
      '/console/operator/organizations',
      '/console/operator/programs',
      '/console/operator/clients',
      '/console/operator/network-policies',
      '/console/operator/esim',
      '/console/operator/health',
    ]) {
      assert.equal((await operator.agent.get(path)).statusCode, 200, `operator ${path}`)
      for (const p of [owner, developer, viewer])
        assert.equal((await p.agent.get(path)).statusCode, 403, `${path} for a member`)
    }
    assert.equal((await operator.agent.get('/console/audit')).statusCode, 200)
  })

  test('members see the navigation of their role; the organization name and both environments show', async () => {
    const home = await owner.agent.get('/console')
    assert.match(home.body, /Initech/)
    for (const link of [
      '/console/developers/api-clients',
      '/console/developers/webhooks',
      '/console/developers/events',
      '/console/team',
      '/console/audit',
    ])
      assert.match(home.body, new RegExp(`href="${link}"`))
    assert.doesNotMatch(home.body, /href="\/console\/operator\//)
    const viewerHome = await viewer.agent.get('/console')
    assert.doesNotMatch(viewerHome.body, /href="\/console\/team"/)
    assert.match(viewerHome.body, /value="sandbox"[^>]*aria-pressed="true"/)
  })
})

describe('CSRF', () => {
  test("a POST without the session's token, or with another one, answers 403 and changes nothing", async () => {
    const before = await probes()
    const none = await developer.agent.post('/console/probe', {})
    assert.equal(none.statusCode, 403)
    assert.match(none.body, /could not be sent/)
    const forged = await developer.agent.post('/console/probe', {
      _csrf: csrfOf((await owner.agent.get('/console')).body),
    })
    assert.equal(forged.statusCode, 403)
    const signOut = await developer.agent.post('/console/sign-out', { _csrf: 'x' })
    assert.equal(signOut.statusCode, 403)
    assert.equal((await developer.agent.get('/console')).statusCode, 200, 'still signed in')
    assert.equal(await probes(), before)
  })

  test('a form posted from another origin is refused even with the token', async () => {
    const page = await developer.agent.get('/console/probe')
    const res = await developer.agent.post(
      '/console/probe',
      { _csrf: csrfOf(page.body) },
      { origin: 'https://evil.example' },
    )
    assert.equal(res.statusCode, 403)
  })

  test('the sign-in and invitation forms need their pre-session token too', async () => {
    const agent = new Agent(t)
    await agent.get('/console/sign-in')
    assert.equal(
      (await agent.post('/console/sign-in', { email: owner.email, password: owner.password }))
        .statusCode,
      403,
    )
    assert.equal(
      (
        await new Agent(t).post('/console/sign-in', {
          email: owner.email,
          password: owner.password,
          _csrf: 'abc',
        })
      ).statusCode,
      403,
    )
  })
})

describe('the console gate', () => {
  test('without a session a page sends to the sign-in page (keeping where to return), and an API token opens nothing', async () => {
    const res = await new Agent(t).get('/console/team')
    assert.equal(res.statusCode, 303)
    assert.equal(res.headers.location, '/console/sign-in?next=%2Fconsole%2Fteam')
    const tenant = await createTenant(t)
    const withToken = await t.app.inject({
      method: 'GET',
      url: '/console',
      headers: { authorization: `Bearer ${await tenant.token()}` },
    })
    assert.equal(withToken.statusCode, 303)
    const back = await owner.agent.signIn(owner.email, owner.password)
    assert.equal(back.statusCode, 303)
  })

  test('after signing in the person lands on the page they asked for, never on another site', async () => {
    const agent = new Agent(t)
    const res = await agent.submit('/console/sign-in?next=%2Fconsole%2Faudit', {
      email: owner.email,
      password: owner.password,
      next: '/console/audit',
    })
    assert.equal(res.headers.location, '/console/audit')
    const other = new Agent(t)
    const evil = await other.submit('/console/sign-in', {
      email: owner.email,
      password: owner.password,
      next: '//evil.example/x',
    })
    assert.equal(evil.headers.location, '/console')
  })

  test('an unknown console address is a 404 page once signed in, and every page forbids framing and caching', async () => {
    const res = await owner.agent.get('/console/no/such/page')
    assert.equal(res.statusCode, 404)
    assert.match(res.headers['content-type'] as string, /text\/html/)
    assert.equal(res.headers['x-frame-options'], 'DENY')
    assert.equal(res.headers['cache-control'], 'no-store')
    assert.match(res.headers['content-security-policy'] as string, /default-src 'none'/)
  })

  test('a planned page that is not built yet is a placeholder under its own area', async () => {
    const res = await developer.agent.get(PLANNED.href)
    assert.equal(res.statusCode, 200)
    assert.match(res.body, /not in the console yet/)
    assert.match(res.body, /Meanwhile: use GET \/v1\/things/)
    assert.equal(
      (await operator.agent.get(PLANNED.href)).statusCode,
      403,
      'under its own area: an organization page',
    )
    assert.equal((await developer.agent.get('/console/programs')).statusCode, 200)
    assert.doesNotMatch(
      (await developer.agent.get('/console/programs')).body,
      /not in the console yet/,
      'a built page replaces its placeholder',
    )
  })

  test('the environment switch keeps the choice in the session, and only environments the deployment serves', async () => {
    const home = await developer.agent.get('/console')
    const res = await developer.agent.post('/console/environment', {
      _csrf: csrfOf(home.body),
      environment: 'production',
      return_to: '/console',
    })
    assert.equal(res.statusCode, 303)
    const after = await developer.agent.get('/console')
    assert.match(after.body, /value="production"[^>]*aria-pressed="true"/)
    assert.match(after.body, /<strong>Production<\/strong> data/)
    const bad = await developer.agent.post('/console/environment', {
      _csrf: csrfOf(after.body),
      environment: 'staging',
      return_to: '/console',
    })
    assert.equal(bad.statusCode, 303)
    assert.match((await developer.agent.get('/console')).body, /does not serve that environment/)
  })
})
