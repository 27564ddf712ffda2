import assert from 'node:assert/strict'
import type { LightMyRequestResponse } from 'fastify'
import { cardBody, issuedCard, makeAccount, makeCardholder } from '../cards/support.js'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'

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
  constructor(private readonly t: TestApp, private readonly headers: Record<string, string> = {}) {}

  private cookieHeader(): Record<string, string> {
    return this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {}
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
    return this.keep(await this.t.app.inject({ method: 'GET', url, headers: { ...this.headers, ...this.cookieHeader(), ...headers } }))
  }

  async post(url: string, fields: Record<string, string | string[]>, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const body = new URLSearchParams()
    for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one)
    return this.keep(await this.t.app.inject({
      method: 'POST', url, payload: body.toString(),
      headers: { ...this.headers, ...this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded', ...headers },
    }))
  }

  /** Loads `page`, then posts `fields` with its CSRF token to `action` (default: the page itself). */
  async submit(page: string, fields: Record<string, string | string[]>, action = page.split('?')[0]): Promise<LightMyRequestResponse> {
    const res = await this.get(page)
    assert.equal(res.statusCode, 200, `${page}: ${res.statusCode} ${res.body.slice(0, 300)}`)
    return this.post(action, { _csrf: csrfOf(res.body), ...fields })
  }

  async signIn(email: string, password: string): Promise<LightMyRequestResponse> {
    return this.submit('/console/sign-in', { email, password })
  }
}

/** An invitation through the operator API; answers the link's path (`/console/invitations/<token>`) and the answer. */
export async function invite(t: TestApp, body: { email: string; role: string; organization_id?: string }): Promise<{ path: string; url: string; answer: any }> {
  const answer = await t.operator('POST', '/operator/v1/users/invitations', body)
  return { path: new URL(answer.url).pathname, url: answer.url, answer }
}

export interface Person { agent: Agent; email: string; password: string; organizationId: string | null }

let counter = 0

/** A person of `role` who accepted their invitation (and so is signed in on `agent`). */
export async function person(t: TestApp, role: 'owner' | 'developer' | 'viewer' | 'operator', organizationId: string | null = null, options: { email?: string; headers?: Record<string, string> } = {}): Promise<Person> {
  const email = options.email ?? `${role}.${++counter}.${Date.now()}@example.test`
  const org = role === 'operator' ? null : organizationId ?? (await t.operator('POST', '/operator/v1/organizations', { name: 'Acme Robotics' })).id
  const { path } = await invite(t, { email, role, ...(org ? { organization_id: org } : {}) })
  const agent = new Agent(t, options.headers)
  const res = await agent.submit(path, { password: GOOD_PASSWORD, password_confirmation: GOOD_PASSWORD })
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
export async function follow(agent: Agent, res: { statusCode: number; headers: Record<string, unknown>; body: string }): Promise<LightMyRequestResponse> {
  assert.equal(res.statusCode, 303, res.body.slice(0, 1500))
  const page = await agent.get(String(res.headers.location))
  assert.equal(page.statusCode, 200, page.body.slice(0, 800))
  return page
}

/**
 * The fields of the change form posting to `action` on a page, hidden ones included, to resend it exactly; fails
 * the test unless the form carries its CSRF token and its one-time key.
 */
export function formFields(body: string, action: string): Record<string, string> & { _csrf: string; idempotency_key: string } {
  const form = [...body.matchAll(/<form method="post" action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)].find((m) => m[1] === action)
  assert.ok(form, `a form posting to ${action}`)
  const fields: Record<string, string> = {}
  for (const m of form[2].matchAll(/<input [^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) fields[m[1]] = m[2]
  assert.ok(fields._csrf && fields.idempotency_key, `the form to ${action} carries a CSRF token and a one-time key`)
  return fields as Record<string, string> & { _csrf: string; idempotency_key: string }
}

/** The audit rows of one action (oldest first), in one organization when `organizationId` is given. */
export async function auditRows(t: TestApp, action: string, organizationId?: string): Promise<{ id: string; object_id: string | null }[]> {
  let query = t.deps.db.selectFrom('audit_log').select(['id', 'object_id']).where('action', '=', action)
  if (organizationId) query = query.where('organization_id', '=', organizationId)
  return query.orderBy('id').execute()
}

/** Who and what the object pages' tests share: an organization's owner and viewer, and an issued card. */
export interface ObjectPagesFixture {
  tenant: TestClient
  token: string
  owner: Person
  viewer: Person
  /** A third owner of the organization, who works in production (the environment switch is per person). */
  prodOwner: Person
  cardholder: any
  /** The cardholder's sim_full USD account, funded with 500.00. */
  account: any
  card: any
}

/** A sandbox organization with its people and an issued card on a funded account, made through the API. */
export async function objectPagesFixture(t: TestApp): Promise<ObjectPagesFixture> {
  const tenant = await createTenant(t)
  const token = await tenant.token()
  const owner = await person(t, 'owner', tenant.organizationId)
  const viewer = await person(t, 'viewer', tenant.organizationId)
  const prodOwner = await person(t, 'owner', tenant.organizationId)
  await prodOwner.agent.submit('/console', { environment: 'production', return_to: '/console' }, '/console/environment')
  const cardholder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, cardholder.id)
  const card = await issuedCard(t, token, cardBody(cardholder.id, account.id))
  const credit = await t.api(token, 'POST', `/v1/accounts/${account.id}/credit`, { amount: 50_000 })
  assert.equal(credit.statusCode, 200, credit.body)
  return { tenant, token, owner, viewer, prodOwner, cardholder, account, card }
}
