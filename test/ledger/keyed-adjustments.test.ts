/**
 * Credits and debits with an Idempotency-Key: the adjustment's own statement takes the key's lock, reads the
 * answer stored under it and stores the new one (`idempotent: 'in-statement'`), with no lock round trip before it.
 * The key's guarantees are those of every other route: the same request replays, another request under the key
 * is refused, a key held elsewhere answers "in progress", an answer past the window makes way.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { afterEach, describe, test } from 'node:test'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import pg from 'pg'
import { buildApp } from '../../src/app.js'
import { openDatabase } from '../../src/db/client.js'
import { keyLockId } from '../../src/http/idempotency.js'
import { InFlightKeys, lockKey } from '../../src/http/in-flight.js'
import { buildServices } from '../../src/runtime.js'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withApprovedCardholder } from '../helpers/tenant.js'
import { ledgerEntries, openAccount } from '../accounts/support.js'

const DAY_MS = 24 * 60 * 60 * 1000
let t: TestApp
let tenant: TestClient
let token: string
let cardholder: any

withApprovedCardholder((fixture) => ({ t, tenant, token, cardholder } = fixture))
afterEach(() => t.clock.reset())

const fresh = () => openAccount(t, token, tenant.programs.full, cardholder.id)
function adjust(
  direction: 'credit' | 'debit',
  id: string,
  body: Record<string, unknown>,
  key: string,
  bearer = token,
) {
  return t.api(bearer, 'POST', `/v1/accounts/${id}/${direction}`, body, { 'idempotency-key': key })
}
async function balance(id: string): Promise<number> {
  return (await t.api(token, 'GET', `/v1/accounts/${id}`)).json().ledger_balance
}
function assertReplay(replay: LightMyRequestResponse, original: LightMyRequestResponse) {
  assert.equal(replay.headers['idempotent-replay'], 'true')
  assert.equal(replay.statusCode, original.statusCode)
  assert.equal(replay.body, original.body)
}
function assertRefused(res: LightMyRequestResponse, code: string) {
  assert.equal(res.statusCode, 409, res.body)
  assert.equal(res.json().error.code, code)
}

describe('credits and debits under an Idempotency-Key', () => {
  test('the same key and body replays the first answer byte for byte and moves nothing', async () => {
    const a = await fresh()
    const key = randomUUID()
    const first = await adjust('credit', a.id, { amount: 700 }, key)
    assert.equal(first.statusCode, 200, first.body)
    assert.equal(first.headers['idempotent-replay'], undefined)
    assertReplay(await adjust('credit', a.id, { amount: 700 }, key), first)
    assert.equal(await balance(a.id), 700)
    assert.equal((await ledgerEntries(t, token, a.id)).length, 1)
  })

  test('the same key with another body, or on the debit, is idempotency_key_reuse and moves nothing', async () => {
    const a = await fresh()
    const key = randomUUID()
    assert.equal((await adjust('credit', a.id, { amount: 700 }, key)).statusCode, 200)
    assertRefused(await adjust('credit', a.id, { amount: 701 }, key), 'idempotency_key_reuse')
    assertRefused(await adjust('debit', a.id, { amount: 700 }, key), 'idempotency_key_reuse')
    // A body the schema refuses, under a key already answered: the key's answer decides, as on every route.
    assertRefused(await adjust('credit', a.id, { amount: 'seven' }, key), 'idempotency_key_reuse')
    assert.equal(await balance(a.id), 700)
  })

  test('a key first used on another endpoint is refused on a credit, which moves nothing', async () => {
    const a = await fresh()
    const key = randomUUID()
    const created = await t.api(
      token,
      'POST',
      '/v1/cardholders',
      {
        type: 'individual',
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: `ada.${key}@example.com`,
      },
      { 'idempotency-key': key },
    )
    assert.equal(created.statusCode, 201, created.body)
    assertRefused(await adjust('credit', a.id, { amount: 5 }, key), 'idempotency_key_reuse')
    assert.equal(await balance(a.id), 0)
  })

  test('a body the schema refuses is answered under the key: the identical retry replays the refusal', async () => {
    const a = await fresh()
    const key = randomUUID()
    const refused = await adjust('credit', a.id, { amount: -5 }, key)
    assert.equal(refused.statusCode, 400, refused.body)
    assertReplay(await adjust('credit', a.id, { amount: -5 }, key), refused)
    assertRefused(await adjust('credit', a.id, { amount: 5 }, key), 'idempotency_key_reuse')
    assert.equal(await balance(a.id), 0)
  })

  test('a refusal is stored under the key: the retry replays it even once the funds are there', async () => {
    const a = await fresh()
    const key = randomUUID()
    const refused = await adjust('debit', a.id, { amount: 50 }, key)
    assert.equal(refused.statusCode, 402, refused.body)
    assert.equal(
      (await t.api(token, 'POST', `/v1/accounts/${a.id}/credit`, { amount: 100 })).statusCode,
      200,
    )
    assertReplay(await adjust('debit', a.id, { amount: 50 }, key), refused)
    assert.equal(await balance(a.id), 100)
  })

  test('an answer older than 24 hours makes way: the key runs again', async () => {
    const a = await fresh()
    const key = randomUUID()
    assert.equal((await adjust('credit', a.id, { amount: 40 }, key)).statusCode, 200)
    t.clock.advance(DAY_MS + 60_000)
    const again = await adjust('credit', a.id, { amount: 40 }, key, await tenant.token())
    assert.equal(again.statusCode, 200, again.body)
    assert.equal(again.headers['idempotent-replay'], undefined)
    assert.equal(again.json().ledger_balance, 80)
  })

  test('the same key sent several times at once applies exactly once; the others replay or are in progress', async () => {
    const a = await fresh()
    const key = randomUUID()
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => adjust('credit', a.id, { amount: 9 }, key)),
    )
    const ran = answers.filter(
      (r) => r.statusCode === 200 && r.headers['idempotent-replay'] === undefined,
    )
    assert.equal(ran.length, 1, answers.map((r) => r.body).join('\n'))
    for (const other of answers.filter((r) => r !== ran[0])) {
      if (other.statusCode === 409)
        assert.equal(other.json().error.code, 'idempotency_request_in_progress')
      else assertReplay(other, ran[0])
    }
    assert.equal(await balance(a.id), 9)
  })

  test('a key held by a request on another node answers idempotency_request_in_progress until it is free', async (ctx) => {
    if (!t.deps.config.databaseUrl)
      return ctx.skip('PostgreSQL only: nodes meet in its advisory locks')
    const a = await fresh()
    const key = randomUUID()
    // The other node's request holds the key's session lock on its own connection, as `InFlightKeys` takes it.
    const other = new pg.Client({ connectionString: t.deps.config.databaseUrl })
    await other.connect()
    try {
      const id = keyLockId({ organizationId: tenant.organizationId, environment: 'sandbox', key })
      await other.query('SELECT pg_advisory_lock($1::bigint)', [lockKey(id)])
      assertRefused(
        await adjust('credit', a.id, { amount: 3 }, key),
        'idempotency_request_in_progress',
      )
      assert.equal(await balance(a.id), 0)
      await other.query('SELECT pg_advisory_unlock($1::bigint)', [lockKey(id)])
      const applied = await adjust('credit', a.id, { amount: 3 }, key)
      assert.equal(applied.statusCode, 200, applied.body)
      assert.equal(applied.json().ledger_balance, 3)
    } finally {
      await other.end()
    }
  })

  test('identical keyed credits arriving at the same moment on two nodes apply exactly once', async () => {
    // On PostgreSQL the second node has a pool and lock registry of its own; PGlite in memory can only be shared.
    const url = t.deps.config.databaseUrl
    const pool = url ? await openDatabase({ databaseUrl: url, dataDir: null, poolSize: 4 }) : null
    const inFlight = pool ? new InFlightKeys(url) : t.deps.inFlight
    const second: FastifyInstance = await buildApp(
      pool ? buildServices({ ...t.deps, db: pool.db, inFlight }) : { ...t.deps, inFlight },
    )
    await second.ready()
    try {
      const a = await fresh()
      for (let round = 0; round < 5; round++) {
        const key = randomUUID()
        const request = (app: FastifyInstance) =>
          app.inject({
            method: 'POST',
            url: `/v1/accounts/${a.id}/credit`,
            payload: { amount: 1 },
            headers: { authorization: `Bearer ${token}`, 'idempotency-key': key },
          })
        const answers = await Promise.all([
          request(t.app),
          request(second),
          request(t.app),
          request(second),
        ])
        const ran = answers.filter(
          (r) => r.statusCode === 200 && r.headers['idempotent-replay'] === undefined,
        )
        assert.equal(ran.length, 1, `round ${round}: ${answers.map((r) => r.body).join('\n')}`)
        for (const other of answers.filter((r) => r !== ran[0])) {
          if (other.statusCode === 409)
            assert.equal(other.json().error.code, 'idempotency_request_in_progress')
          else assertReplay(other, ran[0])
        }
        assert.equal(await balance(a.id), round + 1)
      }
    } finally {
      await second.close()
      if (pool) await inFlight.close()
      await pool?.close()
    }
  })
})
