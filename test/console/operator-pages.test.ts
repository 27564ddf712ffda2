import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { withTx } from '../../src/db/tx.js'
import { enqueue } from '../../src/jobs/queue.js'
import { signClientAssertion, tokenRequestBody } from '../../src/lib/client-assertion.js'
import {
  createTenant,
  requestToken,
  startTestApp,
  TOKEN_URL,
  type TestApp,
} from '../helpers/app.js'
import { blankProfiles, esimFixture, packageFor } from '../esim/support.js'
import { Agent, csrfOf, person, type Person } from './support.js'

/** The operator pages of the console: each renders for an operator only, and each form changes through the operator API's services with its audit row. */

let t: TestApp
let operator: Person
let owner: Person
let orgId: string

before(async () => {
  t = await startTestApp()
  orgId = (await t.operator('POST', '/operator/v1/organizations', { name: 'Globex' })).id
  operator = await person(t, 'operator')
  owner = await person(t, 'owner', orgId)
})
after(() => t.close())

/** The audit rows of an action, oldest first. */
async function audits(action: string) {
  return t.deps.db
    .selectFrom('audit_log')
    .selectAll()
    .where('action', '=', action)
    .orderBy('id')
    .execute()
}

async function operatorUserId(): Promise<string> {
  return (
    await t.deps.db
      .selectFrom('users')
      .select('id')
      .where('email', '=', operator.email)
      .executeTakeFirstOrThrow()
  ).id
}

/** A page's main content without the layout (the navigation names every page). */
function main(body: string): string {
  return body.slice(body.indexOf('<main'))
}

/** Follows a 303 and answers the page it leads to. */
async function follow(
  agent: Agent,
  res: { statusCode: number; headers: Record<string, unknown>; body: string },
) {
  assert.equal(res.statusCode, 303, res.body.slice(0, 800))
  const page = await agent.get(String(res.headers.location))
  assert.equal(page.statusCode, 200)
  return page
}

function ecJwkSet(kid?: string) {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const pub = { ...publicKey.export({ format: 'jwk' }), ...(kid ? { kid } : {}) }
  const priv = { ...privateKey.export({ format: 'jwk' }), ...(kid ? { kid } : {}) }
  return { jwks: { keys: [pub] }, publicJwk: pub, privateJwk: priv, publicKey, privateKey }
}

const OPERATOR_PAGES = [
  '/console/operator/organizations',
  '/console/operator/programs',
  '/console/operator/clients',
  '/console/operator/clients/new',
  '/console/operator/network-policies',
  '/console/operator/esim',
  '/console/operator/health',
]

describe('who may use the operator pages', () => {
  test('each page renders for an operator, and none is a placeholder any more', async () => {
    const client = await t.operator('POST', '/operator/v1/clients', {
      organization_id: orgId,
      environment: 'sandbox',
      label: 'Probe',
      jwks: ecJwkSet('p1').jwks,
    })
    const pages = [
      ...OPERATOR_PAGES,
      `/console/operator/organizations/${orgId}`,
      `/console/operator/clients/${client.id}`,
      `/console/operator/clients/${client.id}/revoke`,
      `/console/operator/network-policies?organization=${orgId}`,
    ]
    for (const path of pages) {
      const res = await operator.agent.get(path)
      assert.equal(res.statusCode, 200, `${path}: ${res.body.slice(0, 300)}`)
      assert.doesNotMatch(res.body, /not in the console yet/, path)
      assert.match(res.body, /<h1>/, path)
    }
    const home = await operator.agent.get('/console')
    for (const path of OPERATOR_PAGES.filter((p) => !p.endsWith('/new')))
      assert.match(home.body, new RegExp(`href="${path}"`))
  })

  test('a member of an organization gets 403 for every page and every form, and nothing changes', async () => {
    const client = await t.operator('POST', '/operator/v1/clients', {
      organization_id: orgId,
      environment: 'sandbox',
      label: 'Kept',
      jwks: ecJwkSet('k1').jwks,
    })
    for (const path of [
      ...OPERATOR_PAGES,
      `/console/operator/organizations/${orgId}`,
      `/console/operator/clients/${client.id}`,
    ]) {
      assert.equal((await owner.agent.get(path)).statusCode, 403, path)
    }
    const csrf = csrfOf((await owner.agent.get('/console')).body)
    const posts: [string, Record<string, string>][] = [
      ['/console/operator/organizations', { name: 'Sneaky Org' }],
      [
        `/console/operator/organizations/${orgId}/invitations`,
        { email: 'sneak@example.test', role: 'owner' },
      ],
      [
        '/console/operator/programs',
        {
          organization_id: orgId,
          environment: 'sandbox',
          name: 'Sneaky',
          processor: 'sim_full',
          currencies: 'USD',
        },
      ],
      [`/console/operator/clients/${client.id}/revoke`, {}],
      [
        '/console/operator/network-policies',
        { organization_id: orgId, environment: 'sandbox', ip_allowlist: '10.0.0.0/8' },
      ],
      ['/console/operator/esim/inventory', { csv: 'iccid,smdp_address,matching_id' }],
    ]
    for (const [path, fields] of posts)
      assert.equal((await owner.agent.post(path, { _csrf: csrf, ...fields })).statusCode, 403, path)
    assert.equal((await t.operator('GET', `/operator/v1/clients/${client.id}`)).status, 'active')
    assert.equal(
      await t.deps.db
        .selectFrom('users')
        .select('id')
        .where('email', '=', 'sneak@example.test')
        .executeTakeFirst(),
      undefined,
    )
    assert.equal(
      await t.deps.db
        .selectFrom('organizations')
        .select('id')
        .where('name', '=', 'Sneaky Org')
        .executeTakeFirst(),
      undefined,
    )
  })

  test('without a session the pages send to the sign-in page', async () => {
    const res = await new Agent(t).get('/console/operator/health')
    assert.equal(res.statusCode, 303)
    assert.equal(res.headers.location, '/console/sign-in?next=%2Fconsole%2Foperator%2Fhealth')
  })

  test("a form without the session's CSRF token answers 403 and changes nothing", async () => {
    const before = (await audits('organization.created')).length
    const res = await operator.agent.post('/console/operator/organizations', {
      name: 'No Token Inc',
    })
    assert.equal(res.statusCode, 403)
    const forged = await operator.agent.post('/console/operator/organizations', {
      name: 'No Token Inc',
      _csrf: csrfOf((await owner.agent.get('/console')).body),
    })
    assert.equal(forged.statusCode, 403)
    assert.equal((await audits('organization.created')).length, before)
    assert.equal(
      await t.deps.db
        .selectFrom('organizations')
        .select('id')
        .where('name', '=', 'No Token Inc')
        .executeTakeFirst(),
      undefined,
    )
  })
})

