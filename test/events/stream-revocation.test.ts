import assert from 'node:assert/strict'
import { after, before, describe, test, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { SvcError } from '../../sdk/src/index.js'
import { openDatabase } from '../../src/db/client.js'
import { AUTH_CHANNEL } from '../../src/http/token-cache.js'
import {
  BASE_URL,
  createTenant,
  listenOnPort,
  startTestApp,
  type TestApp,
  type TestClient,
} from '../helpers/app.js'
import { sdkTenant } from '../sdk/support.js'
import { emitEvent } from '../webhooks/helpers.js'
import { events, openStream, type Opened } from './sse-client.js'

// The attack: an open event stream outlived its client's revocation (it went on sending events for up to 15
// minutes). Now a stream ends within 5 s of whatever ends its token's access, and sends nothing committed after the
// revocation; each test measures the time from the revocation's commit to the end of the body a real client reads.

const LIMIT_MS = 5_000

let t: TestApp
let baseUrl: string
const streams: Opened[] = []

before(async () => {
  // The 3-D Secure release on, so a client can hold every scope (one revokes another only when it holds all of its).
  t = await startTestApp({
    env: {
      SVC_RELEASES: 'three_d_secure',
      EVENT_STREAM_POLL_MS: '50',
      EVENT_STREAM_LIFETIME_MS: '600000',
      EVENT_STREAM_HEARTBEAT_MS: '60000',
    },
  })
  baseUrl = await listenOnPort(t)
})
after(async () => {
  for (const s of streams) s.close()
  await t.close()
})

/** A tenant with an open stream that has received one event, so it is known to be live. */
async function liveStream(): Promise<{ tenant: TestClient; token: string; stream: Opened }> {
  const tenant = await createTenant(t)
  const token = await tenant.token()
  const stream = await openStream(baseUrl, token)
  streams.push(stream)
  assert.equal(stream.status, 200)
  const first = await emitEvent(t, tenant, 'card.created', { id: 'card_first', object: 'card' })
  await stream.waitFor((m) => events(m).some((x) => x.id === first))
  return { tenant, token, stream }
}

/**
 * Runs `revoke`, then makes `more` events (5; 0 for an idle stream, which only the once-a-second check ends): its body
 * ends within 5 s (reported), and the stream gets none of them when the revocation was made on this node (another
 * node's reaches this one by NOTIFY, a moment later).
 */
async function assertEndsAfter(
  ctx: TestContext,
  revoke: (tenant: TestClient) => Promise<unknown>,
  { sameNode = true, more = 5 } = {},
): Promise<void> {
  const { tenant, stream } = await liveStream()
  const before = stream.messages.length
  await revoke(tenant)
  const revokedAt = Date.now()
  for (let i = 0; i < more; i++)
    await emitEvent(t, tenant, 'card.frozen', { id: `card_after_${i}`, object: 'card' })
  const { at } = await Promise.race([
    stream.ended,
    new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new Error(`still open ${LIMIT_MS} ms after the revocation`)),
        LIMIT_MS,
      ),
    ),
  ])
  const late = stream.messages.slice(before).filter((m) => m.data)
  if (sameNode) assert.deepEqual(late, [], 'events made after the revocation reached the stream')
  assert.match(stream.messages.at(-1)?.comment ?? '', /access ended/)
  ctx.diagnostic(`the stream ended ${at - revokedAt} ms after the revocation`)
  assert.ok(at - revokedAt < LIMIT_MS, `${at - revokedAt} ms`)
}

describe("an open stream ends with its token's access", () => {
  test('the client is revoked (operator API): the stream ends within 5 s, and no event made after reaches it; reconnecting answers 401', async (ctx) => {
    let token = ''
    await assertEndsAfter(ctx, async (tenant) => {
      token = await tenant.token()
      await t.operator('POST', `/operator/v1/clients/${tenant.clientId}/revoke`)
    })
    const again = await openStream(baseUrl, token)
    assert.equal(again.status, 401)
    assert.equal(again.body.error.code, 'invalid_access_token')
  })

  test('the client is revoked by its organization (POST /v1/oauth_clients/{id}/revoke)', async (ctx) => {
    await assertEndsAfter(ctx, async (tenant) => {
      const admin = await createTenant(t, { organizationId: tenant.organizationId })
      const res = await t.api(
        await admin.token(),
        'POST',
        `/v1/oauth_clients/${tenant.clientId}/revoke`,
      )
      assert.equal(res.statusCode, 200, res.body)
    })
  })

  test("the organization's network policy stops allowing the stream's address", async (ctx) => {
    await assertEndsAfter(ctx, (tenant) =>
      t.operator('PUT', `/operator/v1/organizations/${tenant.organizationId}/network_policy`, {
        environment: 'sandbox',
        ip_allowlist: ['203.0.113.0/24'],
      }),
    )
  })

  test('the token expires (15 minutes after it was issued, whenever the stream opened), on an idle stream too', async (ctx) => {
    await assertEndsAfter(
      ctx,
      async () => {
        t.clock.advance(15 * 60_000 + 1_000)
      },
      { more: 0 },
    )
    await assertEndsAfter(ctx, async () => {
      t.clock.advance(15 * 60_000 + 1_000)
    })
  })

  test('a revocation committed by another node (its own connection pool; only NOTIFY reaches this one) ends the stream within 5 s', {
    skip: !process.env.DATABASE_URL && 'PostgreSQL only: PGlite belongs to one process',
  }, async (ctx) => {
    await assertEndsAfter(
      ctx,
      async (tenant) => {
        const other = await openDatabase({ databaseUrl: t.deps.config.databaseUrl, dataDir: '' })
        try {
          await other.db.transaction().execute(async (trx) => {
            await trx
              .updateTable('oauth_clients')
              .set({ status: 'revoked', revoked_at: new Date() })
              .where('id', '=', tenant.clientId)
              .execute()
            await sql`SELECT pg_notify(${AUTH_CHANNEL}, '')`.execute(trx)
          })
        } finally {
          await other.close()
        }
      },
      { sameNode: false },
    )
  })

  test("the SDK's stream (what svc listen reads) ends with invalid_client instead of reconnecting forever", async () => {
    // The SDK signs for BASE_URL's token endpoint and reaches the service on its real port, on the service's clock.
    const tenant = await sdkTenant(t, BASE_URL)
    const svc = tenant.svc({
      clock: () => t.clock.now().getTime(),
      fetch: (url, init) => fetch(String(url).replace(BASE_URL, baseUrl), init),
    })
    const received: string[] = []
    const iteration = (async () => {
      for await (const event of svc.events.stream()) received.push(event.id)
    })()
    const outcome = iteration.then(
      () => null,
      (err: unknown) => err,
    )
    await new Promise((r) => setTimeout(r, 500))
    const email = `rev.${Date.now()}@example.com`
    const first = (
      await svc.cardholders.create({
        type: 'individual',
        first_name: 'Rev',
        last_name: 'Oked',
        email,
      })
    ).id
    const until = Date.now() + 5_000
    while (!received.length && Date.now() < until) await new Promise((r) => setTimeout(r, 20))
    assert.equal(received.length, 1, `the stream did not deliver ${first}'s event`)
    await t.operator('POST', `/operator/v1/clients/${tenant.clientId}/revoke`)
    const revokedAt = Date.now()
    const err = await Promise.race([
      outcome,
      new Promise((r) => setTimeout(() => r('still open'), 10_000)),
    ])
    assert.ok(err instanceof SvcError, String(err))
    assert.equal(err.code, 'invalid_client')
    assert.ok(Date.now() - revokedAt < 10_000)
  })
})
