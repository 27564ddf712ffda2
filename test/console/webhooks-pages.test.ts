import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { JobRunner } from '../../src/jobs/runner.js'
import { createEndpoint, rotateSecret, updateEndpoint } from '../../src/modules/webhooks/index.js'
import { startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { emitEvent, startReceiver, type Receiver } from '../webhooks/helpers.js'
import { type Agent, person, type Person } from './support.js'

/** The console's Webhooks and Events pages: each change goes through the /v1 services, is audited, and the role guard holds. */

const WEBHOOKS = '/console/developers/webhooks'
const EVENTS = '/console/developers/events'

let t: TestApp
let owner: Person
let viewer: Person
let stranger: Person
let orgId: string
let receiver: Receiver
let runner: JobRunner

before(async () => {
  t = await startTestApp()
  orgId = (await t.operator('POST', '/operator/v1/organizations', { name: 'Initech' })).id
  owner = await person(t, 'owner', orgId)
  viewer = await person(t, 'viewer', orgId)
  stranger = await person(t, 'owner')
  receiver = await startReceiver('/hooks')
  runner = new JobRunner(t.deps, t.jobs)
})
after(async () => {
  await receiver.close()
  await t.close()
})

/** The organization's sandbox as the event helpers know a tenant. */
const sandbox = () => ({ organizationId: orgId, environment: 'sandbox' }) as TestClient

async function audits(action: string) {
  return t.deps.db
    .selectFrom('audit_log')
    .selectAll()
    .where('action', '=', action)
    .orderBy('id')
    .execute()
}

function main(body: string): string {
  return body.slice(body.indexOf('<main'))
}

async function follow(agent: Agent, res: LightMyRequestResponse): Promise<LightMyRequestResponse> {
  assert.equal(res.statusCode, 303, res.body.slice(0, 800))
  const page = await agent.get(String(res.headers.location))
  assert.equal(page.statusCode, 200)
  return page
}

/** Adds an endpoint through the create form; answers its id and the page that showed the secret. */
async function addEndpoint(
  agent: Agent,
  events: string[],
  url = receiver.url,
): Promise<{ id: string; page: LightMyRequestResponse }> {
  const page = await agent.submit(WEBHOOKS, {
    url,
    description: 'Orders service',
    enabled_events: events,
  })
  assert.equal(page.statusCode, 201, page.body.slice(0, 800))
  const id = /href="\/console\/developers\/webhooks\/(whe_[0-9A-Za-z]+)"/.exec(page.body)?.[1]
  assert.ok(id, 'the answer links to the endpoint')
  return { id, page }
}

describe('endpoints', () => {
  test('adding an endpoint shows its secret once, never on a later page, and is audited', async () => {
    const before = (await audits('webhook_endpoint.created')).length
    const { id, page } = await addEndpoint(owner.agent, ['cardholder.*', 'card.issued'])
    const secret = /whsec_[0-9A-Za-z_-]+/.exec(page.body)?.[0]
    assert.ok(secret, 'the secret is on the answer page')
    assert.match(page.body, /shown only this once/)

    const rows = await audits('webhook_endpoint.created')
    assert.equal(rows.length, before + 1)
    assert.equal(rows.at(-1)!.object_id, id)
    assert.equal(rows.at(-1)!.organization_id, orgId)

    const detail = await owner.agent.get(`${WEBHOOKS}/${id}`)
    assert.equal(detail.statusCode, 200)
    assert.match(detail.body, /Healthy/)
    assert.ok(
      !detail.body.includes(secret) && !detail.body.includes('whsec_'),
      'no secret on the endpoint page',
    )
    const list = await owner.agent.get(WEBHOOKS)
    assert.ok(main(list.body).includes(receiver.url) && main(list.body).includes('2 event types'))
    assert.ok(!list.body.includes('whsec_'), 'no secret in the list')

    // The /v1 API sees the same endpoint, without its secret.
    const stored = await t.deps.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
    assert.deepEqual(stored.enabled_events, ['cardholder.*', 'card.issued'])
    assert.equal(stored.description, 'Orders service')
  })

  test('a refused form keeps what was typed and shows why (422)', async () => {
    const none = await owner.agent.submit(WEBHOOKS, {
      url: 'https://hooks.example.com/svc',
      enabled_events: [],
    })
    assert.equal(none.statusCode, 422)
    assert.match(main(none.body), /role="alert"[^>]*>Choose at least one event type/)
    assert.match(none.body, /value="https:\/\/hooks\.example\.com\/svc"/)

    const bad = await owner.agent.submit(WEBHOOKS, {
      url: 'ftp://hooks.example.com/svc',
      enabled_events: ['card.*'],
    })
    assert.equal(bad.statusCode, 422)
    assert.match(main(bad.body), /role="alert"/)
    assert.match(bad.body, /value="ftp:\/\/hooks\.example\.com\/svc"/)
    assert.match(bad.body, /value="card\.\*" checked/)
  })

  test('editing the events, disabling and enabling go through the service and are audited', async () => {
    const { id } = await addEndpoint(owner.agent, ['*'])
    const edited = await follow(
      owner.agent,
      await owner.agent.submit(`${WEBHOOKS}/${id}`, {
        url: receiver.url,
        description: '',
        enabled_events: ['card.*', 'cardholder.created'],
      }),
    )
    assert.match(edited.body, /The endpoint is changed/)
    assert.match(edited.body, /value="card\.\*" checked/)
    assert.match(edited.body, /value="cardholder\.created" checked/)
    assert.doesNotMatch(edited.body, /value="\*" checked/)
    assert.equal((await audits('webhook_endpoint.updated')).at(-1)!.object_id, id)

    const disabled = await follow(
      owner.agent,
      await owner.agent.submit(
        `${WEBHOOKS}/${id}`,
        { status: 'disabled' },
        `${WEBHOOKS}/${id}/status`,
      ),
    )
    assert.match(disabled.body, /Disabled by hand/)
    assert.doesNotMatch(
      disabled.body,
      /Send test event<\/button>/,
      'no test event to a disabled endpoint',
    )
    assert.equal((await audits('webhook_endpoint.disabled')).at(-1)!.object_id, id)
    const refused = await owner.agent.submit(`${WEBHOOKS}/${id}`, {}, `${WEBHOOKS}/${id}/test`)
    assert.equal(refused.statusCode, 422)
    assert.match(main(refused.body), /disabled/)

    const enabled = await follow(
      owner.agent,
      await owner.agent.submit(
        `${WEBHOOKS}/${id}`,
        { status: 'enabled' },
        `${WEBHOOKS}/${id}/status`,
      ),
    )
    assert.match(enabled.body, /Healthy/)
    assert.equal((await audits('webhook_endpoint.enabled')).at(-1)!.object_id, id)
  })

  test('rotating shows the new secret once and is audited', async () => {
    const { id, page } = await addEndpoint(owner.agent, ['*'])
    const first = /whsec_[0-9A-Za-z_-]+/.exec(page.body)![0]
    const rotated = await owner.agent.submit(`${WEBHOOKS}/${id}`, {}, `${WEBHOOKS}/${id}/rotate`)
    assert.equal(rotated.statusCode, 200)
    const second = /whsec_[0-9A-Za-z_-]+/.exec(rotated.body)?.[0]
    assert.ok(second && second !== first)
    assert.equal((await audits('webhook_endpoint.secret_rotated')).at(-1)!.object_id, id)
    assert.ok(!(await owner.agent.get(`${WEBHOOKS}/${id}`)).body.includes('whsec_'))
  })

  test('deleting asks on a page of its own first, then deletes the endpoint and is audited', async () => {
    const { id } = await addEndpoint(owner.agent, ['*'])
    const page = await owner.agent.get(`${WEBHOOKS}/${id}`)
    assert.match(page.body, new RegExp(`href="${WEBHOOKS}/${id}/delete"`))
    assert.doesNotMatch(page.body, /Delete endpoint<\/button>/, 'no one-click delete on the page')
    const confirm = await owner.agent.get(`${WEBHOOKS}/${id}/delete`)
    assert.equal(confirm.statusCode, 200)
    assert.match(confirm.body, /This cannot be undone/)
    assert.match(confirm.body, /Delete endpoint<\/button>/)
    assert.ok(
      await t.deps.db.selectFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst(),
    )
    const done = await owner.agent.submit(
      `${WEBHOOKS}/${id}/delete`,
      {},
      `${WEBHOOKS}/${id}/delete`,
    )
    assert.equal(done.statusCode, 303, done.body)
    assert.equal(done.headers.location, WEBHOOKS)
    const gone = await t.deps.db
      .selectFrom('webhook_endpoints')
      .where('id', '=', id)
      .executeTakeFirst()
    assert.equal(gone, undefined)
    assert.equal((await audits('webhook_endpoint.deleted')).at(-1)!.object_id, id)
  })

  test('a viewer reads the pages but every change is refused (403) and nothing changes', async () => {
    const { id } = await addEndpoint(owner.agent, ['*'])
    const list = await viewer.agent.get(WEBHOOKS)
    assert.equal(list.statusCode, 200)
    assert.ok(main(list.body).includes(id))
    assert.doesNotMatch(list.body, /Add endpoint<\/button>/)
    const page = await viewer.agent.get(`${WEBHOOKS}/${id}`)
    assert.equal(page.statusCode, 200)
    assert.doesNotMatch(page.body, /Rotate secret<\/button>/)

    const count = (await t.deps.db.selectFrom('webhook_endpoints').select('id').execute()).length
    for (const [action, fields] of [
      [WEBHOOKS, { url: receiver.url, enabled_events: '*' }],
      [`${WEBHOOKS}/${id}/status`, { status: 'disabled' }],
      [`${WEBHOOKS}/${id}/delete`, {}],
      [`${WEBHOOKS}/${id}/rotate`, {}],
      [`${WEBHOOKS}/${id}/test`, {}],
    ] as const) {
      const res = await viewer.agent.submit(`${WEBHOOKS}/${id}`, fields, action)
      assert.equal(res.statusCode, 403, action)
    }
    assert.equal(
      (await t.deps.db.selectFrom('webhook_endpoints').select('id').execute()).length,
      count,
    )
    const row = await t.deps.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
    assert.equal(row.status, 'enabled')
  })

  test("another organization's endpoint is a 404 page, for reading and for changing", async () => {
    const { id } = await addEndpoint(owner.agent, ['*'])
    assert.equal((await stranger.agent.get(`${WEBHOOKS}/${id}`)).statusCode, 404)
    const res = await stranger.agent.submit(
      WEBHOOKS,
      { status: 'disabled' },
      `${WEBHOOKS}/${id}/status`,
    )
    assert.equal(res.statusCode, 404)
    assert.equal(
      (
        await t.deps.db
          .selectFrom('webhook_endpoints')
          .select('status')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).status,
      'enabled',
    )
  })
})

describe('the audit row and the change commit together', () => {
  test("when the work added to the service's transaction fails, the endpoint is neither created, changed nor rotated", async () => {
    const caller = {
      requestId: 'req_test',
      organizationId: orgId,
      environment: 'sandbox' as const,
      clientId: 'console:test',
      scopes: new Set<string>(),
    }
    const fail = async () => {
      throw new Error('audit row refused')
    }
    const count = async () =>
      (
        await t.deps.db
          .selectFrom('webhook_endpoints')
          .select('id')
          .where('organization_id', '=', orgId)
          .execute()
      ).length
    const before = await count()
    await assert.rejects(
      createEndpoint(t.deps, caller, { url: receiver.url, enabled_events: ['*'] }, fail),
      /audit row refused/,
    )
    assert.equal(await count(), before)

    const { id } = await addEndpoint(owner.agent, ['*'])
    const stored = () =>
      t.deps.db
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow()
    const original = await stored()
    await assert.rejects(
      updateEndpoint(t.deps, caller, id, { status: 'disabled', enabled_events: ['card.*'] }, fail),
      /audit row refused/,
    )
    await assert.rejects(rotateSecret(t.deps, caller, id, fail), /audit row refused/)
    const after = await stored()
    assert.equal(after.status, 'enabled')
    assert.deepEqual(after.enabled_events, ['*'])
    assert.equal(after.secret_sealed, original.secret_sealed)
  })
})

describe('deliveries, test events and replays', () => {
  test('a test event is delivered and its attempt shown; replaying it from the log sends it again with the next attempt number', async () => {
    receiver.received.length = 0
    const { id } = await addEndpoint(owner.agent, ['account.*'])
    const sent = await follow(
      owner.agent,
      await owner.agent.submit(`${WEBHOOKS}/${id}`, {}, `${WEBHOOKS}/${id}/test`),
    )
    assert.match(sent.body, /Test event evt_\w+ is queued/)
    assert.equal((await audits('webhook_endpoint.test_sent')).at(-1)!.object_id, id)
    await runner.drain()
    const [first] = await receiver.waitFor(1)
    assert.equal(first.headers['svc-delivery-attempt'], '1')
    const eventId = first.body.id as string

    const log = await owner.agent.get(`${WEBHOOKS}/${id}`)
    assert.match(main(log.body), /webhook_endpoint\.test/)
    assert.match(
      main(log.body),
      /Attempt 1: <time[^>]*>[^<]+<\/time>, <strong>HTTP 200<\/strong>, <span class="duration">\d+ ms<\/span>/,
    )

    const replayed = await owner.agent.submit(
      `${WEBHOOKS}/${id}`,
      { webhook_endpoint_id: id, return_to: `${WEBHOOKS}/${id}` },
      `${EVENTS}/${eventId}/replay`,
    )
    assert.equal(replayed.statusCode, 303)
    assert.equal(replayed.headers.location, `${WEBHOOKS}/${id}`)
    assert.equal((await audits('event.replayed')).at(-1)!.object_id, eventId)
    await runner.drain()
    const all = await receiver.waitFor(2)
    assert.equal(all[1].headers['svc-delivery-attempt'], '2')
    assert.equal(all[1].body.id, eventId)
    assert.match(main((await owner.agent.get(`${WEBHOOKS}/${id}`)).body), /Attempt 2: /)
  })

  test('replaying everything since a time queues the events the endpoint takes; a time that is not one is refused', async () => {
    receiver.received.length = 0
    const { id } = await addEndpoint(owner.agent, ['cardholder.*'])
    t.clock.advance(1000)
    await emitEvent(t, sandbox(), 'cardholder.created', { id: 'ich_1', object: 'cardholder' })
    await emitEvent(t, sandbox(), 'account.created', { id: 'acc_1', object: 'account' })
    await runner.drain()
    await receiver.waitFor(1)
    receiver.received.length = 0

    const since = new Date(t.clock.now().getTime() - 60 * 60 * 1000).toISOString().slice(0, 16)
    const done = await follow(
      owner.agent,
      await owner.agent.submit(`${WEBHOOKS}/${id}`, { since }, `${WEBHOOKS}/${id}/replay`),
    )
    assert.match(done.body, /1 event is queued for this endpoint again/)
    assert.equal((await audits('webhook_endpoint.replayed')).at(-1)!.object_id, id)
    await runner.drain()
    const [again] = await receiver.waitFor(1)
    assert.equal(again.body.type, 'cardholder.created')
    assert.equal(again.headers['svc-delivery-attempt'], '2')

    const bad = await owner.agent.submit(
      `${WEBHOOKS}/${id}`,
      { since: 'yesterday' },
      `${WEBHOOKS}/${id}/replay`,
    )
    assert.equal(bad.statusCode, 422)
    assert.match(bad.body, /value="yesterday"/)
    const old = await owner.agent.submit(
      `${WEBHOOKS}/${id}`,
      { since: '2020-01-01T00:00' },
      `${WEBHOOKS}/${id}/replay`,
    )
    assert.equal(old.statusCode, 422)
    assert.match(main(old.body), /30-day event retention/)
  })

  test('the delivery log is newest first, 20 a page, with a cursor link to the next page', async () => {
    const { id } = await addEndpoint(owner.agent, ['account.*'])
    const emitted: string[] = []
    for (let i = 0; i < 22; i++) {
      t.clock.advance(10)
      emitted.push(
        await emitEvent(t, sandbox(), 'account.credited', { id: `acc_${i}`, object: 'account' }),
      )
    }
    const first = await owner.agent.get(`${WEBHOOKS}/${id}`)
    const ids = (body: string) =>
      [...main(body).matchAll(/<code>(evt_\w+)<\/code>/g)].map((m) => m[1])
    assert.deepEqual(ids(first.body), emitted.slice(2).reverse(), 'the 20 newest, newest first')
    assert.match(first.body, /Pending/, 'not sent yet')
    const next = /href="([^"]*\?after=[^"]+)">Next page/.exec(first.body)?.[1]
    assert.ok(next, 'a link to the next page')
    const second = await owner.agent.get(next.replace(/&amp;/g, '&'))
    assert.equal(second.statusCode, 200)
    assert.deepEqual(ids(second.body), emitted.slice(0, 2).reverse())
    assert.match(second.body, /First page/)
    // Sent now, so later tests' receivers see only their own deliveries.
    await runner.drain()
    receiver.received.length = 0
  })
})

describe('events', () => {
  test('the list filters by type; an event page shows its JSON, its deliveries and replays it to every subscribed endpoint', async () => {
    receiver.received.length = 0
    const { id } = await addEndpoint(owner.agent, ['esim.*'])
    t.clock.advance(1000)
    const eventId = await emitEvent(t, sandbox(), 'esim.low_data', { id: 'esim_1', object: 'esim' })
    await emitEvent(t, sandbox(), 'dispute.created', { id: 'dp_1', object: 'dispute' })
    await runner.drain()
    await receiver.waitFor(1)

    const all = await owner.agent.get(EVENTS)
    assert.equal(all.statusCode, 200)
    assert.ok(main(all.body).includes(eventId) && main(all.body).includes('dispute.created'))
    const filtered = await owner.agent.get(`${EVENTS}?type=esim.*`)
    assert.ok(main(filtered.body).includes(eventId))
    assert.ok(
      main(all.body).includes('>dispute.created</a>') &&
        !main(filtered.body).includes('>dispute.created</a>'),
      'other types are filtered out',
    )

    const page = await viewer.agent.get(`${EVENTS}/${eventId}`)
    assert.equal(page.statusCode, 200)
    assert.match(page.body, /<pre class="json">\{\n {2}&quot;id&quot;: &quot;evt_/)
    assert.match(main(page.body), new RegExp(`href="${WEBHOOKS}/${id}"`))
    assert.match(main(page.body), /HTTP 200/)
    assert.doesNotMatch(page.body, /Replay event<\/button>/, 'a viewer gets no replay form')

    receiver.received.length = 0
    const done = await follow(
      owner.agent,
      await owner.agent.submit(
        `${EVENTS}/${eventId}`,
        { webhook_endpoint_id: '' },
        `${EVENTS}/${eventId}/replay`,
      ),
    )
    // Every enabled endpoint that takes esim.low_data: this one and those of the earlier tests subscribed to `*`.
    const queued = Number(/queued again for (\d+) endpoints?/.exec(done.body)?.[1])
    assert.ok(
      queued >= 2,
      done.body.slice(done.body.indexOf('<main'), done.body.indexOf('<main') + 600),
    )
    await runner.drain()
    const again = await receiver.waitFor(queued)
    assert.ok(
      again.every((r) => r.body.id === eventId && r.headers['svc-delivery-attempt'] === '2'),
    )

    assert.equal((await stranger.agent.get(`${EVENTS}/${eventId}`)).statusCode, 404)
    const refused = await stranger.agent.submit(EVENTS, {}, `${EVENTS}/${eventId}/replay`)
    assert.equal(refused.statusCode, 404)
    assert.equal(
      (await viewer.agent.submit(`${EVENTS}/${eventId}`, {}, `${EVENTS}/${eventId}/replay`))
        .statusCode,
      403,
    )
  })

  test('two endpoints with one URL are told apart where a replay target is chosen: description and short id', async () => {
    // An organization of its own: the earlier tests used up this one's endpoints.
    const org = (await t.operator('POST', '/operator/v1/organizations', { name: 'Hooli' })).id
    const admin = await person(t, 'owner', org)
    const url = receiver.url
    const ids: string[] = []
    for (const description of ['Ledger mirror', 'Fraud desk']) {
      const page = await admin.agent.submit(WEBHOOKS, { url, description, enabled_events: ['*'] })
      assert.equal(page.statusCode, 201, /class="flash[\s\S]*?<\/div>/.exec(page.body)?.[0])
      ids.push(/href="\/console\/developers\/webhooks\/(whe_[0-9A-Za-z]+)"/.exec(page.body)![1])
    }
    const eventId = await emitEvent(
      t,
      { organizationId: org, environment: 'sandbox' } as TestClient,
      'esim.low_data',
      { id: 'esim_2', object: 'esim' },
    )
    await runner.drain()
    const body = main((await admin.agent.get(`${EVENTS}/${eventId}`)).body)
    const options = [...body.matchAll(/<option value="(whe_[0-9A-Za-z]+)"[^>]*>([^<]*)<\/option>/g)]
    const labels = ids.map((id) => options.find((o) => o[1] === id)?.[2] ?? '')
    const esc = url.replace(/[.?*+()[\]]/g, '\\$&')
    assert.match(labels[0], new RegExp(`^${esc} · Ledger mirror · whe_…${ids[0].slice(-6)}$`))
    assert.match(labels[1], new RegExp(`^${esc} · Fraud desk · whe_…${ids[1].slice(-6)}$`))
    assert.notEqual(ids[0].slice(-6), ids[1].slice(-6))
    // The deliveries and the endpoints list show the description and short id beside the URL too.
    for (const id of ids) assert.ok(body.includes(`<code>whe_…${id.slice(-6)}</code>`), id)
    const list = main((await admin.agent.get(WEBHOOKS)).body)
    assert.ok(list.includes(`Fraud desk · <code>whe_…${ids[1].slice(-6)}</code>`))
  })
})