describe('organizations', () => {
  test('creating one writes its audit row and lands on its page; a name is required', async () => {
    const res = await operator.agent.submit('/console/operator/organizations', { name: 'Hooli' })
    const page = await follow(operator.agent, res)
    const id = /\/console\/operator\/organizations\/(org_\w+)/.exec(
      String(res.headers.location),
    )![1]
    assert.match(page.body, /<h1>Hooli<\/h1>/)
    assert.match(page.body, /Hooli is created/)
    assert.equal((await t.operator('GET', `/operator/v1/organizations/${id}`)).name, 'Hooli')
    const row = (await audits('organization.created')).find((r) => r.object_id === id)
    assert.ok(row, 'audited')
    assert.equal(row.actor_user_id, await operatorUserId())
    assert.equal(row.organization_id, id)

    const empty = await operator.agent.submit('/console/operator/organizations', { name: '  ' })
    assert.equal(empty.statusCode, 422)
    assert.match(empty.body, /Give the organization a name/)
  })

  test("the list pages with the API's cursors", async () => {
    for (let i = 0; i < 26; i++)
      await t.operator('POST', '/operator/v1/organizations', {
        name: `Paged ${String(i).padStart(2, '0')}`,
      })
    const first = await operator.agent.get('/console/operator/organizations')
    const next = /href="(\/console\/operator\/organizations\?after=[^"]+)">Next page/.exec(
      first.body,
    )
    assert.ok(next, 'a next page link')
    const second = await operator.agent.get(next[1].replace(/&amp;/g, '&'))
    assert.equal(second.statusCode, 200)
    assert.match(second.body, /Paged 25/)
    assert.doesNotMatch(main(second.body), /Globex/)
    assert.match(second.body, />First page</)
  })

  test("one organization's page lists its programs of both environments, clients, members and network policies", async () => {
    const org = (await t.operator('POST', '/operator/v1/organizations', { name: 'Initrode' })).id
    await t.operator('POST', '/operator/v1/programs', {
      organization_id: org,
      environment: 'sandbox',
      name: 'Sandbox cards',
      processor: 'sim_full',
      currencies: ['USD'],
    })
    await t.operator('POST', '/operator/v1/programs', {
      organization_id: org,
      environment: 'production',
      name: 'Live cards',
      processor: 'sim_basic',
      currencies: ['EUR'],
    })
    await t.operator('POST', '/operator/v1/clients', {
      organization_id: org,
      environment: 'production',
      label: 'Live backend',
      jwks: ecJwkSet('a').jwks,
    })
    await t.operator('PUT', `/operator/v1/organizations/${org}/network_policy`, {
      environment: 'production',
      ip_allowlist: ['203.0.113.0/24'],
    })
    await person(t, 'developer', org, { email: 'dev.initrode@example.test' })
    const page = await operator.agent.get(`/console/operator/organizations/${org}`)
    assert.equal(page.statusCode, 200)
    for (const text of [
      'Sandbox cards',
      'Live cards',
      'Live backend',
      'dev.initrode@example.test',
      '203.0.113.0/24',
      'Any (no restriction)',
    ])
      assert.match(page.body, new RegExp(text.replace(/[.()]/g, '\\$&')), text)
    assert.equal(
      (await operator.agent.get('/console/operator/organizations/org_nope')).statusCode,
      404,
    )
  })

  test('inviting a person shows the one-time link once, audited, and the link works', async () => {
    const res = await operator.agent.submit(
      `/console/operator/organizations/${orgId}`,
      { email: 'new.owner@example.test', role: 'owner' },
      `/console/operator/organizations/${orgId}/invitations`,
    )
    assert.equal(res.statusCode, 201, res.body.slice(0, 500))
    const url = /<code class="mono">([^<]+)<\/code>/.exec(res.body)![1]
    assert.match(url, /\/console\/invitations\/\w+/)
    assert.match(res.body, /shown only now/)
    const user = await t.deps.db
      .selectFrom('users')
      .selectAll()
      .where('email', '=', 'new.owner@example.test')
      .executeTakeFirstOrThrow()
    assert.equal(user.organization_id, orgId)
    assert.equal(user.role, 'owner')
    const row = (await audits('user.invited')).find((r) => r.object_id === user.id)
    assert.ok(row)
    assert.equal(row.actor_user_id, await operatorUserId())
    assert.equal((await new Agent(t).get(new URL(url).pathname)).statusCode, 200)
    // The organization page shows no link, only that the person is invited.
    const page = await operator.agent.get(`/console/operator/organizations/${orgId}`)
    assert.doesNotMatch(page.body, /\/console\/invitations\//)
    assert.match(page.body, /new\.owner@example\.test/)

    const again = await operator.agent.submit(
      `/console/operator/organizations/${orgId}`,
      { email: owner.email, role: 'viewer' },
      `/console/operator/organizations/${orgId}/invitations`,
    )
    assert.equal(again.statusCode, 422)
    assert.match(again.body, /already has a console account/)
  })
})

