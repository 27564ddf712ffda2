import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { withTx } from '../../src/db/tx.js'
import {
  applySettledMovement,
  captureHold,
  incrementHold,
  placeHold,
  releaseHold,
  type HoldDecision,
} from '../../src/modules/ledger/service.js'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withApprovedCardholder } from '../helpers/tenant.js'
import { expectError, openAccount } from '../accounts/support.js'

let t: TestApp
let tenant: TestClient
let token: string
let cardholder: any

withApprovedCardholder((fixture) => ({ t, tenant, token, cardholder } = fixture))

async function funded(amount: number): Promise<string> {
  const a = await openAccount(t, token, tenant.programs.full, cardholder.id)
  if (amount > 0)
    assert.equal(
      (await t.api(token, 'POST', `/v1/accounts/${a.id}/credit`, { amount })).statusCode,
      200,
    )
  return a.id
}

const tx = <T>(fn: (trx: any) => Promise<T>) => withTx(t.deps.db, fn)
const now = () => t.clock.now()

function approved(d: HoldDecision): Extract<HoldDecision, { approved: true }> {
  assert.equal(d.approved, true, d.approved ? '' : d.reason)
  return d as Extract<HoldDecision, { approved: true }>
}

/** The account as the API shows it, checked against the invariants every reader relies on. */
async function balances(accountId: string): Promise<[number, number, number]> {
  const a = (await t.api(token, 'GET', `/v1/accounts/${accountId}`)).json()
  const openHolds = await t.deps.db
    .selectFrom('holds')
    .select('remaining')
    .where('account_id', '=', accountId)
    .where('status', '=', 'open')
    .execute()
  assert.equal(
    a.held_balance,
    openHolds.reduce((s, h) => s + Number(h.remaining), 0),
    'held_balance = sum of open holds',
  )
  const entries = await t.deps.db
    .selectFrom('ledger_entries')
    .select(['type', 'amount'])
    .where('account_id', '=', accountId)
    .execute()
  const settled = entries
    .filter((e) => !['hold', 'hold_release'].includes(e.type))
    .reduce((s, e) => s + Number(e.amount), 0)
  assert.equal(a.ledger_balance, settled, 'ledger_balance = sum of settled entries')
  assert.equal(a.available_balance, a.ledger_balance - a.held_balance)
  return [a.ledger_balance, a.held_balance, a.available_balance]
}

