/**
 * Issue 18, the deterministic half: an Idempotency-Key's stored answer commits with the effect it answers
 * (decisions.md, "Exactly once under failure"). When writing the stored answer fails, the request must leave
 * no effect at all and a free key: the retry with the same key runs at once (no `409
 * idempotency_request_in_progress` for minutes), exactly once, and answers normally; a further retry replays it.
 *
 * The failure is a trigger on idempotency_keys that refuses any row carrying an answer (a non-null `response…`
 * column), so the in-progress marker, if an implementation writes one, still goes through and only the answer's
 * write fails. Runs in-process on both databases (PGlite and, with DATABASE_URL, PostgreSQL).
 *
 *   npm test -- test/platform/idempotency-atomic.test.ts
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test -- test/platform/idempotency-atomic.test.ts
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { MERCHANT, fundedCard, type Funded } from '../authorizations/support.js'

let t: TestApp
let tenant: TestClient
let token: string
let funded: Funded

/** Refuses every write to idempotency_keys that carries a stored answer. */
async function installAnswerFailure(): Promise<void> {
  await sql
    .raw(`CREATE OR REPLACE FUNCTION svc_test_refuse_stored_answer() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF EXISTS (SELECT 1 FROM jsonb_each(to_jsonb(NEW)) AS c(name, value) WHERE c.name LIKE 'response%' AND c.value <> 'null'::jsonb) THEN
        RAISE EXCEPTION 'test: the stored idempotent answer cannot be written';
      END IF;
      RETURN NEW;
    END $fn$`)
    .execute(t.deps.db)
  await sql
    .raw(`CREATE TRIGGER svc_test_refuse_stored_answer BEFORE INSERT OR UPDATE ON idempotency_keys
    FOR EACH ROW EXECUTE FUNCTION svc_test_refuse_stored_answer()`)
    .execute(t.deps.db)
}

async function removeAnswerFailure(): Promise<void> {
  await sql
    .raw('DROP TRIGGER IF EXISTS svc_test_refuse_stored_answer ON idempotency_keys')
    .execute(t.deps.db)
  await sql.raw('DROP FUNCTION IF EXISTS svc_test_refuse_stored_answer()').execute(t.deps.db)
}

/** Sends the request while the stored answer cannot be written. */
async function whileAnswersFail(
  send: () => Promise<LightMyRequestResponse>,
): Promise<LightMyRequestResponse> {
  await installAnswerFailure()
  try {
    return await send()
  } finally {
    await removeAnswerFailure()
  }
}

/**
 * The retry right after the failure, on the same (unmoved) clock. A `409 idempotency_request_in_progress` is
 * allowed for at most a second of wall time (the failed request is over; its lock must be gone with it).
 */
async function retryAtOnce(
  send: () => Promise<LightMyRequestResponse>,
): Promise<{ res: LightMyRequestResponse; busy: number }> {
  const start = Date.now()
  let busy = 0
  for (;;) {
    const res = await send()
    const inProgress =
      res.statusCode === 409 && res.json()?.error?.code === 'idempotency_request_in_progress'
    if (!inProgress || Date.now() - start > 1000) return { res, busy: busy + (inProgress ? 1 : 0) }
    busy++
    await new Promise((r) => setTimeout(r, 50))
  }
}

async function eventCount(): Promise<number> {
  const { rows } = await sql<{
    n: number
  }>`SELECT count(*)::int AS n FROM events WHERE organization_id = ${tenant.organizationId}`.execute(
    t.deps.db,
  )
  return Number(rows[0].n)
}

async function eventsOfType(type: string, objectId: string): Promise<number> {
  const { rows } = await sql<{
    data: any
  }>`SELECT data FROM events WHERE organization_id = ${tenant.organizationId} AND type = ${type}`.execute(
    t.deps.db,
  )
  return rows.filter(
    (r) => (typeof r.data === 'string' ? JSON.parse(r.data) : r.data).object?.id === objectId,
  ).length
}

