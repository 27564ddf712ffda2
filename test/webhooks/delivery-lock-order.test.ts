import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { openDatabase, type DbHandle } from '../../src/db/client.js'
import { withTx } from '../../src/db/tx.js'
import type { Db } from '../../src/db/types.js'
import { emit, queueDeliveries } from '../../src/modules/events/index.js'
import type { AttemptOutcome, DeliveryKey } from '../../src/modules/webhooks/delivery-repo.js'
import { DeliveryCoalescers } from '../../src/modules/webhooks/delivery.js'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { createEndpoint } from './helpers.js'

// Recording delivery outcomes deadlocked (six calls of one group commit failing together): each statement locked
// its deliveries in the order its batch happened to come in, so two statements over the same deliveries in other
// orders (two workers' batches, a claim, a replay) could each hold what the other waited for. Every multi-row
// statement now locks deliveries in key order. Real concurrency needs several connections: PostgreSQL only.
describe('deliveries are locked in key order', {
  skip: !process.env.DATABASE_URL && 'PGlite has one connection: nothing runs concurrently',
}, () => {
  let t: TestApp
  const pools: DbHandle[] = []
  let scope: { organizationId: string; environment: string }
  let keys: DeliveryKey[]

  before(async () => {
    t = await startTestApp()
    const tenant = await createTenant(t)
    const token = await tenant.token()
    scope = { organizationId: tenant.organizationId, environment: 'sandbox' }
    const endpoints: string[] = []
    for (let i = 0; i < 5; i++)
      endpoints.push((await createEndpoint(t, token, `http://127.0.0.1:9/hooks/${i}`, ['*'])).id)
    const events: string[] = []
    await withTx(t.deps.db, async (trx) => {
      for (let i = 0; i < 60; i++)
        events.push(await emit(trx, scope, 'card.created', { id: `card_${i}` }, t.clock.now()))
    })
    keys = events.flatMap((eventId) => endpoints.map((endpointId) => ({ eventId, endpointId })))
    for (let i = 0; i < 3; i++)
      pools.push(
        await openDatabase({ databaseUrl: t.deps.config.databaseUrl!, dataDir: null, poolSize: 4 }),
      )
  })
  after(async () => {
    for (const pool of pools) await pool.close()
    await t.close()
  })

  /** A copy of `items` in a random order. */
  function shuffled<T>(items: readonly T[]): T[] {
    const out = [...items]
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1))
      ;[out[i], out[j]] = [out[j], out[i]]
    }
    return out
  }

  /** A failed first attempt of the delivery, as a worker records it. */
  function failedAttempt(k: DeliveryKey, n: number): AttemptOutcome {
    const at = t.clock.now()
    return {
      attempt: {
        id: `wha_lockorder${n}_${Math.random().toString(36).slice(2, 10)}`,
        event_id: k.eventId,
        endpoint_id: k.endpointId,
        organization_id: scope.organizationId,
        environment: 'sandbox',
        event_type: 'card.created',
        attempt: 0,
        url: 'http://127.0.0.1:9/',
        succeeded: false,
        status_code: 500,
        duration_ms: 3,
        error: 'HTTP 500',
        response_body: null,
        started_at: at,
        created_at: at,
      },
      status: 'pending',
      failures: 1,
      nextAttemptAt: at,
      firstFailedAt: at,
    }
  }

  /** Each call of a batch goes through the group commit, in the batch's order: one statement for all. */
  function recordAll(db: Db, order: DeliveryKey[], n: number): Promise<void[]> {
    const coalescers = new DeliveryCoalescers(db)
    return Promise.all(order.map((k) => coalescers.records.call(failedAttempt(k, n))))
  }

  function claimAll(db: Db, order: DeliveryKey[]): Promise<unknown[]> {
    const coalescers = new DeliveryCoalescers(db)
    const now = t.clock.now()
    return Promise.all(
      order.map((k) =>
        coalescers.claims.call({ ...k, now, leaseUntil: new Date(now.getTime() + 60_000) }),
      ),
    )
  }

  test('two workers recording, a third claiming and a replay over the same 300 deliveries, in random orders: no deadlock', async () => {
    const failures: string[] = []
    for (let round = 0; round < 6; round++) {
      // Every delivery due and at attempt 0, so each statement matches (and locks) all of them.
      await sql`UPDATE webhook_deliveries SET attempts = 0, status = 'pending', next_attempt_at = ${new Date(t.clock.now().getTime() - 1000)}
        WHERE organization_id = ${scope.organizationId}`.execute(t.deps.db)
      const results = await Promise.allSettled([
        recordAll(pools[0].db, shuffled(keys), round * 2),
        recordAll(pools[1].db, shuffled(keys), round * 2 + 1),
        claimAll(pools[2].db, shuffled(keys)),
        withTx(pools[1].db, (trx) => queueDeliveries(trx, scope, shuffled(keys), t.clock.now())),
      ])
      for (const r of results) {
        if (r.status === 'rejected')
          failures.push(
            `round ${round}: ${(r.reason as { code?: string }).code ?? ''} ${String(r.reason)}`,
          )
      }
    }
    assert.deepEqual(failures, [], 'a deadlock (40P01) or another failure')
    const { rows } = await sql<{
      n: number
    }>`SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE id LIKE 'wha_lockorder%'`.execute(
      t.deps.db,
    )
    assert.ok(rows[0].n > 0, 'the recording statements did write attempts')
  })
})