describe('programs', () => {
  test('creating one uses the processors of the registry, writes its audit row, and the list filters by organization and environment', async () => {
    const form = await operator.agent.get(`/console/operator/programs?organization=${orgId}`)
    for (const name of t.deps.processors.names())
      assert.match(form.body, new RegExp(`<option value="${name}"`))
    const res = await operator.agent.submit(`/console/operator/programs?organization=${orgId}`, {
      organization_id: orgId,
      environment: 'production',
      name: 'Globex Travel',
      processor: 'sim_full',
      currencies: 'usd, EUR',
      form_factors: 'virtual',
    })
    const page = await follow(operator.agent, res)
    assert.match(page.body, /Globex Travel/)
    const programs = (await t.operator('GET', `/operator/v1/programs?organization_id=${orgId}`))
      .data
    const program = programs.find((p: any) => p.name === 'Globex Travel')
    assert.deepEqual(
      [program.environment, program.currencies, program.form_factors],
      ['production', ['USD', 'EUR'], ['virtual']],
    )
    assert.deepEqual(
      [program.foreign_spend, program.fx_markup_bps, program.fx_fee],
      ['allowed', 0, 'included'],
      'a form without the FX fields: the defaults',
    )
    const row = (await audits('program.created')).find((r) => r.object_id === program.id)
    assert.ok(row)
    assert.equal(row.organization_id, orgId)

    const sandboxOnly = await operator.agent.get(
      `/console/operator/programs?organization=${orgId}&environment=sandbox`,
    )
    assert.doesNotMatch(main(sandboxOnly.body).split('Create a program')[0], /Globex Travel/)
    const production = await operator.agent.get(
      `/console/operator/programs?organization=${orgId}&environment=production`,
    )
    assert.match(production.body, /Globex Travel/)
  })

  test('a wrong currency, an unknown organization or a form factor the processor lacks is refused on the page', async () => {
    const audited = (await audits('program.created')).length
    const base = {
      organization_id: orgId,
      environment: 'sandbox',
      name: 'Bad',
      processor: 'sim_full',
      currencies: 'USD',
    }
    const currency = await operator.agent.submit('/console/operator/programs', {
      ...base,
      currencies: 'dollars',
    })
    assert.equal(currency.statusCode, 422)
    assert.match(currency.body, /three-letter codes/)
    const unknown = await operator.agent.submit('/console/operator/programs', {
      ...base,
      organization_id: 'org_missing',
    })
    assert.equal(unknown.statusCode, 422)
    assert.match(unknown.body, /No organization with this id/)
    const basic = t.deps.processors.profile('sim_basic')!
    const missing = ['virtual', 'physical'].find((f) => !basic.formFactors.includes(f))
    if (missing) {
      const factor = await operator.agent.submit('/console/operator/programs', {
        ...base,
        processor: 'sim_basic',
        form_factors: missing,
      })
      assert.equal(factor.statusCode, 422)
      assert.match(factor.body, /issues only/)
    }
    assert.equal((await audits('program.created')).length, audited)
  })

  test('a currency the service does not know is refused on the page, and nothing is created', async () => {
    const audited = (await audits('program.created')).length
    const res = await operator.agent.submit('/console/operator/programs', {
      organization_id: orgId,
      environment: 'sandbox',
      name: 'Gold',
      processor: 'sim_full',
      currencies: 'USD, XAU',
    })
    assert.equal(res.statusCode, 422)
    assert.match(res.body, /XAU is not an ISO 4217 currency the service knows/)
    assert.equal((await audits('program.created')).length, audited)
  })

  test("the foreign-exchange settings: set at creation, shown in the list, changed on the program's page with its audit row", async () => {
    const form = await operator.agent.get('/console/operator/programs')
    for (const name of ['foreign_spend', 'fx_markup_bps', 'fx_fee'])
      assert.match(form.body, new RegExp(`name="${name}"`))
    const res = await operator.agent.submit('/console/operator/programs', {
      organization_id: orgId,
      environment: 'sandbox',
      name: 'Globex Abroad',
      processor: 'sim_full',
      currencies: 'USD',
      foreign_spend: 'blocked',
      fx_markup_bps: '250',
      fx_fee: 'separate',
    })
    const list = await follow(operator.agent, res)
    const program = (
      await t.operator('GET', `/operator/v1/programs?organization_id=${orgId}`)
    ).data.find((p: any) => p.name === 'Globex Abroad')
    assert.deepEqual(
      [program.foreign_spend, program.fx_markup_bps, program.fx_fee],
      ['blocked', 250, 'separate'],
    )
    const row = main(list.body).split('Create a program')[0]
    assert.match(
      row,
      new RegExp(
        `<a href="/console/operator/programs/${program.id}">Globex Abroad</a>[\\s\\S]*?Blocked`,
      ),
    )

    const path = `/console/operator/programs/${program.id}`
    const page = await operator.agent.get(path)
    assert.equal(page.statusCode, 200)
    assert.match(page.body, /<h1>Program: Globex Abroad<\/h1>/)
    assert.match(page.body, /250 basis points/)
    assert.match(page.body, /<option value="blocked" selected>/)
    assert.match(page.body, /<option value="separate" selected>/)

    const changed = await operator.agent.submit(path, {
      name: 'Globex Abroad Plus',
      foreign_spend: 'allowed',
      fx_markup_bps: '300',
      fx_fee: 'included',
    })
    const after = await follow(operator.agent, changed)
    assert.match(after.body, /Program Globex Abroad Plus is changed/)
    const now = await t.operator('GET', `/operator/v1/programs/${program.id}`)
    assert.deepEqual(
      [now.name, now.foreign_spend, now.fx_markup_bps, now.fx_fee],
      ['Globex Abroad Plus', 'allowed', 300, 'included'],
    )
    assert.ok(now.updated_at >= program.updated_at)
    const audit = (await audits('program.updated')).filter((r) => r.object_id === program.id)
    assert.equal(audit.length, 1)
    assert.equal(audit[0].organization_id, orgId)
    assert.equal(audit[0].actor_user_id, await operatorUserId())

    const refused: [Record<string, string>, RegExp][] = [
      [{ fx_markup_bps: '1001' }, /whole number of basis points from 0 to 1000/],
      [{ fx_markup_bps: '2.5' }, /whole number of basis points/],
      [{ fx_markup_bps: '-1' }, /whole number of basis points/],
      [{ foreign_spend: 'sometimes' }, /allowed or blocked/],
      [{ fx_fee: 'hidden' }, /where the FX markup is booked/],
      [{ name: ' ' }, /name of 1 to 200 characters/],
    ]
    for (const [fields, message] of refused) {
      const res = await operator.agent.submit(path, {
        name: 'Changed Again',
        foreign_spend: 'blocked',
        fx_markup_bps: '10',
        fx_fee: 'separate',
        ...fields,
      })
      assert.equal(res.statusCode, 422, JSON.stringify(fields))
      assert.match(res.body, message)
    }
    assert.deepEqual(
      await t.operator('GET', `/operator/v1/programs/${program.id}`),
      now,
      'nothing changed',
    )
    assert.equal(
      (await audits('program.updated')).filter((r) => r.object_id === program.id).length,
      1,
    )

    const keep = await operator.agent.submit(path, { name: 'Globex Abroad Plus' })
    await follow(operator.agent, keep)
    const kept = await t.operator('GET', `/operator/v1/programs/${program.id}`)
    assert.deepEqual(
      [kept.foreign_spend, kept.fx_markup_bps, kept.fx_fee],
      ['allowed', 300, 'included'],
      'fields the form did not send stay',
    )

    assert.equal(
      (await operator.agent.get('/console/operator/programs/prog_00000000000000000000000000'))
        .statusCode,
      404,
    )
    assert.equal((await owner.agent.get(path)).statusCode, 403)
    const csrf = csrfOf((await owner.agent.get('/console')).body)
    assert.equal(
      (await owner.agent.post(path, { _csrf: csrf, name: 'Sneaky', fx_markup_bps: '1000' }))
        .statusCode,
      403,
    )
    assert.equal(
      (await t.operator('GET', `/operator/v1/programs/${program.id}`)).fx_markup_bps,
      300,
    )
  })
})