async function account(): Promise<any> {
  const res = await t.api(token, 'GET', `/v1/accounts/${funded.account.id}`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

/**
 * Collects every broken expectation of one scenario and fails once at the end with all of them, so a run shows
 * the whole behaviour (effect left behind, key still locked, retry refused…) rather than the first symptom only.
 */
class Expectations {
  readonly problems: string[] = []
  that(ok: boolean, problem: string): void {
    if (!ok) this.problems.push(problem)
  }
  done(): void {
    assert.deepEqual(this.problems, [], `\n  - ${this.problems.join('\n  - ')}`)
  }
}

/** The common shape: failed answer → 5xx and nothing; retry → one normal answer; another retry → the replay. */
async function scenario(options: {
  send: () => Promise<LightMyRequestResponse>
  status: number
  /** How many of the effect exist now (rows, entries…). */
  effects: () => Promise<number>
  /** Anything else that must not move while the answer fails (balances), compared before and after. */
  untouched?: () => Promise<unknown>
  /** Events the successful request emitted for the object it answers; other checks of the answer go into `expect`. */
  eventsFor: (answer: any, expect: Expectations) => Promise<number>
}): Promise<void> {
  const expect = new Expectations()
  const eventsBefore = await eventCount()
  const untouchedBefore = await options.untouched?.()

  const failed = await whileAnswersFail(options.send)
  expect.that(
    failed.statusCode >= 500 && failed.statusCode <= 599,
    `while the answer cannot be stored the request answers 5xx, got ${failed.statusCode} ${failed.body.slice(0, 300)} ` +
      '(a 2xx means the trigger never fired: does idempotency_keys still store the answer in response_* columns?)',
  )
  if (failed.statusCode >= 500) {
    expect.that(
      failed.json()?.error?.code === 'internal_error',
      `the 5xx is internal_error in the envelope: ${failed.body.slice(0, 300)}`,
    )
  }
  const leftBehind = await options.effects()
  expect.that(
    leftBehind === 0,
    `the failed request left its effect behind: ${leftBehind} (an effect without its stored answer)`,
  )
  expect.that(
    (await eventCount()) === eventsBefore,
    `the failed request emitted ${(await eventCount()) - eventsBefore} event(s)`,
  )
  if (options.untouched) {
    const now = await options.untouched()
    expect.that(
      JSON.stringify(now) === JSON.stringify(untouchedBefore),
      `the failed request moved ${JSON.stringify(untouchedBefore)} → ${JSON.stringify(now)}`,
    )
  }

  const { res: retry, busy } = await retryAtOnce(options.send)
  expect.that(
    busy === 0 || retry.statusCode !== 409,
    `the key stays locked after the failed request instead of being free at once: the retry still answers 409 idempotency_request_in_progress after ${busy} tries over 1 s`,
  )
  expect.that(
    retry.statusCode === options.status,
    `the retry answers ${options.status}, got ${retry.statusCode} ${retry.body.slice(0, 300)}`,
  )
  expect.that(
    retry.headers['idempotent-replay'] === undefined,
    `the retry runs the request (no Idempotent-Replay), got ${retry.headers['idempotent-replay']}`,
  )
  const effects = await options.effects()
  expect.that(effects === 1, `the request took effect exactly once in all, found ${effects}`)
  if (retry.statusCode === options.status) {
    const emitted = await options.eventsFor(retry.json(), expect)
    expect.that(emitted === 1, `its event was emitted once, found ${emitted}`)
  }

  const replay = await options.send()
  expect.that(
    replay.headers['idempotent-replay'] === 'true',
    `a further retry replays (Idempotent-Replay: true), got ${replay.statusCode} header ${replay.headers['idempotent-replay']}`,
  )
  if (retry.statusCode === options.status) {
    expect.that(
      replay.statusCode === retry.statusCode && replay.body === retry.body,
      `the replay equals the answer: ${retry.statusCode} ${retry.body.slice(0, 120)} vs ${replay.statusCode} ${replay.body.slice(0, 120)}`,
    )
  }
  expect.that((await options.effects()) === effects, 'the replay took no further effect')
  expect.done()
}

describe('the stored idempotent answer commits with the effect: a failed answer write leaves no effect and a free key', () => {
  before(async () => {
    t = await startTestApp()
    tenant = await createTenant(t)
    token = await tenant.token()
    funded = await fundedCard(t, tenant, token, 1_000_000)
  })
  after(async () => {
    if (t) {
      await removeAnswerFailure().catch(() => {})
      await t.close()
    }
  })

  test('the trigger refuses a row that carries an answer, and only such a row', async () => {
    // Built from the table's columns, so the probe holds whatever else the key row keeps (an in-progress
    // marker, a lock time…): every required column gets a value of its type, the answer columns start empty.
    const { rows: columns } = await sql<{ name: string; type: string; required: boolean }>`
      SELECT column_name AS name, data_type AS type, (is_nullable = 'NO' AND column_default IS NULL) AS required
      FROM information_schema.columns WHERE table_name = 'idempotency_keys' AND table_schema = current_schema()`.execute(
      t.deps.db,
    )
    const literal = (c: { name: string; type: string }): string | null => {
      if (c.name === 'key') return `'probe-${randomUUID()}'`
      if (c.type === 'text' || c.type.startsWith('character')) return `'probe'`
      if (c.type.startsWith('timestamp')) return 'now()'
      if (c.type === 'integer' || c.type === 'bigint' || c.type === 'smallint')
        return c.name.startsWith('response') ? '200' : '0'
      if (c.type === 'json' || c.type === 'jsonb') return `'{}'`
      if (c.type === 'boolean') return 'false'
      return null
    }
    const answerColumns = columns.filter((c) => c.name.startsWith('response'))
    assert.ok(
      answerColumns.length > 0,
      `idempotency_keys has no response… column: the trigger would never fire (${columns.map((c) => c.name).join(', ')})`,
    )
    const plain = columns.filter((c) => c.required && !c.name.startsWith('response'))
    const insert = (cols: typeof columns) =>
      sql.raw(
        `INSERT INTO idempotency_keys (${cols.map((c) => `"${c.name}"`).join(', ')}) VALUES (${cols.map((c) => literal(c)).join(', ')})`,
      )
    await installAnswerFailure()
    try {
      const status = answerColumns.find((c) => literal(c) !== null)!
      await assert.rejects(
        insert([...plain, status]).execute(t.deps.db),
        /stored idempotent answer/,
      )
      if (!answerColumns.some((c) => c.required)) {
        await insert(plain).execute(t.deps.db)
        await assert.rejects(
          sql
            .raw(
              `UPDATE idempotency_keys SET "${status.name}" = ${literal(status)} WHERE organization_id = 'probe'`,
            )
            .execute(t.deps.db),
          /stored idempotent answer/,
        )
      }
    } finally {
      await sql
        .raw(`DELETE FROM idempotency_keys WHERE organization_id = 'probe'`)
        .execute(t.deps.db)
      await removeAnswerFailure()
    }
  })

  test('a credit with only an Idempotency-Key: 5xx and no entry, no balance change, no event; the retry credits once; then it replays', async () => {
    const key = `atomic-credit-${randomUUID()}`
    const reference = `atomic-${randomUUID()}`
    const body = { amount: 700, reference }
    const creditedBefore = await eventsOfType('account.credited', funded.account.id)
    const balanceBefore = (await account()).ledger_balance
    await scenario({
      send: () =>
        t.api(token, 'POST', `/v1/accounts/${funded.account.id}/credit`, body, {
          'idempotency-key': key,
        }),
      status: 200,
      effects: async () =>
        Number(
          (
            await sql<{
              n: number
            }>`SELECT count(*)::int AS n FROM ledger_entries WHERE account_id = ${funded.account.id} AND reference = ${reference}`.execute(
              t.deps.db,
            )
          ).rows[0].n,
        ),
      untouched: async () => {
        const a = await account()
        return [a.ledger_balance, a.held_balance]
      },
      eventsFor: async (answer, expect) => {
        expect.that(
          answer.ledger_balance === balanceBefore + 700,
          `the answer shows one credit: ${balanceBefore} → ${answer.ledger_balance}`,
        )
        return (await eventsOfType('account.credited', funded.account.id)) - creditedBefore
      },
    })
  })

  test('a cardholder create with an Idempotency-Key: 5xx and no cardholder, no event; the retry creates one; then it replays', async () => {
    const key = `atomic-cardholder-${randomUUID()}`
    const reference = `atomic-${randomUUID()}`.slice(0, 60)
    const email = `atomic.${randomUUID()}@example.com`
    const body = {
      type: 'individual',
      first_name: 'Grace',
      last_name: 'Hopper',
      email,
      reference,
      address: { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'USA' },
    }
    await scenario({
      send: () => t.api(token, 'POST', '/v1/cardholders', body, { 'idempotency-key': key }),
      status: 201,
      effects: async () => {
        const listed = await t.api(
          token,
          'GET',
          `/v1/cardholders?reference=${encodeURIComponent(reference)}`,
        )
        assert.equal(listed.statusCode, 200, listed.body)
        const stored = Number(
          (
            await sql<{
              n: number
            }>`SELECT count(*)::int AS n FROM cardholders WHERE lower(email) = ${email}`.execute(
              t.deps.db,
            )
          ).rows[0].n,
        )
        assert.equal(listed.json().data.length, stored, 'the list and the table agree')
        return stored
      },
      eventsFor: (answer) => eventsOfType('cardholder.created', answer.id),
    })
  })

  test('a simulated authorization with an Idempotency-Key: 5xx and no authorization, no hold, no event; the retry authorizes once; then it replays', async () => {
    const key = `atomic-auth-${randomUUID()}`
    const merchant = { ...MERCHANT, name: `Atomic ${randomUUID()}` }
    const body = { card_id: funded.card.id, amount: 2_500, currency: 'USD', merchant }
    const heldBefore = (await account()).held_balance
    await scenario({
      send: () =>
        t.api(token, 'POST', '/v1/simulate/authorizations', body, { 'idempotency-key': key }),
      status: 201,
      effects: async () =>
        Number(
          (
            await sql<{
              n: number
            }>`SELECT count(*)::int AS n FROM authorizations WHERE card_id = ${funded.card.id} AND merchant->>'name' = ${merchant.name}`.execute(
              t.deps.db,
            )
          ).rows[0].n,
        ),
      untouched: async () => {
        const a = await account()
        const holds = Number(
          (
            await sql<{
              n: number
            }>`SELECT count(*)::int AS n FROM holds WHERE account_id = ${funded.account.id}`.execute(
              t.deps.db,
            )
          ).rows[0].n,
        )
        return [a.ledger_balance, a.held_balance, holds]
      },
      eventsFor: async (answer, expect) => {
        expect.that(answer.approved === true, `approved: ${JSON.stringify(answer).slice(0, 200)}`)
        const held = (await account()).held_balance
        expect.that(
          held === heldBefore + 2_500,
          `one hold of the amount: held ${heldBefore} → ${held}`,
        )
        return eventsOfType('authorization.created', answer.id)
      },
    })
  })
})
