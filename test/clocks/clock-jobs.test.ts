import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import type { AppDeps } from '../../src/app-deps.js'
import { withTx } from '../../src/db/tx.js'
import { enqueue } from '../../src/jobs/queue.js'
import type { JobHandler } from '../../src/jobs/queue.js'
import { runDueOnClock } from '../../src/modules/clocks/advance.js'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { runJobs } from '../authorizations/support.js'
import { clockAt } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

const at = (iso: string) => new Date(iso)

/** Jobs of clock `clockId` at the given clock times, of a type the test's handlers answer. */
async function queueOnClock(clockId: string | null, times: string[]): Promise<string[]> {
  return withTx(t.deps.db, async (trx) => {
    const ids: string[] = []
    for (const time of times)
      ids.push(
        await enqueue(trx, {
          type: 'report.generate',
          payload: { time },
          runAt: at(time),
          organizationId: tenant.organizationId,
          environment: 'sandbox',
          clockId,
        }),
      )
    return ids
  })
}

/** The dependencies with `handler` as the only job handler (the clock's advance runs jobs with them). */
function withHandler(handler: JobHandler): AppDeps {
  return { ...t.deps, jobHandlers: new Map([['report.generate', handler]]) }
}

async function jobState(id: string) {
  const { rows } = await sql<{ state: string; run_at: Date }>`
    SELECT state, run_at FROM jobs WHERE id = ${id}`.execute(t.deps.db)
  return rows[0]
}

test('a job of an object under a clock waits for the clock: the runners never take it, even long past due on wall time', async () => {
  const clock = await clockAt(t, token, '2020-01-01T00:00:00Z')
  const [id] = await queueOnClock(clock.id, ['2020-01-02T00:00:00Z'])
  await runJobs(t)
  assert.equal((await jobState(id!))?.state, 'on_clock')
})

test("an advance runs the clock's due jobs once, earliest first, each reading its own due time; later ones wait", async () => {
  const clock = await clockAt(t, token, '2020-01-01T00:00:00Z')
  const other = await clockAt(t, token, '2020-01-01T00:00:00Z')
  const [late, early, , beyond] = await queueOnClock(clock.id, [
    '2020-01-03T00:00:00Z',
    '2020-01-02T00:00:00Z',
    '2020-01-02T12:00:00Z',
    '2020-02-01T00:00:00Z',
  ])
  const [others] = await queueOnClock(other.id, ['2020-01-02T00:00:00Z'])
  const ran: string[] = []
  const deps = withHandler(async (d, job) => {
    ran.push(`${job.payload.time} @ ${d.clock.now().toISOString()}`)
  })
  assert.equal(await runDueOnClock(deps, clock.id, at('2020-01-10T00:00:00Z')), 3)
  assert.deepEqual(ran, [
    '2020-01-02T00:00:00Z @ 2020-01-02T00:00:00.000Z',
    '2020-01-02T12:00:00Z @ 2020-01-02T12:00:00.000Z',
    '2020-01-03T00:00:00Z @ 2020-01-03T00:00:00.000Z',
  ])
  assert.equal(await jobState(early!), undefined)
  assert.equal(await jobState(late!), undefined)
  assert.equal((await jobState(beyond!))?.state, 'on_clock')
  assert.equal((await jobState(others!))?.state, 'on_clock', "another clock's job is untouched")
  // Run again over the same span: nothing runs twice.
  assert.equal(await runDueOnClock(deps, clock.id, at('2020-01-10T00:00:00Z')), 0)
  assert.equal(ran.length, 3)
})

test("a job's 'try again at' puts it back on the clock at that clock time, and the same advance runs it then", async () => {
  const clock = await clockAt(t, token, '2020-01-01T00:00:00Z')
  const [id] = await queueOnClock(clock.id, ['2020-01-02T00:00:00Z'])
  const seen: string[] = []
  const deps = withHandler(async (d) => {
    const now = d.clock.now()
    seen.push(now.toISOString())
    // Waits two days on the clock the first time (as a card expiry job that ran early does).
    if (seen.length === 1) return { retryAt: new Date(now.getTime() + 2 * 86_400_000) }
  })
  await runDueOnClock(deps, clock.id, at('2020-01-03T00:00:00Z'))
  assert.deepEqual(seen, ['2020-01-02T00:00:00.000Z'])
  assert.equal(new Date((await jobState(id!))!.run_at).toISOString(), '2020-01-04T00:00:00.000Z')
  await runDueOnClock(deps, clock.id, at('2020-01-05T00:00:00Z'))
  assert.deepEqual(seen, ['2020-01-02T00:00:00.000Z', '2020-01-04T00:00:00.000Z'])
  assert.equal(await jobState(id!), undefined)
})

test('a failing job stays on the clock for the next advance; the advance still ends', async () => {
  const clock = await clockAt(t, token, '2020-01-01T00:00:00Z')
  const [id] = await queueOnClock(clock.id, ['2020-01-02T00:00:00Z'])
  const deps = withHandler(async () => {
    throw new Error('boom')
  })
  assert.equal(await runDueOnClock(deps, clock.id, at('2020-01-03T00:00:00Z')), 0)
  assert.equal((await jobState(id!))?.state, 'on_clock')
})

test('a job without a clock is queued as before and taken by the runners', async () => {
  const [id] = await queueOnClock(null, [new Date(t.clock.now().getTime() - 1000).toISOString()])
  assert.equal((await jobState(id!))?.state, 'queued')
})
