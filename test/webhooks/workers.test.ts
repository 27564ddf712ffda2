import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import type { AppDeps } from '../../src/app-deps.js'
import { openDatabase, type DbHandle } from '../../src/db/client.js'
import { withTx } from '../../src/db/tx.js'
import { enqueue, type JobHandler } from '../../src/jobs/queue.js'
import type { JobRegistry } from '../../src/jobs/registry.js'
import type { JobType } from '../../src/jobs/types.js'
import { JobRunner } from '../../src/jobs/runner.js'
import { ensureSchedules } from '../../src/jobs/schedules.js'
import { claimDelivery } from '../../src/modules/webhooks/delivery-repo.js'
import { buildServices } from '../../src/runtime.js'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { createEndpoint, emitEvent, startReceiver, type Receiver } from './helpers.js'

/** The modules' registry plus one handler of the test's own (a job type outside the catalogue). */
function withTestHandler(registry: JobRegistry, type: string, handler: JobHandler): JobRegistry {
  return { ...registry, handlers: new Map([...registry.handlers, [type, handler]]) }
}

describe('job runner', () => {
  let t: TestApp
  let tenant: TestClient
  let receiver: Receiver
  let second: DbHandle | null = null
  /** A second worker's view of the database: its own connection pool on PostgreSQL. */
  let otherDeps: AppDeps

  before(async () => {
    t = await startTestApp()
    tenant = await createTenant(t)
    receiver = await startReceiver()
    await createEndpoint(t, await tenant.token(), receiver.url, ['*'])
    if (t.deps.config.databaseUrl) {
      second = await openDatabase({
        databaseUrl: t.deps.config.databaseUrl,
        dataDir: null,
        poolSize: 10,
      })
      otherDeps = buildServices({ ...t.deps, db: second.db })
    } else {
      otherDeps = t.deps
    }
  })
  after(async () => {
    await receiver.close()
    await second?.close()
    await t.close()
  })

  test('two workers on one database deliver each attempt exactly once between them', async () => {
    receiver.received.length = 0
    const ids: string[] = []
    for (let i = 0; i < 40; i++) {
      await withTx(t.deps.db, async (trx) => {
        const { emit } = await import('../../src/modules/events/emit.js')
        for (let j = 0; j < 5; j++)
          ids.push(
            await emit(
              trx,
              { organizationId: tenant.organizationId, environment: 'sandbox' },
              'card.created',
              { id: `card_${i}_${j}` },
              t.clock.now(),
            ),
          )
      })
    }
    const a = new JobRunner(t.deps, t.jobs, { batchSize: 7, concurrency: 16, idleMs: 20 })
    const b = new JobRunner(otherDeps, t.jobs, { batchSize: 7, concurrency: 16, idleMs: 20 })
    a.start()
    b.start()
    try {
      await receiver.waitFor(ids.length, 30_000)
      await new Promise((r) => setTimeout(r, 200))
    } finally {
      await Promise.all([a.stop(), b.stop()])
    }
    const got = receiver.received.map((r) => r.headers['svc-event-id'] as string)
    assert.equal(got.length, ids.length, 'no event was delivered twice')
    assert.deepEqual(new Set(got), new Set(ids))
    assert.ok(receiver.received.every((r) => r.headers['svc-delivery-attempt'] === '1'))
    const { rows } = await sql<{
      n: number
    }>`SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE event_id IN (${sql.join(ids)})`.execute(
      t.deps.db,
    )
    assert.equal(rows[0].n, ids.length)
    const left = await sql<{
      n: number
    }>`SELECT count(*)::int AS n FROM jobs WHERE type = 'webhook.deliver'`.execute(t.deps.db)
    assert.equal(left.rows[0].n, 0, 'finished jobs are removed')
  })

  test('a worker killed mid-delivery loses nothing: the job runs again after its lease', async () => {
    receiver.received.length = 0
    const eventId = await emitEvent(t, tenant, 'card.frozen')
    const doomed = new JobRunner(t.deps, t.jobs)
    const [job] = await doomed.claim(10)
    assert.equal(job.type, 'webhook.deliver')
    // The doomed worker had taken the attempt and was sending when it died.
    const now = t.clock.now()
    assert.ok(
      await claimDelivery(
        t.deps.db,
        eventId,
        (job.payload as any).endpoint_id,
        now,
        new Date(now.getTime() + 60_000),
      ),
    )

    const survivor = new JobRunner(otherDeps, t.jobs)
    assert.equal(await survivor.drain(), 0, 'a leased job is not taken while its lease holds')
    t.clock.advance(61_000)
    assert.equal(await survivor.drain(), 1)
    assert.deepEqual(
      receiver.received.map((r) => [r.headers['svc-event-id'], r.headers['svc-delivery-attempt']]),
      [[eventId, '2']],
    )
  })

  test('a job whose handler throws is retried with backoff until it succeeds', async () => {
    let calls = 0
    const jobs = withTestHandler(t.jobs, 'test.flaky', async () => {
      calls++
      if (calls === 1) throw new Error('transient')
    })
    const id = await withTx(t.deps.db, (trx) =>
      enqueue(trx, { type: 'test.flaky' as JobType, payload: { n: 1 } }),
    )
    const runner = new JobRunner(t.deps, jobs)
    await runner.drain()
    assert.equal(calls, 1)
    const row = await t.deps.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
    assert.equal(row.state, 'queued')
    assert.equal(row.last_error, 'transient')
    assert.equal(row.locked_by, null)
    t.clock.advance(2_000)
    await runner.drain()
    assert.equal(calls, 2)
    assert.equal(
      await t.deps.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst(),
      undefined,
    )
  })

  test('a job enqueued in a rolled-back transaction never runs', async () => {
    let calls = 0
    const jobs = withTestHandler(t.jobs, 'test.rolled_back', async () => {
      calls++
    })
    await assert.rejects(
      withTx(t.deps.db, async (trx) => {
        await enqueue(trx, { type: 'test.rolled_back' as JobType, payload: {} })
        throw new Error('abort')
      }),
    )
    await new JobRunner(t.deps, jobs).drain()
    assert.equal(calls, 0)
  })

  test('a worker started while the receiver is idle delivers a new event within milliseconds', async () => {
    receiver.received.length = 0
    const runner = new JobRunner(t.deps, t.jobs, { idleMs: 5_000 })
    runner.start()
    try {
      await new Promise((r) => setTimeout(r, 100))
      const started = Date.now()
      await emitEvent(t, tenant, 'card.activated')
      await receiver.waitFor(1, 4_000)
      assert.ok(Date.now() - started < 4_000, 'woken by the commit, not by the 5 s poll')
    } finally {
      await runner.stop()
    }
  })

  test('the housekeeping schedule purges events older than 30 days, with their delivery records', async () => {
    const old = await emitEvent(t, tenant, 'cardholder.updated')
    await new JobRunner(t.deps, t.jobs).drain()
    t.clock.advance(31 * 24 * 3600_000)
    const fresh = await emitEvent(t, tenant, 'cardholder.updated')
    await ensureSchedules(t.deps, t.jobs)
    await new JobRunner(t.deps, t.jobs).drain()
    const left = await t.deps.db
      .selectFrom('events')
      .select('id')
      .where('id', 'in', [old, fresh])
      .execute()
    assert.deepEqual(
      left.map((r) => r.id),
      [fresh],
    )
    const attempts = await t.deps.db
      .selectFrom('webhook_delivery_attempts')
      .select('id')
      .where('event_id', '=', old)
      .execute()
    assert.equal(attempts.length, 0)
    const schedule = await t.deps.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', 'job_schedule_housekeeping')
      .executeTakeFirstOrThrow()
    assert.ok(schedule.run_at.getTime() > t.clock.now().getTime(), 'the schedule re-queued itself')
  })
})
