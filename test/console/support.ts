import assert from 'node:assert/strict'
import type { LightMyRequestResponse } from 'fastify'
import { cardBody, issuedCard, makeAccount, makeCardholder } from '../cards/support.js'
import type { TestApp, TestAppOptions, TestClient } from '../helpers/app.js'
import { withTenant, type TenantFixture } from '../helpers/tenant.js'

/** A password every rule accepts. */
export const GOOD_PASSWORD = 'violet-harbour-lantern-42'

/** The `_csrf` value of the first form of a page. */
export function csrfOf(body: string): string {
  const match = /name="_csrf" value="([^"]*)"/.exec(body)
  assert.ok(match, 'the page has a form with a CSRF field')
  return match[1]
}

/** Every Set-Cookie line of an answer. */
export function setCookies(res: LightMyRequestResponse): string[] {
  const raw = res.headers['set-cookie']
  return raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]
}

/** The Set-Cookie line of one cookie, if the answer set it. */
export function cookieLine(res: LightMyRequestResponse, name: string): string | undefined {
  return setCookies(res).find((l) => l.startsWith(`${name}=`))
}

/**
 * A browser over `app.inject`: keeps the console's cookies, sends forms url-encoded, follows nothing by itself
 * (a test reads each 303). `submit` loads a page, takes the CSRF token of its form and posts the fields.
 */
export class Agent {
  readonly cookies = new Map<string, string>()
  /** `remoteAddress`: the connection's peer address (inject's default is 127.0.0.1). */
  constructor(
    private readonly t: TestApp,
    private readonly headers: Record<string, string> = {},
    private readonly remoteAddress?: string,
  ) {}

  private peer(): { remoteAddress?: string } {
    return this.remoteAddress ? { remoteAddress: this.remoteAddress } : {}
  }

  private cookieHeader(): Record<string, string> {
    return this.cookies.size
      ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') }
      : {}
  }

  private keep(res: LightMyRequestResponse): LightMyRequestResponse {
    for (const line of setCookies(res)) {
      const [pair] = line.split(';')
      const eq = pair.indexOf('=')
      const name = pair.slice(0, eq)
      const value = pair.slice(eq + 1)
      if (/Max-Age=0\b/.test(line) || value === '') this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    return res
  }

  async get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    return this.keep(
      await this.t.app.inject({
        method: 'GET',
        url,
        ...this.peer(),
        headers: { ...this.headers, ...this.cookieHeader(), ...headers },
      }),
    )
  }

  async post(
    url: string,
    fields: Record<string, string | string[]>,
    headers: Record<string, string> = {},
  ): Promise<LightMyRequestResponse> {
    const body = new URLSearchParams()
    for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one)
    return this.keep(
      await this.t.app.inject({
        method: 'POST',
        url,
        payload: body.toString(),
        ...this.peer(),
        headers: {
          ...this.headers,
          ...this.cookieHeader(),
          'content-type': 'application/x-www-form-urlencoded',
          ...headers,
        },
      }),
    )
  }

  /** Loads `page`, then posts `fields` with its CSRF token to `action` (default: the page itself). */
  async submit(
    page: string,
    fields: Record<string, string | string[]>,
    action = page.split('?')[0],
  ): Promise<LightMyRequestResponse> {
    const res = await this.get(page)
    assert.equal(res.statusCode, 200, `${page}: ${res.statusCode} ${res.body.slice(0, 300)}`)
    return this.post(action, { _csrf: csrfOf(res.body), ...fields })
  }

  async signIn(email: string, password: string): Promise<LightMyRequestResponse> {
    return this.submit('/console/sign-in', { email, password })
  }
}

/** An invitation through the operator API; answers the link's path (`/console/invitations/<token>`) and the answer. */
export async function invite(
  t: TestApp,
  body: { email: string; role: string; organization_id?: string },
): Promise<{ path: string; url: string; answer: any }> {
  const answer = await t.operator('POST', '/operator/v1/users/invitations', body)
  return { path: new URL(answer.url).pathname, url: answer.url, answer }
}

export interface Person {
  agent: Agent
  email: string
  password: string
  organizationId: string | null
}

let counter = 0

/** A person of `role` who accepted their invitation (and so is signed in on `agent`). */
export async function person(
  t: TestApp,
  role: 'owner' | 'developer' | 'viewer' | 'operator',
  organizationId: string | null = null,
  options: { email?: string; headers?: Record<string, string> } = {},
): Promise<Person> {
  const email = options.email ?? `${role}.${++counter}.${Date.now()}@example.test`
  const org =
    role === 'operator'
      ? null
      : (organizationId ??
        (await t.operator('POST', '/operator/v1/organizations', { name: 'Acme Robotics' })).id)
  const { path } = await invite(t, { email, role, ...(org ? { organization_id: org } : {}) })
  const agent = new Agent(t, options.headers)
  const res = await agent.submit(path, {
    password: GOOD_PASSWORD,
    password_confirmation: GOOD_PASSWORD,
  })
  assert.equal(res.statusCode, 303, res.body.slice(0, 500))
  assert.equal(res.headers.location, '/console')
  return { agent, email, password: GOOD_PASSWORD, organizationId: org }
}

/** The page body without what differs on every answer (the CSP nonce), to compare two answers. */
export function stable(body: string): string {
  return body.replace(/nonce="[^"]*"/g, 'nonce=""')
}

