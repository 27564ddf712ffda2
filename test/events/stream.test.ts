import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { openDatabase } from '../../src/db/client.js'
import { withTx } from '../../src/db/tx.js'
import { emit } from '../../src/modules/events/index.js'
import {
  createTenant,
  listenOnPort,
  startTestApp,
  type TestApp,
  type TestClient,
} from '../helpers/app.js'
import { emitEvent } from '../webhooks/helpers.js'
import { events, openStream as open, type Opened } from './sse-client.js'

// GET /v1/events/stream on a real port, read as a client reads it (fetch, text/event-stream).

describe('GET /v1/events/stream', () => {
  let t: TestApp
  let baseUrl: string
  let a: TestClient
  let token: string
  const streams: Opened[] = []
  const openStream = async (
    ...args: Parameters<typeof open> extends [string, ...infer R] ? R : never
  ) => {
    const s = await open(baseUrl, ...args)
    streams.push(s)
    return s
  }

  before(async () => {
    t = await startTestApp({
      env: {
        EVENT_STREAM_POLL_MS: '50',
        EVENT_STREAM_HEARTBEAT_MS: '300',
        EVENT_STREAM_LIFETIME_MS: '60000',
        EVENT_STREAM_MAX_PER_ENVIRONMENT: '3',
      },
    })
    baseUrl = await listenOnPort(t)
    a = await createTenant(t)
    token = await a.token()
  })
  after(async () => {
    for (const s of streams) s.close()
    await t.close()
  })

  test('events committed after the stream opens arrive in order, each exactly as GET /v1/events/{id} answers it; nothing of another organization or environment', async () => {
    const before = await emitEvent(t, a, 'cardholder.created', {
      id: 'chd_before',
      object: 'cardholder',
    })
    const s = await openStream(token)
    assert.equal(s.status, 200)
    assert.match(s.headers.get('content-type')!, /^text\/event-stream/)
    const other = await createTenant(t)
    const live = await createTenant(t, {
      organizationId: a.organizationId,
      environment: 'production',
    })
    await emitEvent(t, other, 'card.created', { id: 'card_other', object: 'card' })
    await emitEvent(t, live, 'card.created', { id: 'card_live', object: 'card' })
    const first = await emitEvent(t, a, 'card.created', { id: 'card_1', object: 'card' })
    const second = await emitEvent(t, a, 'account.credited', { id: 'acct_1', object: 'account' })
    await s.waitFor((m) => events(m).length >= 2)
    await new Promise((r) => setTimeout(r, 200))
    const got = events(s.messages)
    assert.deepEqual(
      got.map((m) => [m.id, m.event]),
      [
        [first, 'card.created'],
        [second, 'account.credited'],
      ],
    )
    assert.ok(!got.some((m) => m.id === before), 'an event from before the stream opened was sent')
    const rest = (await t.api(token, 'GET', `/v1/events/${first}`)).json()
    assert.deepEqual(JSON.parse(got[0].data!), rest)
    s.close()
  })

  test('types= keeps only the forms asked for (a prefix wildcard and an exact type)', async () => {
    const s = await openStream(token, '?types=card.*,account.credited')
    await s.waitFor((m) => m.length >= 1)
    await emitEvent(t, a, 'cardholder.created')
    const card = await emitEvent(t, a, 'card.frozen')
    await emitEvent(t, a, 'account.debited')
    const credited = await emitEvent(t, a, 'account.credited')
    await s.waitFor((m) => events(m).length >= 2)
    await new Promise((r) => setTimeout(r, 200))
    assert.deepEqual(
      events(s.messages).map((m) => m.id),
      [card, credited],
    )
    s.close()
  })

  test('Last-Event-ID resumes after that event: every later event comes first, oldest first (also as last_event_id)', async () => {
    const ids = [
      await emitEvent(t, a, 'card.created'),
      await emitEvent(t, a, 'card.issued'),
      await emitEvent(t, a, 'card.activated'),
    ]
    await new Promise((r) => setTimeout(r, 100))
    const byHeader = await openStream(token, '', { 'last-event-id': ids[0] })
    assert.equal(byHeader.status, 200)
    await byHeader.waitFor((m) => events(m).length >= 2)
    assert.deepEqual(
      events(byHeader.messages)
        .slice(0, 2)
        .map((m) => m.id),
      ids.slice(1),
    )
    const byQuery = await openStream(token, `?last_event_id=${ids[1]}`)
    await byQuery.waitFor((m) => events(m).length >= 1)
    assert.equal(events(byQuery.messages)[0].id, ids[2])
    byHeader.close()
    byQuery.close()
  })

  test('the stream states its position before any event: resuming from it misses nothing made while disconnected', async () => {
    await new Promise((r) => setTimeout(r, 100))
    const s = await openStream(token)
    await s.waitFor((m) => m.some((x) => x.id))
    const position = s.messages.find((x) => x.id)!.id!
    assert.equal(s.messages.find((x) => x.id)!.data, undefined, 'the position is not an event')
    s.close()
    const missed = await emitEvent(t, a, 'card.created')
    const again = await openStream(token, '', { 'last-event-id': position })
    await again.waitFor((m) => events(m).length >= 1)
    assert.equal(events(again.messages)[0].id, missed)
    again.close()
  })

  test('an idle stream sends heartbeat comments', async () => {
    await new Promise((r) => setTimeout(r, 100))
    const s = await openStream(token, '?types=dispute.created')
    assert.equal(s.status, 200)
    await s.waitFor((m) => m.some((x) => x.comment?.startsWith('heartbeat')), 3000)
    s.close()
  })

  test('refusals: an unknown type or a malformed Last-Event-ID answer 400 invalid_parameter; no token 401', async () => {
    const badType = await openStream(token, '?types=card.*,cardz.*')
    assert.equal(badType.status, 400)
    assert.equal(badType.body.error.code, 'invalid_parameter')
    assert.equal(badType.body.error.param, 'types')
    const badId = await openStream(token, '', { 'last-event-id': 'nope' })
    assert.equal(badId.status, 400)
    assert.equal(badId.body.error.param, 'Last-Event-ID')
    const anonymous = await fetch(`${baseUrl}/v1/events/stream`)
    assert.equal(anonymous.status, 401)
  })

  test('connections are bounded per environment: one more answers 429 rate_limited with Retry-After, and a closed one frees its slot', async () => {
    for (const s of streams) s.close()
    await new Promise((r) => setTimeout(r, 200))
    const held = [await openStream(token), await openStream(token), await openStream(token)]
    assert.deepEqual(
      held.map((s) => s.status),
      [200, 200, 200],
    )
    const refused = await openStream(token)
    assert.equal(refused.status, 429)
    assert.equal(refused.body.error.code, 'rate_limited')
    assert.ok(Number(refused.headers.get('retry-after')) > 0)
    held[0].close()
    await new Promise((r) => setTimeout(r, 200))
    const again = await openStream(token)
    assert.equal(again.status, 200)
    for (const s of [...held, again]) s.close()
  })

  test('an event written through another connection pool (another node on the same PostgreSQL) reaches the stream', {
    skip: !process.env.DATABASE_URL && 'PostgreSQL only: PGlite belongs to one process',
  }, async () => {
    await new Promise((r) => setTimeout(r, 200))
    const s = await openStream(token)
    await s.waitFor((m) => m.length >= 1)
    const other = await openDatabase({ databaseUrl: t.deps.config.databaseUrl, dataDir: '' })
    try {
      const id = await withTx(other.db, (trx) =>
        emit(
          trx,
          { organizationId: a.organizationId, environment: 'sandbox' },
          'card.created',
          { id: 'card_node2', object: 'card' },
          t.clock.now(),
        ),
      )
      await s.waitFor((m) => events(m).some((x) => x.id === id))
    } finally {
      await other.close()
      s.close()
    }
  })
})