describe('API clients', () => {
  test('registering by pasting a JWK Set: audited, and the client gets a token with its key', async () => {
    const key = ecJwkSet('main-1')
    const res = await operator.agent.submit(
      '/console/operator/clients/new',
      {
        organization_id: orgId,
        environment: 'sandbox',
        label: 'Pasted JWKS',
        keys: JSON.stringify(key.jwks),
        scopes: ['cards:read', 'cardholders:read'],
        ip_allowlist: '',
      },
      '/console/operator/clients',
    )
    const page = await follow(operator.agent, res)
    const id = /\/console\/operator\/clients\/(oc_\w+)/.exec(String(res.headers.location))![1]
    assert.match(page.body, /main-1/)
    const client = await t.operator('GET', `/operator/v1/clients/${id}`)
    assert.deepEqual(client.scopes, ['cards:read', 'cardholders:read'])
    assert.equal(client.ip_allowlist, null)
    const row = (await audits('client.created')).find((r) => r.object_id === id)
    assert.ok(row)
    assert.equal(row.organization_id, orgId)
    const assertion = await signClientAssertion({
      clientId: id,
      privateJwk: key.privateJwk,
      audience: TOKEN_URL,
      nowSeconds: Math.floor(t.clock.now().getTime() / 1000),
    })
    assert.equal((await requestToken(t, tokenRequestBody(assertion))).statusCode, 200)
  })

  test('registering with a PEM public key converts it to a JWK whose kid is its thumbprint', async () => {
    const key = ecJwkSet()
    const pem = key.publicKey.export({ type: 'spki', format: 'pem' }) as string
    const res = await operator.agent.submit(
      '/console/operator/clients/new',
      {
        organization_id: orgId,
        environment: 'sandbox',
        label: 'From PEM',
        keys: pem,
        scopes: 'cards:read',
        ip_allowlist: '198.51.100.7\n203.0.113.0/24',
      },
      '/console/operator/clients',
    )
    assert.equal(res.statusCode, 303, res.body.slice(0, 1500))
    const id = /(oc_\w+)/.exec(String(res.headers.location))![1]
    const client = await t.operator('GET', `/operator/v1/clients/${id}`)
    assert.equal(client.jwks.keys.length, 1)
    const [jwk] = client.jwks.keys
    assert.deepEqual(
      [jwk.kty, jwk.crv, jwk.x, jwk.y],
      ['EC', 'P-256', key.publicJwk.x, key.publicJwk.y],
    )
    assert.match(jwk.kid, /^[A-Za-z0-9_-]{43}$/)
    assert.equal('d' in jwk, false)
    assert.deepEqual(client.ip_allowlist, ['198.51.100.7', '203.0.113.0/24'])
  })

  test('a private JWK or a private PEM is refused with a clear message and never shown back', async () => {
    const key = ecJwkSet('leak')
    const before = (await audits('client.created')).length
    const fields = {
      organization_id: orgId,
      environment: 'sandbox',
      label: 'Leaky',
      scopes: 'cards:read',
      ip_allowlist: '',
    }
    const jwk = await operator.agent.submit(
      '/console/operator/clients/new',
      { ...fields, keys: JSON.stringify({ keys: [key.privateJwk] }) },
      '/console/operator/clients',
    )
    assert.equal(jwk.statusCode, 422)
    assert.match(jwk.body, /private key: it is never accepted/)
    assert.doesNotMatch(jwk.body, new RegExp(String(key.privateJwk.d)))
    const pem = key.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
    const refused = await operator.agent.submit(
      '/console/operator/clients/new',
      { ...fields, keys: pem },
      '/console/operator/clients',
    )
    assert.equal(refused.statusCode, 422)
    assert.match(refused.body, /private key: it is never accepted/)
    assert.doesNotMatch(refused.body, /PRIVATE KEY/)
    const sec1 = key.privateKey.export({ type: 'sec1', format: 'pem' }) as string
    assert.equal(
      (
        await operator.agent.submit(
          '/console/operator/clients/new',
          { ...fields, keys: sec1 },
          '/console/operator/clients',
        )
      ).statusCode,
      422,
    )
    // On an existing client's "add a key" form too.
    const client = await t.operator('POST', '/operator/v1/clients', {
      organization_id: orgId,
      environment: 'sandbox',
      label: 'Target',
      jwks: ecJwkSet('t1').jwks,
    })
    const add = await operator.agent.submit(
      `/console/operator/clients/${client.id}`,
      { keys: JSON.stringify(key.privateJwk) },
      `/console/operator/clients/${client.id}/keys`,
    )
    assert.equal(add.statusCode, 422)
    assert.match(add.body, /private key: it is never accepted/)
    // The one created row is the operator API's own (the "Target" client): no refused key made a client.
    const created = await audits('client.created')
    assert.equal(created.length, before + 1)
    assert.equal(created.at(-1)!.object_id, client.id)
    assert.equal((await t.operator('GET', `/operator/v1/clients/${client.id}`)).jwks.keys.length, 1)
  })

  test('a key the oauth module refuses (a weak RSA key, a wrong curve) is refused with its reason', async () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-384' })
    const res = await operator.agent.submit(
      '/console/operator/clients/new',
      {
        organization_id: orgId,
        environment: 'sandbox',
        label: 'P-384',
        keys: publicKey.export({ type: 'spki', format: 'pem' }) as string,
        scopes: 'cards:read',
      },
      '/console/operator/clients',
    )
    assert.equal(res.statusCode, 422)
    assert.match(res.body, /P-256/)
    const garbage = await operator.agent.submit(
      '/console/operator/clients/new',
      { organization_id: orgId, environment: 'sandbox', label: 'x', keys: 'hello' },
      '/console/operator/clients',
    )
    assert.equal(garbage.statusCode, 422)
    assert.match(garbage.body, /Paste a JWK Set/)
  })

  test('label, scopes and allowlist change; keys are added (up to three) and removed; every change is audited', async () => {
    const client = await t.operator('POST', '/operator/v1/clients', {
      organization_id: orgId,
      environment: 'sandbox',
      label: 'Rotating',
      scopes: ['cards:read'],
      jwks: ecJwkSet().jwks,
    })
    const path = `/console/operator/clients/${client.id}`
    await follow(
      operator.agent,
      await operator.agent.submit(path, {
        label: 'Rotating backend',
        scopes: ['cards:read', 'cards:write'],
        ip_allowlist: '192.0.2.0/24',
      }),
    )
    let now = await t.operator('GET', `/operator/v1/clients/${client.id}`)
    assert.deepEqual(
      [now.label, now.scopes, now.ip_allowlist],
      ['Rotating backend', ['cards:read', 'cards:write'], ['192.0.2.0/24']],
    )
    assert.equal(
      (await audits('client.updated')).filter((r) => r.object_id === client.id).length,
      1,
    )
    const bad = await operator.agent.submit(path, {
      label: 'Rotating backend',
      scopes: 'cards:read',
      ip_allowlist: 'not-an-address',
    })
    assert.equal(bad.statusCode, 422)
    assert.match(bad.body, /not an IP address or CIDR range/)

    const second = ecJwkSet('second')
    const added = await follow(
      operator.agent,
      await operator.agent.submit(path, { keys: JSON.stringify(second.jwks) }, `${path}/keys`),
    )
    assert.match(added.body, /Key second is added/)
    now = await t.operator('GET', `/operator/v1/clients/${client.id}`)
    assert.equal(now.jwks.keys.length, 2)
    assert.ok(
      now.jwks.keys.every((k: any) => typeof k.kid === 'string'),
      'the first key got a kid too',
    )
    await follow(
      operator.agent,
      await operator.agent.submit(
        path,
        { keys: JSON.stringify(ecJwkSet('third').publicJwk) },
        `${path}/keys`,
      ),
    )
    const full = await operator.agent.get(path)
    assert.match(full.body, /the most it can hold/)
    const fourth = await operator.agent.post(`${path}/keys`, {
      _csrf: csrfOf(full.body),
      keys: JSON.stringify(ecJwkSet('fourth').jwks),
    })
    assert.equal(fourth.statusCode, 422)
    assert.match(fourth.body, /At most 3 keys/)
    assert.equal(
      (await audits('client.key_added')).filter((r) => r.object_id === client.id).length,
      2,
    )

    // The client signs with the new key while the old one is removed: rotation.
    const oldKid = now.jwks.keys[0].kid
    await follow(
      operator.agent,
      await operator.agent.submit(path, { kid: oldKid }, `${path}/keys/remove`),
    )
    now = await t.operator('GET', `/operator/v1/clients/${client.id}`)
    assert.deepEqual(
      now.jwks.keys.map((k: any) => k.kid),
      ['second', 'third'],
    )
    assert.equal(
      (await audits('client.key_removed')).filter((r) => r.object_id === client.id).length,
      1,
    )
    // With the allowlist lifted, the new key gets a token.
    await follow(
      operator.agent,
      await operator.agent.submit(path, {
        label: 'Rotating backend',
        scopes: ['cards:read', 'cards:write'],
        ip_allowlist: '',
      }),
    )
    assert.equal((await t.operator('GET', `/operator/v1/clients/${client.id}`)).ip_allowlist, null)
    const assertion = await signClientAssertion({
      clientId: client.id,
      privateJwk: second.privateJwk,
      audience: TOKEN_URL,
      nowSeconds: Math.floor(t.clock.now().getTime() / 1000),
    })
    assert.equal((await requestToken(t, tokenRequestBody(assertion))).statusCode, 200)
    assert.equal(
      (await audits('client.updated')).filter((r) => r.object_id === client.id).length,
      2,
    )
  })

  test('revoking asks first, then revokes at once with its audit row; the list filters by status', async () => {
    const tenant = await createTenant(t, { organizationId: orgId })
    const token = await tenant.token()
    const path = `/console/operator/clients/${tenant.clientId}`
    const confirm = await operator.agent.get(`${path}/revoke`)
    assert.equal(confirm.statusCode, 200)
    assert.match(confirm.body, /cannot be undone/)
    assert.equal(
      (await t.operator('GET', `/operator/v1/clients/${tenant.clientId}`)).status,
      'active',
      'the confirmation page changes nothing',
    )
    const page = await follow(
      operator.agent,
      await operator.agent.post(`${path}/revoke`, { _csrf: csrfOf(confirm.body) }),
    )
    assert.match(page.body, /is revoked/)
    assert.equal(
      (await t.operator('GET', `/operator/v1/clients/${tenant.clientId}`)).status,
      'revoked',
    )
    assert.equal(
      (await t.api(token, 'GET', '/v1/cardholders')).statusCode,
      401,
      'its tokens stop working',
    )
    const rows = (await audits('client.revoked')).filter((r) => r.object_id === tenant.clientId)
    assert.equal(rows.length, 1)
    assert.equal(rows[0].organization_id, orgId)
    // Revoking again changes nothing and writes nothing.
    await operator.agent.post(`${path}/revoke`, { _csrf: csrfOf(confirm.body) })
    assert.equal(
      (await audits('client.revoked')).filter((r) => r.object_id === tenant.clientId).length,
      1,
    )

    const revoked = await operator.agent.get(
      `/console/operator/clients?organization=${orgId}&status=revoked`,
    )
    assert.match(revoked.body, new RegExp(tenant.clientId))
    const active = await operator.agent.get(
      `/console/operator/clients?organization=${orgId}&status=active`,
    )
    assert.doesNotMatch(active.body, new RegExp(tenant.clientId))
  })
})

