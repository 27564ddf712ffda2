import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { TestApp } from '../helpers/app.js'
import { type Person, withObjectPages } from './support.js'

/**
 * A viewer is shown no control that changes anything: walking the console from home through every link (the
 * navigation, the lists, the object pages, their "new" and detail pages), no page offers a form sent by POST
 * but the person's own session and account (signing out, the environment switch, their password and two-step
 * verification); a form's address itself shows a viewer no form.
 */

let t: TestApp, token: string
let viewer: Person
let card: any

withObjectPages(async (fixture) => {
  ;({ t, token, viewer, card } = fixture)
  // An authorization and its transaction, so that their pages are walked too.
  const auth = await t.api(token, 'POST', '/v1/simulate/authorizations', {
    card_id: card.id,
    amount: 1_250,
    currency: 'USD',
    merchant: { name: 'Corner Cafe', mcc: '5814', country: 'USA' },
  })
  assert.ok(auth.statusCode < 300, auth.body)
})

/** What a viewer may send: their own session's sign-out and environment, and their own account's password
 * and two-step verification (the account page). */
const OWN = new Set([
  '/console/sign-out',
  '/console/environment',
  '/console/account/password',
  '/console/account/two-step',
])
const SKIP = /\/download$|\/sign-out$|^\/console\/docs/

function links(body: string): string[] {
  return [...body.matchAll(/href="(\/console[^"#]*)"/g)].map((m) => m[1].replace(/&amp;/g, '&'))
}

describe('a viewer', () => {
  test('is shown no form that changes anything on any page reached from home', async () => {
    const seen = new Set<string>()
    const queue = ['/console']
    const offending: string[] = []
    while (queue.length > 0 && seen.size < 160) {
      const url = queue.shift()!
      if (seen.has(url)) continue
      seen.add(url)
      const res = await viewer.agent.get(url)
      if (res.statusCode !== 200) continue
      for (const form of res.body.matchAll(/<form\b[^>]*>/g)) {
        const tag = form[0]
        if (!/method="post"/i.test(tag)) continue
        const action = /action="([^"]*)"/.exec(tag)?.[1] ?? url
        if (!OWN.has(action)) offending.push(`${url}: ${tag}`)
      }
      for (const link of links(res.body)) {
        const path = link.split('?')[0]
        if (!SKIP.test(path) && !seen.has(link) && !link.includes('after=')) queue.push(link)
      }
    }
    assert.ok(seen.size > 20, `walked ${seen.size} pages`)
    assert.ok(
      [...seen].some((u) => u.startsWith(`/console/cards/${card.id}`)),
      'the card page was walked',
    )
    assert.deepEqual(offending, [])
    // The addresses of forms, typed by hand, show a viewer no form either.
    for (const url of [
      '/console/developers/api-clients/new',
      '/console/developers/webhooks',
      '/console/esim/orders/new',
      `/console/cards/${card.id}/close`,
      '/console/reports',
    ]) {
      const res = await viewer.agent.get(url)
      assert.ok([200, 303].includes(res.statusCode), `${url}: ${res.statusCode}`)
      assert.doesNotMatch(res.body.slice(res.body.indexOf('<main')), /method="post"/i, url)
    }
  })
})
