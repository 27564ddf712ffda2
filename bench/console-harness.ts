// The console as a browser reaches it, for the benchmarks: cookies kept between requests, forms posted with their
// CSRF token, and an owner signed in through an invitation link.
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import type { BenchServer } from './platform-harness.js'

/** The password every benchmark owner signs in with. */
export const OWNER_PASSWORD = 'violet-harbour-lantern-42'

export class Browser {
  readonly cookies = new Map<string, string>()
  constructor(public baseUrl: string) {}

  private keep(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const eq = pair.indexOf('=')
      const name = pair.slice(0, eq)
      const value = pair.slice(eq + 1)
      if (/Max-Age=0\b/i.test(line) || value === '') this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }

  private cookieHeader(): Record<string, string> {
    return this.cookies.size
      ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') }
      : {}
  }

  async get(path: string): Promise<{ status: number; body: string; ms: number }> {
    const started = performance.now()
    const res = await fetch(this.baseUrl + path, {
      headers: this.cookieHeader(),
      redirect: 'manual',
    })
    const body = await res.text()
    const ms = performance.now() - started
    this.keep(res)
    return { status: res.status, body, ms }
  }

  async submit(path: string, fields: Record<string, string>): Promise<Response> {
    const page = await this.get(path)
    const csrf = /name="_csrf" value="([^"]*)"/.exec(page.body)?.[1]
    if (page.status !== 200 || !csrf)
      throw new Error(`${path}: ${page.status} ${page.body.slice(0, 300)}`)
    const res = await fetch(this.baseUrl + path.split('?')[0], {
      method: 'POST',
      redirect: 'manual',
      headers: { ...this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
    })
    await res.text()
    this.keep(res)
    return res
  }
}

/** A console owner of the organization, invited by the operator, password set through the link: signed in. */
export async function signInOwner(
  server: BenchServer,
  organizationId: string,
): Promise<{ browser: Browser; email: string }> {
  const email = `owner.${randomBytes(3).toString('hex')}@example.test`
  const invitation = await server.operator('POST', '/operator/v1/users/invitations', {
    email,
    role: 'owner',
    organization_id: organizationId,
  })
  const browser = new Browser(server.baseUrl)
  const accepted = await browser.submit(new URL(invitation.url).pathname, {
    password: OWNER_PASSWORD,
    password_confirmation: OWNER_PASSWORD,
  })
  if (accepted.status !== 303) throw new Error(`invitation not accepted: ${accepted.status}`)
  return { browser, email }
}