describe('network policies', () => {
  test("an organization's allowlist is set per environment, audited; empty lifts it; a wrong range is refused", async () => {
    const org = (await t.operator('POST', '/operator/v1/organizations', { name: 'Vandelay' })).id
    const path = `/console/operator/network-policies?organization=${org}`
    const set = await follow(
      operator.agent,
      await operator.agent.submit(
        path,
        {
          organization_id: org,
          environment: 'sandbox',
          ip_allowlist: '198.51.100.0/24\n192.0.2.1',
        },
        '/console/operator/network-policies',
      ),
    )
    assert.match(set.body, /1 range|2 ranges/)
    const policies = await t.deps.db
      .selectFrom('network_policies')
      .selectAll()
      .where('organization_id', '=', org)
      .execute()
    assert.deepEqual(
      policies.map((p) => [p.environment, p.ip_allowlist]),
      [['sandbox', ['198.51.100.0/24', '192.0.2.1']]],
    )
    assert.equal(
      (await audits('network_policy.updated')).filter(
        (r) => r.object_id === org && r.organization_id === org,
      ).length,
      1,
    )
    const overview = await operator.agent.get('/console/operator/network-policies')
    assert.match(overview.body, /Vandelay/)

    const bad = await operator.agent.submit(
      path,
      { organization_id: org, environment: 'production', ip_allowlist: '300.1.1.1' },
      '/console/operator/network-policies',
    )
    assert.equal(bad.statusCode, 422)
    assert.match(bad.body, /300\.1\.1\.1 is not an IP address/)

    await follow(
      operator.agent,
      await operator.agent.submit(
        path,
        { organization_id: org, environment: 'sandbox', ip_allowlist: '' },
        '/console/operator/network-policies',
      ),
    )
    const lifted = await t.deps.db
      .selectFrom('network_policies')
      .selectAll()
      .where('organization_id', '=', org)
      .executeTakeFirstOrThrow()
    assert.deepEqual(lifted.ip_allowlist, [])
    assert.equal(
      (await audits('network_policy.updated')).filter((r) => r.object_id === org).length,
      2,
    )
    assert.equal(
      (await operator.agent.get('/console/operator/network-policies?organization=org_nope'))
        .statusCode,
      404,
    )
  })
})

