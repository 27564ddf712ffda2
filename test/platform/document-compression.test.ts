/**
 * On PostgreSQL, the documents every authorization decision writes (its request history and rule results, its
 * event, a stored answer) are compressed with lz4 rather than pglz, which cost the write of a batch under ten rules
 * a card a sixth of its PostgreSQL time. The embedded database has no lz4 and keeps pglz: skipped there.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { authorize, fundedCard } from '../authorizations/support.js'
import { createRule, onCard } from '../authorization-rules/support.js'

describe('document compression', { skip: !process.env.DATABASE_URL }, () => {
  let t: TestApp
  before(async () => {
    t = await startTestApp()
  })
  after(() => t.close())

  test('the decision documents are declared lz4', async () => {
    const { rows } = await sql<{ column: string; method: string }>`
      SELECT attrelid::regclass::text || '.' || attname AS column, attcompression::text AS method
      FROM pg_attribute
      WHERE (attrelid = 'authorizations'::regclass AND attname IN ('request_history', 'rule_results', 'rule_counters'))
        OR (attrelid = 'events'::regclass AND attname = 'data')
        OR (attrelid = 'idempotency_keys'::regclass AND attname = 'response_json')
      ORDER BY 1`.execute(t.deps.db)
    assert.deepEqual(
      rows.map((r) => [r.column, r.method]),
      [
        ['authorizations.request_history', 'l'],
        ['authorizations.rule_counters', 'l'],
        ['authorizations.rule_results', 'l'],
        ['events.data', 'l'],
        ['idempotency_keys.response_json', 'l'],
      ],
    )
  })

  test('an authorization with ten rules is stored lz4-compressed and reads back whole', async () => {
    const tenant = await createTenant(t)
    const token = await tenant.token()
    const { card } = await fundedCard(t, tenant, token, 1_000_000)
    for (let i = 0; i < 10; i++)
      await createRule(t, token, {
        name: `limit ${i}`,
        scope: onCard(card.id),
        type: 'velocity_limit',
        parameters: { window: { type: 'day' }, aggregate: 'card', limit_amount: 1_000_000 + i },
      })
    const auth = await authorize(t, token, card.id, 100)
    assert.equal(auth.rule_results.length, 10)
    const { rows } = await sql<{ history: string | null; results: string | null }>`
      SELECT pg_column_compression(request_history) AS history, pg_column_compression(rule_results) AS results
      FROM authorizations WHERE id = ${auth.id}`.execute(t.deps.db)
    assert.deepEqual(rows[0], { history: 'lz4', results: 'lz4' })
    const read = await t.api(token, 'GET', `/v1/authorizations/${auth.id}`)
    assert.deepEqual(read.json().rule_results, auth.rule_results)
    assert.deepEqual(read.json().request_history, auth.request_history)
  })
})
