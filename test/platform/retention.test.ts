import assert from 'node:assert/strict'
import { randomBytes, randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { PURGE_PAUSE_MS, PURGE_REST_FACTOR, purgeInBatches, restAfter } from '../../src/db/purge.js'
import { IDEMPOTENCY_WINDOW_MS, purgeIdempotencyKeys } from '../../src/http/idempotency.js'
import { DEAD_JOB_RETENTION_MS, purgeDeadJobs } from '../../src/jobs/dead-jobs.js'
import { JobRunner } from '../../src/jobs/runner.js'
import { sha256Hex } from '../../src/lib/crypto.js'
import { idHeadAt, type IdPrefix } from '../../src/lib/ids.js'
import { purgeExpiredAttempts } from '../../src/modules/authorizations/endpoint-service.js'
import {
  purgeActivity,
  purgeCounters,
} from '../../src/modules/authorization-rules/counters-repo.js'
import { PIN_KEY_RETENTION_MS, purgeExpiredPinKeys } from '../../src/modules/cards/pin.js'
import {
  purgeExpiredRevealSessions,
  REVEAL_SESSION_RETENTION_MS,
} from '../../src/modules/cards/reveal-sessions.js'
import { EVENT_RETENTION_MS } from '../../src/modules/events/index.js'
import { purgeExpiredEvents } from '../../src/modules/events/service.js'
import { LINK_GRACE_MS, purgeExpiredLinks } from '../../src/modules/h5/service.js'
import { purgeExpiredAccessTokens, purgeExpiredJtis } from '../../src/modules/oauth/purge.js'
import { purgeAll, PURGES } from '../../src/modules/retention.js'
import {
  purgeExpiredInvitations,
  purgeExpiredSessions,
  purgeOldSignInFailures,
} from '../../src/modules/users/purge.js'
import {
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  SIGN_IN_WINDOW_MS,
} from '../../src/modules/users/sessions.js'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { cardBody, makeAccount, makeCardholder } from '../cards/support.js'
import { createEndpoint, emitEvent, startReceiver, type Receiver } from '../webhooks/helpers.js'

const MINUTE = 60_000
const DAY = 24 * 60 * MINUTE
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/** An id whose time part is `at` (newId never goes back in time; rows inserted "in the past" need one). */
function idAt(prefix: IdPrefix, at: Date): string {
  return idHeadAt(prefix, at) + Array.from(randomBytes(16), (b) => ALPHABET[b & 31]).join('')
}

// Every purge removes what is just past its retention and keeps what is just inside it; rows are written with SQL at
// chosen times around the test clock's now (one minute either side of the limit).
describe('retention purges', () => {
  let t: TestApp
  let tenant: TestClient
  let receiver: Receiver
  const ago = (ms: number) => new Date(t.clock.now().getTime() - ms)
  const idsLeft = async (
    table: 'idempotency_keys' | 'jobs' | 'events',
    column: 'key' | 'id',
    ids: string[],
  ) =>
    (
      await t.deps.db
        .selectFrom(table as 'jobs')
        .select(`${column as 'id'} as v`)
        .where(column as 'id', 'in', ids)
        .execute()
    )
      .map((r) => r.v)
      .sort()

  before(async () => {
    t = await startTestApp()
    tenant = await createTenant(t)
    receiver = await startReceiver()
  })
  after(async () => {
    await receiver.close()
    await t.close()
  })

  test('events past 30 days go with their deliveries and attempts; a 29-day-old event keeps its delivery log and can be replayed', async () => {
    const endpoint = await createEndpoint(t, await tenant.token(), receiver.url, [
      'cardholder.updated',
    ])
    const runner = new JobRunner(t.deps, t.jobs, { listen: false })
    // Emitted at chosen moments, so that at the end the first is 30 days + 1 minute old, the second 30 days - 1 minute,
    // the third 29 days; each is delivered at once.
    const old = await emitEvent(t, tenant, 'cardholder.updated')
    await runner.drain()
    t.clock.advance(2 * MINUTE)
    const justInside = await emitEvent(t, tenant, 'cardholder.updated')
    await runner.drain()
    t.clock.advance(DAY - MINUTE)
    const recent = await emitEvent(t, tenant, 'cardholder.updated')
    await runner.drain()
    assert.equal(receiver.received.length, 3)
    t.clock.advance(EVENT_RETENTION_MS - DAY)

    const removed = await purgeExpiredEvents(t.deps)
    assert.ok(removed >= 1, `removed ${removed}`)
    assert.deepEqual(
      await idsLeft('events', 'id', [old, justInside, recent]),
      [justInside, recent].sort(),
    )
    const deliveries = await t.deps.db
      .selectFrom('webhook_deliveries')
      .select(['event_id', 'status'])
      .where('event_id', 'in', [old, justInside, recent])
      .execute()
    assert.deepEqual(
      deliveries.map((d) => d.event_id).sort(),
      [justInside, recent].sort(),
      'the old event took its delivery with it',
    )
    assert.ok(deliveries.every((d) => d.status === 'delivered'))
    const attempts = await t.deps.db
      .selectFrom('webhook_delivery_attempts')
      .select('event_id')
      .where('event_id', 'in', [old, justInside, recent])
      .execute()
    assert.deepEqual(
      attempts.map((a) => a.event_id).sort(),
      [justInside, recent].sort(),
      'and its attempts',
    )

    const token = await tenant.token()
    const log = await t.api(token, 'GET', `/v1/webhook_endpoints/${endpoint.id}/deliveries`)
    assert.equal(log.statusCode, 200, log.body)
    assert.deepEqual(
      log.json().data.map((d: any) => d.event_id),
      [recent, justInside],
      'the delivery log within retention is whole',
    )
    assert.equal((await t.api(token, 'POST', `/v1/events/${old}/replay`, {})).statusCode, 404)

    const replay = await t.api(token, 'POST', `/v1/events/${recent}/replay`, {})
    assert.equal(replay.statusCode, 200, replay.body)
    assert.deepEqual(replay.json().webhook_endpoint_ids, [endpoint.id])
    await runner.drain()
    const resent = receiver.received.at(-1)!
    assert.equal(resent.body.id, recent)
    assert.equal(
      resent.headers['svc-delivery-attempt'],
      '2',
      'the replay continues the kept delivery',
    )
  })

  test('batches: with a batch of 3, ten old rows go in four statements and the purge answers 10', async () => {
    await purgeIdempotencyKeys(t.deps)
    const insertKey = (key: string, createdAt: Date) =>
      sql`INSERT INTO idempotency_keys
      (organization_id, environment, key, method, path, request_hash, response_status, created_at)
      VALUES (${tenant.organizationId}, 'sandbox', ${key}, 'POST', '/v1/things', 'h', 200, ${createdAt})`.execute(
        t.deps.db,
      )
    const oldKeys = Array.from({ length: 10 }, () => randomUUID())
    const youngKeys = [randomUUID(), randomUUID()]
    for (const key of oldKeys) await insertKey(key, ago(IDEMPOTENCY_WINDOW_MS + MINUTE))
    for (const key of youngKeys) await insertKey(key, ago(IDEMPOTENCY_WINDOW_MS - MINUTE))

    const statements: number[] = []
    const removed = await purgeIdempotencyKeys(t.deps, {
      batch: 3,
      pauseMs: 0,
      onBatch: (n) => statements.push(n),
    })
    assert.equal(removed, 10)
    assert.deepEqual(statements, [3, 3, 3, 1])
    assert.deepEqual(
      await idsLeft('idempotency_keys', 'key', [...oldKeys, ...youngKeys]),
      youngKeys.sort(),
    )
    await assert.rejects(
      purgeInBatches(t.deps.db, { table: 'idempotency_keys', where: sql`false`, batch: 0 }),
      RangeError,
    )
  })

  test('between statements a purge rests its pause, or 1.5 times the statement just run when that is longer', () => {
    assert.equal(PURGE_PAUSE_MS, 10)
    assert.equal(PURGE_REST_FACTOR, 1.5)
    assert.equal(restAfter(2), 10) // a quick statement: the pause
    assert.equal(restAfter(50), 75) // a slow one (a backlog on a busy database): the requests beside it go first
    assert.equal(restAfter(50, { restFactor: 0 }), 10)
    assert.equal(restAfter(50, { pauseMs: 0, restFactor: 3 }), 150)
    assert.equal(restAfter(2, { pauseMs: 0 }), 3)
  })

  test('dead jobs go 30 days after they were given up; younger dead jobs and queued jobs stay', async () => {
    const insertJob = (id: string, state: string, updatedAt: Date) =>
      sql`INSERT INTO jobs (id, type, payload, state, run_at, attempts, created_at, updated_at)
      VALUES (${id}, 'card.issue', '{}', ${state}, ${new Date(t.clock.now().getTime() + 365 * DAY)}, 25, ${updatedAt}, ${updatedAt})`.execute(
        t.deps.db,
      )
    const [oldDead, youngDead, oldQueued] = [
      idAt('job', ago(40 * DAY)),
      idAt('job', ago(40 * DAY)),
      idAt('job', ago(40 * DAY)),
    ]
    await insertJob(oldDead, 'dead', ago(DEAD_JOB_RETENTION_MS + MINUTE))
    await insertJob(youngDead, 'dead', ago(DEAD_JOB_RETENTION_MS - MINUTE))
    await insertJob(oldQueued, 'queued', ago(DEAD_JOB_RETENTION_MS + DAY))
    assert.equal(await purgeDeadJobs(t.deps), 1)
    assert.deepEqual(
      await idsLeft('jobs', 'id', [oldDead, youngDead, oldQueued]),
      [youngDead, oldQueued].sort(),
    )
    await t.deps.db.deleteFrom('jobs').where('id', 'in', [youngDead, oldQueued]).execute()
  })

  test('redeemed jtis and access tokens go once expired', async () => {
    const [oldJti, youngJti] = [randomUUID(), randomUUID()]
    await sql`INSERT INTO oauth_jtis (client_id, jti, expires_at) VALUES (${tenant.clientId}, ${oldJti}, ${ago(MINUTE)}), (${tenant.clientId}, ${youngJti}, ${ago(-MINUTE)})`.execute(
      t.deps.db,
    )
    const [oldToken, youngToken] = [sha256Hex(randomUUID()), sha256Hex(randomUUID())]
    for (const [hash, expiresAt] of [
      [oldToken, ago(MINUTE)],
      [youngToken, ago(-MINUTE)],
    ] as const) {
      await sql`INSERT INTO access_tokens (token_hash, client_id, organization_id, environment, scopes, expires_at)
        VALUES (${hash}, ${tenant.clientId}, ${tenant.organizationId}, 'sandbox', '[]', ${expiresAt})`.execute(
        t.deps.db,
      )
    }
    assert.ok((await purgeExpiredJtis(t.deps)) >= 1)
    assert.ok((await purgeExpiredAccessTokens(t.deps)) >= 1)
    const jtis = await t.deps.db
      .selectFrom('oauth_jtis')
      .select('jti')
      .where('jti', 'in', [oldJti, youngJti])
      .execute()
    assert.deepEqual(
      jtis.map((r) => r.jti),
      [youngJti],
    )
    const tokens = await t.deps.db
      .selectFrom('access_tokens')
      .select('token_hash')
      .where('token_hash', 'in', [oldToken, youngToken])
      .execute()
    assert.deepEqual(
      tokens.map((r) => r.token_hash),
      [youngToken],
    )
  })

  test('console sessions past their idle or absolute limit, expired invitations and old sign-in failures go', async () => {
    const userId = idAt('usr', ago(0))
    const now = ago(0)
    await sql`INSERT INTO users (id, email, organization_id, role, created_at, updated_at)
      VALUES (${userId}, ${`retention.${userId}@example.test`}, ${tenant.organizationId}, 'viewer', ${now}, ${now})`.execute(
      t.deps.db,
    )
    const session = (name: string, createdAt: Date, lastSeenAt: Date) =>
      sql`INSERT INTO console_sessions
      (token_hash, user_id, organization_id, stage, csrf_secret, environment, created_at, last_seen_at, address, user_agent)
      VALUES (${name}, ${userId}, ${tenant.organizationId}, 'active', 'c', 'sandbox', ${createdAt}, ${lastSeenAt}, '192.0.2.1', 'test')`.execute(
        t.deps.db,
      )
    await session('idle-old', ago(SESSION_IDLE_MS + MINUTE), ago(SESSION_IDLE_MS + MINUTE))
    await session('idle-young', ago(SESSION_IDLE_MS - MINUTE), ago(SESSION_IDLE_MS - MINUTE))
    await session('absolute-old', ago(SESSION_ABSOLUTE_MS + MINUTE), ago(MINUTE))
    await session('absolute-young', ago(SESSION_ABSOLUTE_MS - MINUTE), ago(MINUTE))
    const invitation = (id: string, expiresAt: Date) =>
      sql`INSERT INTO user_invitations (id, token_hash, user_id, expires_at, created_at)
      VALUES (${id}, ${sha256Hex(id)}, ${userId}, ${expiresAt}, ${ago(3 * DAY)})`.execute(t.deps.db)
    const [oldInvitation, youngInvitation] = [idAt('inv', ago(3 * DAY)), idAt('inv', ago(3 * DAY))]
    await invitation(oldInvitation, ago(MINUTE))
    await invitation(youngInvitation, ago(-MINUTE))
    const failureKey = `retention:${userId}`
    await sql`INSERT INTO console_sign_in_failures (key, at) VALUES (${failureKey}, ${ago(SIGN_IN_WINDOW_MS + MINUTE)}), (${failureKey}, ${ago(SIGN_IN_WINDOW_MS - MINUTE)})`.execute(
      t.deps.db,
    )

    assert.equal(await purgeExpiredSessions(t.deps), 2)
    assert.equal(await purgeExpiredInvitations(t.deps), 1)
    assert.ok((await purgeOldSignInFailures(t.deps)) >= 1)
    const sessions = await t.deps.db
      .selectFrom('console_sessions')
      .select('token_hash')
      .where('user_id', '=', userId)
      .orderBy('token_hash')
      .execute()
    assert.deepEqual(
      sessions.map((s) => s.token_hash),
      ['absolute-young', 'idle-young'],
    )
    const invitations = await t.deps.db
      .selectFrom('user_invitations')
      .select('id')
      .where('user_id', '=', userId)
      .execute()
    assert.deepEqual(
      invitations.map((i) => i.id),
      [youngInvitation],
    )
    const failures = await t.deps.db
      .selectFrom('console_sign_in_failures')
      .select('at')
      .where('key', '=', failureKey)
      .execute()
    assert.equal(failures.length, 1)
    assert.ok(failures[0].at.getTime() > ago(SIGN_IN_WINDOW_MS).getTime())
  })

  test('H5 links answer "expired" for a week after expiry, then are purged and answer "not found"', async () => {
    const link = async (expiresAt: Date) => {
      const token = randomBytes(32).toString('base64url')
      await sql`INSERT INTO esim_h5_links (id, organization_id, environment, cardholder_id, token_hash, allow_purchases, expires_at, created_at)
        VALUES (${idAt('h5', expiresAt)}, ${tenant.organizationId}, 'sandbox', 'chd_x', ${sha256Hex(token)}, false, ${expiresAt}, ${expiresAt})`.execute(
        t.deps.db,
      )
      return token
    }
    const open = async (token: string) =>
      (await t.app.inject({ method: 'GET', url: `/h5/${token}` })).statusCode
    const old = await link(ago(LINK_GRACE_MS + MINUTE))
    const inGrace = await link(ago(LINK_GRACE_MS - MINUTE))
    assert.equal(await open(old), 410, 'not yet purged: expired')
    assert.equal(await purgeExpiredLinks(t.deps), 1)
    assert.equal(await open(old), 404, 'purged: unknown')
    assert.equal(await open(inGrace), 410, 'within the grace: still expired, not unknown')
  })

  test('PIN keys of every card go a day after they expire, spent or not', async () => {
    const token = await tenant.token()
    const cardholder = await makeCardholder(t, token)
    const account = await makeAccount(t, token, tenant.programs.full.id, cardholder.id)
    const created = await t.api(token, 'POST', '/v1/cards', cardBody(cardholder.id, account.id))
    assert.equal(created.statusCode, 201, created.body)
    const card = created.json()
    const key = (expiresAt: Date, spent: boolean) => {
      const id = idAt('pink', expiresAt)
      return sql`INSERT INTO card_pin_keys (id, organization_id, environment, card_id, program_id, private_key_sealed, expires_at, spent_at, created_at)
        VALUES (${id}, ${tenant.organizationId}, 'sandbox', ${card.id}, ${card.program_id}, '', ${expiresAt}, ${spent ? expiresAt : null}, ${expiresAt})`
        .execute(t.deps.db)
        .then(() => id)
    }
    const oldSpent = await key(ago(PIN_KEY_RETENTION_MS + MINUTE), true)
    const oldUnused = await key(ago(PIN_KEY_RETENTION_MS + MINUTE), false)
    const young = await key(ago(PIN_KEY_RETENTION_MS - MINUTE), true)
    assert.equal(await purgeExpiredPinKeys(t.deps), 2)
    const left = await t.deps.db
      .selectFrom('card_pin_keys')
      .select('id')
      .where('id', 'in', [oldSpent, oldUnused, young])
      .execute()
    assert.deepEqual(
      left.map((r) => r.id),
      [young],
    )
  })

  test('card reveal sessions answer "already shown" or "expired" for a day after expiry, then go', async () => {
    const token = await tenant.token()
    const cardholder = await makeCardholder(t, token)
    const account = await makeAccount(t, token, tenant.programs.full.id, cardholder.id)
    const created = await t.api(token, 'POST', '/v1/cards', cardBody(cardholder.id, account.id))
    assert.equal(created.statusCode, 201, created.body)
    const card = created.json()
    const session = async (expiresAt: Date, used: boolean) => {
      const pageToken = randomBytes(32).toString('base64url')
      await sql`INSERT INTO card_reveal_sessions (id, organization_id, environment, card_id, client_id,
          token_hash, target_origin, fields, expires_at, used_at, created_at)
        VALUES (${idAt('crs', expiresAt)}, ${tenant.organizationId}, 'sandbox', ${card.id}, ${tenant.clientId},
          ${sha256Hex(pageToken)}, 'https://app.example.com', '["number"]', ${expiresAt}, ${used ? expiresAt : null},
          ${expiresAt})`.execute(t.deps.db)
      return pageToken
    }
    const open = async (pageToken: string) =>
      (await t.app.inject({ method: 'GET', url: `/card-reveal/${pageToken}` })).statusCode
    const oldUsed = await session(ago(REVEAL_SESSION_RETENTION_MS + MINUTE), true)
    const oldUnused = await session(ago(REVEAL_SESSION_RETENTION_MS + MINUTE), false)
    const young = await session(ago(REVEAL_SESSION_RETENTION_MS - MINUTE), false)
    assert.equal(await open(oldUsed), 410, 'not yet purged: already shown')
    assert.equal(await purgeExpiredRevealSessions(t.deps), 2)
    assert.equal(await open(oldUsed), 404, 'purged: unknown')
    assert.equal(await open(oldUnused), 404)
    assert.equal(await open(young), 410, 'within the day: still expired, not unknown')
  })

  test('authorization endpoint attempts go after 30 days', async () => {
    const attempt = (at: Date) => {
      const id = idAt('aea', at)
      return sql`INSERT INTO authorization_endpoint_attempts (id, organization_id, environment, authorization_id, request_type, url, latency_ms, outcome, created_at)
        VALUES (${id}, ${tenant.organizationId}, 'sandbox', 'auth_x', 'authorization.request', 'https://example.com', 5, 'approved', ${at})`
        .execute(t.deps.db)
        .then(() => id)
    }
    const old = await attempt(ago(EVENT_RETENTION_MS + MINUTE))
    const young = await attempt(ago(EVENT_RETENTION_MS - MINUTE))
    assert.equal(await purgeExpiredAttempts(t.deps), 1)
    const left = await t.deps.db
      .selectFrom('authorization_endpoint_attempts')
      .select('id')
      .where('id', 'in', [old, young])
      .execute()
    assert.deepEqual(
      left.map((r) => r.id),
      [young],
    )
  })

  test("velocity counters go once nothing they hold counts (expires_at passed); a card's activity row an hour and two minutes after its updated_at (kept to the minute)", async () => {
    const counter = (key: string, expiresAt: Date | null) =>
      sql`INSERT INTO authorization_rule_counters (key, rule_id, buckets, expires_at, updated_at)
        VALUES (${key}, 'arl_x', '{}'::jsonb, ${expiresAt}, ${ago(DAY)})`.execute(t.deps.db)
    await counter('arl_x:1:card_old', ago(MINUTE))
    await counter('arl_x:1:card_young', ago(-MINUTE))
    await counter('arl_x:1:card_forever', null)
    assert.equal(await purgeCounters(t.deps.db, t.clock.now()), 1)
    const counters = await t.deps.db
      .selectFrom('authorization_rule_counters')
      .select('key')
      .where('rule_id', '=', 'arl_x')
      .orderBy('key')
      .execute()
    assert.deepEqual(
      counters.map((r) => r.key),
      ['arl_x:1:card_forever', 'arl_x:1:card_young'],
    )
    const activity = (cardId: string, at: Date) =>
      sql`INSERT INTO authorization_rule_activity (card_id, buckets, updated_at) VALUES (${cardId}, '{}'::jsonb, ${at})`.execute(
        t.deps.db,
      )
    await activity('card_activity_old', ago(62 * MINUTE + 1000))
    await activity('card_activity_young', ago(62 * MINUTE - 1000))
    assert.equal(await purgeActivity(t.deps.db, t.clock.now()), 1)
    const rows = await t.deps.db
      .selectFrom('authorization_rule_activity')
      .select('card_id')
      .where('card_id', 'like', 'card_activity_%')
      .execute()
    assert.deepEqual(
      rows.map((r) => r.card_id),
      ['card_activity_young'],
    )
  })

  test("purgeAll runs every purge once and answers each one's count; the schedules run the same purges", async () => {
    await sql`INSERT INTO idempotency_keys (organization_id, environment, key, method, path, request_hash, response_status, created_at)
      VALUES (${tenant.organizationId}, 'sandbox', ${randomUUID()}, 'POST', '/v1/things', 'h', 200, ${ago(IDEMPOTENCY_WINDOW_MS + MINUTE)})`.execute(
      t.deps.db,
    )
    const report = await purgeAll(t.deps, { pauseMs: 0 })
    assert.deepEqual(Object.keys(report).sort(), [
      'access_tokens',
      'authorization_endpoint_attempts',
      'authorization_rule_activity',
      'authorization_rule_counters',
      'card_pin_keys',
      'card_reveal_sessions',
      'console_sessions',
      'console_sign_in_failures',
      'esim_h5_links',
      'events',
      'idempotency_keys',
      'jobs.dead',
      'oauth_jtis',
      'user_invitations',
    ])
    assert.equal(report.idempotency_keys, 1)
    const again = await purgeAll(t.deps)
    assert.ok(
      Object.values(again).every((n) => n === 0),
      JSON.stringify(again),
    )

    // Each purge is applied by one schedule of its module: running every schedule once removes a row past retention.
    assert.equal(PURGES.length, Object.keys(report).length)
    const key = randomUUID()
    await sql`INSERT INTO idempotency_keys (organization_id, environment, key, method, path, request_hash, response_status, created_at)
      VALUES (${tenant.organizationId}, 'sandbox', ${key}, 'POST', '/v1/things', 'h', 200, ${ago(IDEMPOTENCY_WINDOW_MS + MINUTE)})`.execute(
      t.deps.db,
    )
    for (const schedule of t.jobs.schedules.filter((s) => s.type === 'housekeeping'))
      await schedule.run(t.deps)
    assert.deepEqual(await idsLeft('idempotency_keys', 'key', [key]), [])
  })
})