describe('eSIM', () => {
  test('a pasted CSV loads profiles, audited once; a second load skips them; counts show on the page', async () => {
    const profiles = blankProfiles(3)
    const csv = [
      'iccid,smdp_address,matching_id',
      ...profiles.map((p) => `${p.iccid},${p.smdp_address},${p.matching_id}`),
      '',
    ].join('\n')
    const before = (await t.operator('GET', '/operator/v1/esim/inventory')).available
    const first = await follow(
      operator.agent,
      await operator.agent.submit(
        '/console/operator/esim',
        { csv },
        '/console/operator/esim/inventory',
      ),
    )
    assert.match(first.body, /3 profiles loaded\./)
    assert.equal((await t.operator('GET', '/operator/v1/esim/inventory')).available, before + 3)
    assert.match(first.body, new RegExp(`>${(before + 3).toLocaleString('en-US')}<`))
    const second = await follow(
      operator.agent,
      await operator.agent.submit(
        '/console/operator/esim',
        { csv },
        '/console/operator/esim/inventory',
      ),
    )
    assert.match(second.body, /0 profiles loaded\. 3 already in stock were skipped\./)
    assert.equal(
      (await audits('esim_inventory.loaded')).length,
      1,
      'a load that adds nothing changes nothing',
    )
  })

  test('a malformed line, an invalid ICCID or an empty text loads nothing and says why', async () => {
    const [good] = blankProfiles(1)
    const before = (await t.operator('GET', '/operator/v1/esim/inventory')).available
    const shape = await operator.agent.submit(
      '/console/operator/esim',
      { csv: `${good.iccid},${good.smdp_address},${good.matching_id}\nnot,a line` },
      '/console/operator/esim/inventory',
    )
    assert.equal(shape.statusCode, 422)
    assert.match(shape.body, /line 2: expected iccid,smdp_address,matching_id/)
    const iccid = await operator.agent.submit(
      '/console/operator/esim',
      {
        csv: `${good.iccid},${good.smdp_address},${good.matching_id}\n8944500000000000001,smdp.example,ABC`,
      },
      '/console/operator/esim/inventory',
    )
    assert.equal(iccid.statusCode, 422)
    assert.match(iccid.body, /ICCID/)
    const empty = await operator.agent.submit(
      '/console/operator/esim',
      { csv: '\n\n' },
      '/console/operator/esim/inventory',
    )
    assert.equal(empty.statusCode, 422)
    assert.equal(
      (await t.operator('GET', '/operator/v1/esim/inventory')).available,
      before,
      'all or nothing',
    )
  })

  test('a large paste is accepted up to its bound', async () => {
    const profiles = blankProfiles(2000)
    const csv = profiles.map((p) => `${p.iccid},${p.smdp_address},${p.matching_id}`).join('\n')
    assert.ok(csv.length > 16 * 1024)
    const res = await follow(
      operator.agent,
      await operator.agent.submit(
        '/console/operator/esim',
        { csv },
        '/console/operator/esim/inventory',
      ),
    )
    assert.match(res.body, /2,000 profiles loaded/)
    const tooBig = await operator.agent.post('/console/operator/esim/inventory', {
      _csrf: csrfOf(res.body),
      csv: 'x'.repeat(1024 * 1024 + 10),
    })
    assert.equal(tooBig.statusCode, 413)
  })

  test("a package's sale status changes through the operator API's rules; withdrawing asks first and is final", async () => {
    const pkg = await t.operator('POST', '/operator/v1/esim/packages', {
      name: 'Console test pack',
      data_mb: 1024,
      validity_days: 7,
      countries: ['FRA'],
      region: 'local',
      price: 500,
      currency: 'EUR',
    })
    // The catalogue is seeded with many packages: the new one is on a later page, oldest first.
    let page = await operator.agent.get('/console/operator/esim?status=on_sale')
    for (let i = 0; i < 20 && !page.body.includes('Console test pack'); i++) {
      const next = /href="([^"]+)">Next page/.exec(page.body)
      assert.ok(next, 'another page')
      page = await operator.agent.get(next[1].replace(/&amp;/g, '&'))
    }
    assert.match(page.body, /Console test pack/)
    assert.match(page.body, /€5\.00/)
    const action = `/console/operator/esim/packages/${pkg.id}/status`
    const frozen = await follow(
      operator.agent,
      await operator.agent.post(action, { _csrf: csrfOf(page.body), status: 'frozen' }),
    )
    assert.match(frozen.body, /Console test pack is frozen now/)
    assert.equal((await t.operator('GET', `/operator/v1/esim/packages/${pkg.id}`)).status, 'frozen')
    const ask = await operator.agent.post(action, { _csrf: csrfOf(page.body), status: 'withdrawn' })
    assert.equal(ask.statusCode, 200)
    assert.match(ask.body, /permanent/)
    assert.equal(
      (await t.operator('GET', `/operator/v1/esim/packages/${pkg.id}`)).status,
      'frozen',
      'asking changes nothing',
    )
    await follow(
      operator.agent,
      await operator.agent.post(action, {
        _csrf: csrfOf(ask.body),
        status: 'withdrawn',
        confirm: 'yes',
      }),
    )
    assert.equal(
      (await t.operator('GET', `/operator/v1/esim/packages/${pkg.id}`)).status,
      'withdrawn',
    )
    const back = await operator.agent.post(action, { _csrf: csrfOf(page.body), status: 'on_sale' })
    assert.equal(back.statusCode, 422)
    assert.match(back.body, /withdrawal is permanent/)
    assert.equal(
      (await audits('esim_package.status_changed')).filter((r) => r.object_id === pkg.id).length,
      2,
    )
  })
})