/** A page's main content without the layout (the navigation and the header's search box). */
export function main(body: string): string {
  return body.slice(body.indexOf('<main'))
}

/** Follows a 303 answer to the page it leads to; fails the test unless both answer as a finished change should. */
export async function follow(
  agent: Agent,
  res: { statusCode: number; headers: Record<string, unknown>; body: string },
): Promise<LightMyRequestResponse> {
  assert.equal(res.statusCode, 303, res.body.slice(0, 1500))
  const page = await agent.get(String(res.headers.location))
  assert.equal(page.statusCode, 200, page.body.slice(0, 800))
  return page
}

/** A change form's fields: its CSRF token, its one-time key and the rest. */
export type ChangeForm = Record<string, string> & { _csrf: string; idempotency_key: string }

/**
 * The fields of the change form posting to `action` on a page, hidden ones included, to resend it exactly; fails
 * the test unless the form carries its CSRF token and its one-time key.
 */
export function formFields(body: string, action: string): ChangeForm {
  const forms = body.matchAll(/<form method="post" action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)
  const form = [...forms].find((m) => m[1] === action)
  assert.ok(form, `a form posting to ${action}`)
  const fields: Record<string, string> = {}
  for (const m of form[2].matchAll(/<input [^>]*name="([^"]+)"[^>]*value="([^"]*)"/g))
    fields[m[1]] = m[2]
  assert.ok(
    fields._csrf && fields.idempotency_key,
    `the form to ${action} carries a CSRF token and a one-time key`,
  )
  return fields as ChangeForm
}

/** The audit rows of one action (oldest first), in one organization when `organizationId` is given. */
export async function auditRows(
  t: TestApp,
  action: string,
  organizationId?: string,
): Promise<{ id: string; object_id: string | null }[]> {
  let query = t.deps.db
    .selectFrom('audit_log')
    .select(['id', 'object_id'])
    .where('action', '=', action)
  if (organizationId) query = query.where('organization_id', '=', organizationId)
  return query.orderBy('id').execute()
}

/** Who and what the object pages' tests share, beside the tenant: its owner and viewer, and an issued card. */
export interface ObjectPagesFixture {
  owner: Person
  viewer: Person
  /** A third owner of the organization, who works in production (the environment switch is per person). */
  prodOwner: Person
  cardholder: any
  /** The cardholder's sim_full USD account, funded with 500.00. */
  account: any
  card: any
}

/**
 * A test file of the object pages: the app and its tenant (`withTenant`), the tenant's people and an issued card on a
 * funded account, made through the API; `ready` gets them once they exist, then may prepare more.
 */
export function withObjectPages(
  ready: (fixture: TenantFixture & ObjectPagesFixture) => unknown,
  app?: TestAppOptions,
): void {
  withTenant(
    async (fixture) => {
      const { t, tenant, token } = fixture
      await ready({ ...fixture, ...(await objectPagesFixture(t, tenant, token)) })
    },
    { app },
  )
}

async function objectPagesFixture(
  t: TestApp,
  tenant: TestClient,
  token: string,
): Promise<ObjectPagesFixture> {
  const owner = await person(t, 'owner', tenant.organizationId)
  const viewer = await person(t, 'viewer', tenant.organizationId)
  const prodOwner = await person(t, 'owner', tenant.organizationId)
  await prodOwner.agent.submit(
    '/console',
    { environment: 'production', return_to: '/console' },
    '/console/environment',
  )
  const cardholder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, cardholder.id)
  const card = await issuedCard(t, token, cardBody(cardholder.id, account.id))
  const credit = await t.api(token, 'POST', `/v1/accounts/${account.id}/credit`, { amount: 50_000 })
  assert.equal(credit.statusCode, 200, credit.body)
  return { owner, viewer, prodOwner, cardholder, account, card }
}

/** A POST a test sends: the address and the form's fields (the CSRF field is added). */
export type FormPost = readonly [url: string, fields: Readonly<Record<string, string>>]

/** `person` reads each page without a form that changes anything, and each POST is refused 403. */
export async function expectReadOnly(
  person: Person,
  pages: readonly string[],
  posts: readonly FormPost[],
): Promise<void> {
  for (const page of pages) {
    const res = await person.agent.get(page)
    assert.equal(res.statusCode, 200, page)
    assert.doesNotMatch(main(res.body), /method="post"/, `${page} has no change form for a viewer`)
  }
  await expectPostsAnswer(person, posts, 403)
}

/** In `person`'s production environment each page shows no sandbox tool, and each sandbox POST answers 404. */
export async function expectNoSandboxTools(
  person: Person,
  pages: readonly string[],
  posts: readonly FormPost[],
): Promise<void> {
  for (const page of pages) {
    const res = await person.agent.get(page)
    assert.equal(res.statusCode, 200, page)
    assert.doesNotMatch(res.body, /class="card sandbox"/, page)
  }
  await expectPostsAnswer(person, posts, 404)
}

async function expectPostsAnswer(
  person: Person,
  posts: readonly FormPost[],
  status: number,
): Promise<void> {
  const csrf = csrfOf((await person.agent.get('/console')).body)
  for (const [url, fields] of posts) {
    const res = await person.agent.post(url, { _csrf: csrf, ...fields })
    assert.equal(res.statusCode, status, url)
  }
}
