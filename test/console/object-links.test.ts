import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { TestApp } from '../helpers/app.js'
import { follow, formFields, main, type Person, withObjectPages } from './support.js'

/**
 * On the event and audit pages the objects are links: an event's object, the ids it refers to (its cardholder,
 * account…) and every id in its JSON; an audit row's object.
 */

let t: TestApp, token: string
let owner: Person
let cardholder: any, account: any, card: any

withObjectPages(async (fixture) => {
  ;({ t, token, owner, cardholder, account, card } = fixture)
})

describe('object links', () => {
  test("an event's object, its related ids and the ids in its JSON link to their pages", async () => {
    const events = (await t.api(token, 'GET', '/v1/events?type=card.created')).json().data
    const event = events.find((e: any) => e.data.object.id === card.id)
    assert.ok(event, 'a card.created event of the card')
    const list = main((await owner.agent.get('/console/developers/events')).body)
    assert.ok(list.includes(`<a href="/console/cards/${card.id}"><code>${card.id}</code></a>`))
    const page = await owner.agent.get(`/console/developers/events/${event.id}`)
    assert.equal(page.statusCode, 200)
    const body = main(page.body)
    for (const [href, id] of [
      ['/console/cards', card.id],
      ['/console/cardholders', cardholder.id],
      ['/console/accounts', account.id],
    ])
      assert.ok(body.includes(`<a href="${href}/${id}"><code>${id}</code></a>`), id)
    const json = /<pre class="json">([\s\S]*?)<\/pre>/.exec(body)![1]
    assert.ok(json.includes(`&quot;<a href="/console/cards/${card.id}">${card.id}</a>&quot;`))
    assert.ok(json.includes(`<a href="/console/cardholders/${cardholder.id}">`))
  })

  test("an audit row's object links to its page", async () => {
    const page = await owner.agent.get(`/console/cards/${card.id}`)
    await follow(
      owner.agent,
      await owner.agent.post(
        `/console/cards/${card.id}/freeze`,
        formFields(page.body, `/console/cards/${card.id}/freeze`),
      ),
    )
    const audit = main((await owner.agent.get('/console/audit')).body)
    assert.ok(audit.includes(`<a href="/console/cards/${card.id}"><code>${card.id}</code></a>`))
  })
})
