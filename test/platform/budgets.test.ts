/**
 * Budgets of the hot paths: how many round trips, statements and locked rows each may cost the database. These
 * do not depend on the machine, so a change that adds a round trip to a credit, an authorization or a card read
 * fails here, naming every statement the path now sends, instead of showing up weeks later as a slower
 * benchmark. Counted on both databases (round trips matter most on PostgreSQL, where each is a network exchange):
 * every query sent on any connection while the request runs and until its background work (an advisory unlock)
 * is done, see `budgets-support.ts`.
 *
 * Rows locked: rows that existed before the request and that it updated, deleted or locked (FOR UPDATE or SHARE,
 * and the KEY SHARE lock PostgreSQL takes on a referenced row when a row pointing at it is inserted). New rows
 * are not counted: nobody else can wait for them.
 *
 * Batched paths (group commit) are measured twice: one request alone, and 8 sent at once, which go in at most
 * two batches (one if they all arrive before the first starts): the budget is per batch, at most two batches.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { fundedCard, MERCHANT, type Funded } from '../authorizations/support.js'
import {
  assertWithin,
  installQueryRecorder,
  measure,
  totalRows,
  type Budget,
  type Cost,
} from './budgets-support.js'

installQueryRecorder()

/** Requests sent at once for a batched path's budget, and the most batches they may take. */
const AT_ONCE = 8
const MAX_BATCHES = 2

const ONE_STATEMENT: Budget = { roundTrips: 1, statements: 1, rowsLocked: 1 }
const ONE_READ: Budget = { roundTrips: 1, statements: 1, rowsLocked: 0 }
/** The cards' read and the decisions' write; the account's row lock and the KEY SHARE lock of the organization row the authorization points at. */
const DECISION: Budget = { roundTrips: 2, statements: 2, rowsLocked: 2 }
/**
 * A capture runs in a transaction (begin and commit): the authorization read (before and under the account's row
 * lock), the hold's account locked and the hold read, one write of the balances and one insert of both entries
 * (capture, release of the rest), the hold, the authorization, the transaction and two events. Rows locked:
 * account, authorization, hold, and the organization and program rows the new transaction points at.
 */
const CAPTURE: Budget = { roundTrips: 14, statements: 12, rowsLocked: 5 }

function times(budget: Budget, n: number): Budget {
  return {
    roundTrips: budget.roundTrips * n,
    statements: budget.statements * n,
    rowsLocked: budget.rowsLocked * n,
  }
}

let t: TestApp
let token: string
let f: Funded
let sequence = 0

async function ok(
  request: Promise<LightMyRequestResponse>,
  status = 200,
): Promise<LightMyRequestResponse> {
  const res = await request
  assert.equal(res.statusCode, status, res.body)
  return res
}

function adjust(
  direction: 'credit' | 'debit',
  key?: string,
  accountId = f.account.id,
): Promise<LightMyRequestResponse> {
  const body = { amount: 100, client_transaction_id: `budget-${++sequence}` }
  return ok(
    t.api(
      token,
      'POST',
      `/v1/accounts/${accountId}/${direction}`,
      body,
      key ? { 'idempotency-key': key } : {},
    ),
  )
}

function authorize(card = f.card): Promise<LightMyRequestResponse> {
  return ok(
    t.api(token, 'POST', '/v1/simulate/authorizations', {
      card_id: card.id,
      amount: 10,
      currency: 'USD',
      merchant: MERCHANT,
    }),
    201,
  )
}

/**
 * The cost of `fn` in the steady state: a request of the same kind just before it reads what a busy process has
 * cached (a program's capabilities, a scope's authorization endpoint: each read once every few seconds, never per
 * request). A credit by default; an authorization for the decisions.
 */
async function steady(
  fn: () => Promise<unknown>,
  warm: () => Promise<unknown> = () => adjust('credit'),
): Promise<Cost> {
  return measure(t.deps.db, fn, warm)
}

async function within(
  what: string,
  budget: Budget,
  fn: () => Promise<unknown>,
  warm?: () => Promise<unknown>,
): Promise<void> {
  assertWithin(what, await steady(fn, warm), budget)
}

