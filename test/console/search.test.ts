import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import {
  ADDRESS,
  attest,
  cardBody,
  issuedCard,
  makeAccount,
  makeCardholder,
} from '../cards/support.js'
import { main, type Person, withObjectPages } from './support.js'

/**
 * The console's search: an id or the start of one naming one object goes to its page, an ambiguous start lists
 * every match; a cardholder's name (first, last or full, any case) and a card's last 4 digits list every match;
 * nothing of another organization or environment is found.
 */

let t: TestApp, token: string, tenant: TestClient
let owner: Person, prodOwner: Person
let cardholder: any, card: any
let grace: any, graceCard: any
let foreignCard: any

withObjectPages(async (fixture) => {
  ;({ t, token, tenant, owner, prodOwner, cardholder, card } = fixture)
  const made = await t.api(token, 'POST', '/v1/cardholders', {
    type: 'individual',
    first_name: 'Grace',
    last_name: 'Hopper',
    email: `grace.${process.pid}.${Date.now()}@example.com`,
    address: ADDRESS,
    identity_document: { type: 'passport', number: 'P9000222' },
  })
  assert.equal(made.statusCode, 201, made.body)
  grace = made.json()
  await attest(t, token, grace.id, 'approved', true)
  const account = await makeAccount(t, token, tenant.programs.full.id, grace.id)
  graceCard = await issuedCard(t, token, cardBody(grace.id, account.id))
  const other = await createTenant(t)
  const otherToken = await other.token()
  const foreigner = await makeCardholder(t, otherToken)
  const foreignAccount = await makeAccount(t, otherToken, other.programs.full.id, foreigner.id)
  foreignCard = await issuedCard(t, otherToken, cardBody(foreigner.id, foreignAccount.id))
})

const search = (who: Person, q: string) =>
  who.agent.get(`/console/search?q=${encodeURIComponent(q)}`)

function commonPrefix(a: string, b: string): string {
  let i = 0
  while (i < a.length && a[i] === b[i]) i++
  return a.slice(0, i)
}

describe('search by id', () => {
  test('a unique start of an id goes to its page; an ambiguous one lists every match', async () => {
    const shared = commonPrefix(card.id, graceCard.id)
    assert.ok(shared.startsWith('card_'))
    const unique = card.id.slice(0, shared.length + 1)
    const one = await search(owner, unique)
    assert.equal(one.statusCode, 303, one.body.slice(0, 300))
    assert.equal(one.headers.location, `/console/cards/${card.id}`)
    const many = await search(owner, shared)
    assert.equal(many.statusCode, 200)
    const body = main(many.body)
    for (const id of [card.id, graceCard.id])
      assert.ok(body.includes(`href="/console/cards/${id}"`), id)
    assert.match(body, /Card/)
    assert.ok(!body.includes(foreignCard.id), "another organization's card is not listed")
    // Each kind with a prefix read finds its own.
    for (const id of [cardholder.id, grace.id, card.account_id]) {
      const res = await search(owner, id.slice(0, -3))
      assert.ok(res.statusCode === 303 || main(res.body).includes(id), `${id}: ${res.statusCode}`)
    }
    // An authorization's and an event's id, less their last characters, find them too.
    const auth = await t.api(token, 'POST', '/v1/simulate/authorizations', {
      card_id: card.id,
      amount: 1_250,
      currency: 'USD',
      merchant: { name: 'Corner Cafe', mcc: '5814', country: 'USA' },
    })
    assert.ok(auth.statusCode < 300, auth.body)
    const event = (await t.api(token, 'GET', '/v1/events?limit=1')).json().data[0]
    for (const id of [auth.json().id, event.id]) {
      const res = await search(owner, id.slice(0, -2))
      assert.ok(
        res.statusCode === 303
          ? String(res.headers.location).endsWith(`/${id}`)
          : main(res.body).includes(id),
        `${id}: ${res.statusCode}`,
      )
    }
    // The sandbox's card is not found from production, nor a start of another organization's id.
    assert.equal((await search(prodOwner, card.id)).statusCode, 404)
    assert.equal((await search(owner, foreignCard.id.slice(0, -2))).statusCode, 404)
  })
})

describe('search by name and last4', () => {
  test("a cardholder's first, last or full name, in any case, lists them", async () => {
    for (const q of ['grace', 'HOPPER', 'Grace  Hopper']) {
      const res = await search(owner, q)
      assert.equal(res.statusCode, 200, q)
      const body = main(res.body)
      assert.ok(body.includes(`href="/console/cardholders/${grace.id}"`), q)
      assert.ok(!body.includes(cardholder.id), `${q}: Ada is not listed`)
      assert.match(body, /Grace Hopper/)
    }
    const ada = main((await search(owner, 'ada lovelace')).body)
    assert.ok(ada.includes(`href="/console/cardholders/${cardholder.id}"`))
    assert.equal((await search(owner, 'Hop')).statusCode, 404, 'a part of a name is not a name')
  })

  test("a card's last 4 digits list every card of the organization ending so", async () => {
    assert.match(card.last4, /^\d{4}$/)
    const res = await search(owner, card.last4)
    assert.equal(res.statusCode, 200)
    const body = main(res.body)
    assert.ok(body.includes(`href="/console/cards/${card.id}"`))
    assert.ok(body.includes(`•••• ${card.last4}`))
    assert.ok(!body.includes(foreignCard.id))
    const none = String((Number(card.last4) + 1) % 10_000).padStart(4, '0')
    if (none !== graceCard.last4) assert.equal((await search(owner, none)).statusCode, 404)
  })
})