describe('holds', () => {
  test('placing a hold moves funds from available to held, leaving the ledger balance', async () => {
    const id = await funded(1000)
    const d = approved(
      await tx((trx) =>
        placeHold(trx, { accountId: id, amount: 400, currency: 'usd', sourceId: 'auth_A' }, now()),
      ),
    )
    assert.match(d.hold.id, /^hold_/)
    assert.equal(d.hold.status, 'open')
    assert.deepEqual(await balances(id), [1000, 400, 600])
    const entries = (await t.api(token, 'GET', `/v1/accounts/${id}/entries`)).json().data
    assert.deepEqual(
      [
        entries[0].type,
        entries[0].amount,
        entries[0].source_id,
        entries[0].available_balance_after,
      ],
      ['hold', -400, 'auth_A', 600],
    )
  })

  test('held funds cannot be debited: debit beyond available answers 402 insufficient_funds', async () => {
    const id = await funded(1000)
    approved(
      await tx((trx) => placeHold(trx, { accountId: id, amount: 700, currency: 'USD' }, now())),
    )
    expectError(
      await t.api(token, 'POST', `/v1/accounts/${id}/debit`, { amount: 301 }),
      402,
      'insufficient_funds',
    )
    assert.equal(
      (await t.api(token, 'POST', `/v1/accounts/${id}/debit`, { amount: 300 })).statusCode,
      200,
    )
    assert.deepEqual(await balances(id), [700, 700, 0])
  })

  test('a hold beyond available, or in another currency, is refused as a value and changes nothing', async () => {
    const id = await funded(100)
    const short = await tx((trx) =>
      placeHold(trx, { accountId: id, amount: 101, currency: 'USD' }, now()),
    )
    assert.deepEqual(short.approved ? null : short.reason, 'insufficient_funds')
    const euro = await tx((trx) =>
      placeHold(trx, { accountId: id, amount: 1, currency: 'EUR' }, now()),
    )
    assert.deepEqual(euro.approved ? null : euro.reason, 'currency_mismatch')
    assert.deepEqual(await balances(id), [100, 0, 100])
  })

  test('an increment raises an open hold under the same funds rule', async () => {
    const id = await funded(500)
    const h = approved(
      await tx((trx) => placeHold(trx, { accountId: id, amount: 200, currency: 'USD' }, now())),
    )
    approved(await tx((trx) => incrementHold(trx, h.hold.id, 250, now())))
    const over = await tx((trx) => incrementHold(trx, h.hold.id, 51, now()))
    assert.deepEqual(over.approved ? null : over.reason, 'insufficient_funds')
    assert.deepEqual(await balances(id), [500, 450, 50])
  })

  test('a partial release gives back part of the hold; a full release closes it; releasing again changes nothing', async () => {
    const id = await funded(1000)
    const h = approved(
      await tx((trx) => placeHold(trx, { accountId: id, amount: 600, currency: 'USD' }, now())),
    )
    const partial = await tx((trx) => releaseHold(trx, h.hold.id, now(), 100))
    assert.deepEqual([partial.hold.remaining, partial.hold.status], [500, 'open'])
    assert.deepEqual(await balances(id), [1000, 500, 500])
    const full = await tx((trx) => releaseHold(trx, h.hold.id, now()))
    assert.deepEqual(
      [full.hold.remaining, full.hold.released, full.hold.status],
      [0, 600, 'closed'],
    )
    await tx((trx) => releaseHold(trx, h.hold.id, now()))
    assert.deepEqual(await balances(id), [1000, 0, 1000])
  })

  test('a partial final capture settles the amount and releases the rest', async () => {
    const id = await funded(1000)
    const h = approved(
      await tx((trx) =>
        placeHold(trx, { accountId: id, amount: 600, currency: 'USD', sourceId: 'auth_P' }, now()),
      ),
    )
    const c = await tx((trx) => captureHold(trx, h.hold.id, 450, now()))
    assert.deepEqual(
      [c.hold.captured, c.hold.released, c.hold.remaining, c.hold.status],
      [450, 150, 0, 'closed'],
    )
    assert.deepEqual(await balances(id), [550, 0, 550])
    const types = (await t.api(token, 'GET', `/v1/accounts/${id}/entries?limit=3`))
      .json()
      .data.map((e: any) => [e.type, e.amount])
    assert.deepEqual(types, [
      ['hold_release', 150],
      ['capture', -450],
      ['hold', -600],
    ])
  })

  test('non-final partial captures keep the rest held until a later capture', async () => {
    const id = await funded(1000)
    const h = approved(
      await tx((trx) => placeHold(trx, { accountId: id, amount: 600, currency: 'USD' }, now())),
    )
    await tx((trx) => captureHold(trx, h.hold.id, 200, now(), { final: false }))
    assert.deepEqual(await balances(id), [800, 400, 400])
    const last = await tx((trx) => captureHold(trx, h.hold.id, 400, now(), { final: false }))
    assert.deepEqual([last.hold.captured, last.hold.status], [600, 'closed'])
    assert.deepEqual(await balances(id), [400, 0, 400])
  })

  test('an over-capture takes the excess from the balance', async () => {
    const id = await funded(1000)
    const h = approved(
      await tx((trx) => placeHold(trx, { accountId: id, amount: 100, currency: 'USD' }, now())),
    )
    await tx((trx) => captureHold(trx, h.hold.id, 130, now()))
    assert.deepEqual(await balances(id), [870, 0, 870])
  })

  test('a hold placed in a transaction that rolls back leaves no trace', async () => {
    const id = await funded(300)
    await assert.rejects(
      tx(async (trx) => {
        approved(await placeHold(trx, { accountId: id, amount: 300, currency: 'USD' }, now()))
        throw new Error('authorization failed later')
      }),
    )
    assert.deepEqual(await balances(id), [300, 0, 300])
    assert.equal((await t.api(token, 'GET', `/v1/accounts/${id}/entries`)).json().data.length, 1)
  })

  test('concurrent holds never take available below zero', async () => {
    const id = await funded(1000)
    const results = await Promise.all(
      Array.from({ length: 30 }, () =>
        tx((trx) => placeHold(trx, { accountId: id, amount: 70, currency: 'USD' }, now())),
      ),
    )
    assert.equal(results.filter((r) => r.approved).length, 14)
    assert.deepEqual(await balances(id), [1000, 980, 20])
  })
})

describe('settled movements for other modules', () => {
  test('a refund credits and an eSIM purchase debits, under the account rules', async () => {
    const id = await funded(100)
    await tx((trx) =>
      applySettledMovement(
        trx,
        { accountId: id, type: 'refund', amount: 25, currency: 'USD', sourceId: 'txn_R' },
        now(),
      ),
    )
    await assert.rejects(
      tx((trx) =>
        applySettledMovement(
          trx,
          {
            accountId: id,
            type: 'esim_purchase',
            amount: -200,
            currency: 'USD',
            sourceId: 'esord_1',
          },
          now(),
        ),
      ),
      (err: any) => err.code === 'insufficient_funds',
    )
    await tx((trx) =>
      applySettledMovement(
        trx,
        {
          accountId: id,
          type: 'esim_purchase',
          amount: -125,
          currency: 'USD',
          sourceId: 'esord_2',
        },
        now(),
      ),
    )
    assert.deepEqual(await balances(id), [0, 0, 0])
  })
})