describe('hot paths stay within their database budgets', () => {
  const others: Funded[] = []

  before(async () => {
    t = await startTestApp()
    const tenant = await createTenant(t)
    token = await tenant.token()
    f = await fundedCard(t, tenant, token, 1_000_000)
    for (let i = 0; i < AT_ONCE; i++) others.push(await fundedCard(t, tenant, token, 1_000_000))
    // Warm: the token and the accounts' programs are cached as they are under load.
    await authorize()
    for (const o of others) await adjust('credit', undefined, o.account.id)
  })
  after(async () => {
    await t.close()
  })

  test('the recorder sees every statement and a budget names them when exceeded', async () => {
    const cost = await measure(t.deps.db, async () => {
      await sql`SELECT 1`.execute(t.deps.db)
      await t.deps.db.transaction().execute(async (trx) => {
        await sql`SELECT id FROM accounts WHERE id = ${f.account.id} FOR UPDATE`.execute(trx)
      })
    })
    assert.deepEqual([cost.roundTrips, cost.statements, cost.rowsLocked], [4, 2, { accounts: 1 }])
    assert.throws(
      () => assertWithin('two selects', cost, ONE_STATEMENT),
      (err: Error) => {
        assert.match(
          err.message,
          /two selects is over its budget: 4 round trips \(budget 1\), 2 statements \(budget 1\)/,
        )
        assert.match(err.message, /SELECT id FROM accounts WHERE id = \$1 FOR UPDATE/)
        return true
      },
    )
  })

  test('a credit: one statement (balance, entry, event, deliveries), the account row locked', async () => {
    await within('a credit', ONE_STATEMENT, () => adjust('credit'))
  })

  test('a credit with an Idempotency-Key: the same one statement, which also locks the key and reads and stores its answer', async () => {
    await within('a keyed credit', ONE_STATEMENT, () => adjust('credit', `budget-key-${sequence}`))
  })

  test('a keyed credit sent again replays from that same one statement', async () => {
    const key = `budget-replay-${sequence}`
    const body = { amount: 100, client_transaction_id: `budget-replay-${sequence}` }
    const send = () =>
      t.api(token, 'POST', `/v1/accounts/${f.account.id}/credit`, body, { 'idempotency-key': key })
    const first = await ok(send())
    let replay!: LightMyRequestResponse
    await within(
      'a keyed credit replayed',
      { roundTrips: 1, statements: 1, rowsLocked: 0 },
      async () => {
        replay = await ok(send())
      },
    )
    assert.equal(replay.headers['idempotent-replay'], 'true')
    assert.equal(replay.body, first.body)
  })

  test('a debit: one statement', async () => {
    await within('a debit', ONE_STATEMENT, () => adjust('debit'))
  })

  test(`${AT_ONCE} credits at once, on ${AT_ONCE} accounts, with and without a key: one statement per batch`, async () => {
    const budget = times({ ...ONE_STATEMENT, rowsLocked: AT_ONCE }, MAX_BATCHES)
    await within(`${AT_ONCE} credits at once`, budget, () =>
      Promise.all(others.map((o) => adjust('credit', undefined, o.account.id))),
    )
    await within(`${AT_ONCE} keyed credits at once`, budget, () =>
      Promise.all(
        others.map((o, i) => adjust('credit', `budget-batch-${sequence}-${i}`, o.account.id)),
      ),
    )
  })

  test('an authorization decision alone: the card read and the decision write', async () => {
    await within(
      'an authorization',
      DECISION,
      () => authorize(),
      () => authorize(),
    )
  })

  test('a decision where the organization has no rule reads none of the rules: only whether one exists', async () => {
    const cost = await steady(
      () => authorize(),
      () => authorize(),
    )
    assertWithin('an authorization without rules', cost, DECISION)
    const read = cost.sent.find((s) => /FROM authorization_rules AS x/.test(s.sql))
    assert.ok(read, 'the decision asks whether the organization has a rule')
    assert.ok(
      cost.sent.every((s) => !/authorization_rule_counters/.test(s.sql)),
      'no velocity counter is read or written',
    )
  })

  test('a decision under a velocity rule: the same two statements, the counter read and moved in them', async () => {
    const rule = await ok(
      t.api(token, 'POST', '/v1/authorization_rules', {
        name: 'budget: 1,000 a day',
        scope: { level: 'card', ids: [f.card.id] },
        type: 'velocity_limit',
        parameters: { window: { type: 'day' }, aggregate: 'card', limit_count: 1000 },
        mode: 'active',
      }),
      201,
    )
    try {
      const cost = await steady(
        () => authorize(),
        () => authorize(),
      )
      assertWithin('an authorization under a rule', cost, DECISION)
      const counters = cost.sent.filter((s) => /authorization_rule_counters/.test(s.sql))
      assert.equal(counters.length, 2, 'the read and the write each take the counter')
    } finally {
      await ok(t.api(token, 'DELETE', `/v1/authorization_rules/${rule.json().id}`))
    }
  })

  test(`${AT_ONCE} authorization decisions at once, on ${AT_ONCE} cards: two statements per batch`, async () => {
    const cost = await steady(
      () => Promise.all(others.map((o) => authorize(o.card))),
      () => authorize(),
    )
    assertWithin(`${AT_ONCE} authorizations at once`, cost, {
      ...times(DECISION, MAX_BATCHES),
      rowsLocked: AT_ONCE + 1,
    })
    assert.ok(totalRows(cost.rowsLocked) >= AT_ONCE, 'each decision locks its account')
  })

  test(`${AT_ONCE} authorizations abroad at once (EUR on USD cards): no statement more than at home`, async () => {
    const abroad = (card: Funded['card']) =>
      ok(
        t.api(token, 'POST', '/v1/simulate/authorizations', {
          card_id: card.id,
          amount: 10,
          currency: 'EUR',
          merchant: MERCHANT,
        }),
        201,
      )
    const cost = await steady(
      () => Promise.all(others.map((o) => abroad(o.card))),
      () => abroad(f.card),
    )
    // The sandbox's rate (pinned or the table's) comes with the decision's own read, as a network sends it.
    assertWithin(`${AT_ONCE} authorizations abroad at once`, cost, {
      ...times(DECISION, MAX_BATCHES),
      rowsLocked: AT_ONCE + 1,
    })
  })

  test('a capture of an authorization', async () => {
    const auth = (await authorize()).json()
    await within('a capture', CAPTURE, () =>
      ok(
        t.api(token, 'POST', `/v1/simulate/authorizations/${auth.id}/capture`, { amount: 5 }),
        201,
      ),
    )
  })

  test('GET /v1/cards/{id}: one read, nothing locked', async () => {
    await within('GET /v1/cards/{id}', ONE_READ, () =>
      ok(t.api(token, 'GET', `/v1/cards/${f.card.id}`)),
    )
  })

  test('a list page (GET /v1/cards, GET /v1/accounts/{id}/entries): one read each for the page, nothing locked', async () => {
    await within('GET /v1/cards', ONE_READ, () => ok(t.api(token, 'GET', '/v1/cards?limit=10')))
    await within(
      'GET /v1/accounts/{id}/entries',
      { ...ONE_READ, roundTrips: 2, statements: 2 },
      () => ok(t.api(token, 'GET', `/v1/accounts/${f.account.id}/entries?limit=10`)),
    )
  })
})