describe('system health', () => {
  test('job queue depth by type and state, webhook backlog and failing endpoints, and the oldest unsettled eSIM order', async () => {
    const empty = await operator.agent.get('/console/operator/health')
    assert.equal(empty.statusCode, 200)

    await withTx(t.deps.db, async (trx) => {
      await enqueue(trx, { type: 'card.issue', payload: {} })
      await enqueue(trx, { type: 'card.issue', payload: {} })
    })
    await t.deps.db
      .updateTable('jobs')
      .set({ state: 'dead' })
      .where(
        'id',
        '=',
        (
          await t.deps.db
            .selectFrom('jobs')
            .select('id')
            .where('type', '=', 'card.issue')
            .orderBy('id')
            .executeTakeFirstOrThrow()
        ).id,
      )
      .execute()

    const fx = await esimFixture(t)
    const endpoint = await t.api(fx.token, 'POST', '/v1/webhook_endpoints', {
      url: 'http://127.0.0.1:9/hooks',
      enabled_events: ['*'],
    })
    assert.equal(endpoint.statusCode, 201, endpoint.body)
    const failingSince = new Date(t.clock.now().getTime() - 3 * 60 * 60 * 1000)
    await t.deps.db
      .updateTable('webhook_endpoints')
      .set({ failing_since: failingSince })
      .where('id', '=', endpoint.json().id)
      .execute()
    await t.api(fx.token, 'POST', '/v1/cardholders', {
      type: 'individual',
      first_name: 'Grace',
      last_name: 'Hopper',
      email: `grace.${Date.now()}@example.com`,
      address: { line1: '1 Main St', city: 'Arlington', postal_code: '22201', country: 'USA' },
    })
    const pkg = await packageFor(t, fx.token)
    await t.api(fx.token, 'POST', '/v1/simulate/esim/provisioning', {
      next_outcome: 'timeout',
      settles_as: 'completed',
    })
    const order = await t.api(fx.token, 'POST', '/v1/esim/orders', {
      package_id: pkg.id,
      reference: `health-${Date.now()}`,
      cardholder_id: fx.cardholder.id,
    })
    assert.equal(order.statusCode, 502, order.body)
    const unsettled = await t.deps.db
      .selectFrom('esim_orders')
      .select('id')
      .where('organization_id', '=', fx.tenant.organizationId)
      .where('status', '=', 'unsettled')
      .executeTakeFirstOrThrow()

    const page = await operator.agent.get('/console/operator/health')
    assert.equal(page.statusCode, 200)
    const row = /<tr[^>]*><td[^>]*><code>card\.issue<\/code><\/td>(.*?)<\/tr>/.exec(page.body)
    assert.ok(row, 'a row for card.issue')
    assert.deepEqual(
      [...row[1].matchAll(/<td[^>]* class="num"[^>]*>(?:<span class="warn">)?(\d+)/g)].map((m) =>
        Number(m[1]),
      ),
      [1, 0, 1],
    )
    assert.match(page.body, /Deliveries pending<\/dt><dd>[1-9]/)
    assert.match(
      page.body,
      /Endpoints failing<\/dt><dd><span class="warn">1<\/span>, failing since <time datetime="([^"]+)"/,
    )
    assert.match(page.body, new RegExp(`datetime="${failingSince.toISOString()}"`))
    assert.match(page.body, /3 h 0 min ago/)
    assert.match(page.body, new RegExp(`<code>${unsettled.id}</code>`))
  })
})
