/**
 * Keyset pagination deep into large lists: an account with 20,000 ledger entries and an organization with 12,000
 * events of three types, written straight into the database (not through the API) so the test stays fast. Walking
 * every page with the cursors returns each row once, in order (also a type prefix, whose per-type ranges are merged),
 * and a page far down the list is exactly the rows after the cursor's position, forwards and backwards; no page needs
 * a count or the rows before it.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { newId } from '../../src/lib/ids.js'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { attest, makeAccount, makeCardholder } from '../cards/support.js'

const ENTRIES = 20_000
const EVENTS = 12_000

let t: TestApp
let token: string
let accountId: string

before(
  async () => {
    t = await startTestApp()
    const tenant = await createTenant(t)
    token = await tenant.token()
    const holder = await makeCardholder(t, token)
    await attest(t, token, holder.id, 'approved', true)
    const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
    accountId = account.id
    // Entries 1..ENTRIES of 1.00 each, a second apart, ending an hour ago; the account's balance and sequence agree.
    const start = t.clock.now().getTime() - 3_600_000 - ENTRIES * 1000
    const ids = Array.from({ length: ENTRIES }, (_, i) => newId('le', new Date(start + i * 1000)))
    await sql`INSERT INTO ledger_entries (id, account_id, organization_id, environment, seq, type, amount, currency,
      ledger_balance_after, held_balance_after, available_balance_after, created_at)
    SELECT id, ${accountId}, ${tenant.organizationId}, 'sandbox', seq, 'credit', 100, 'USD', 100 * seq, 0, 100 * seq,
      to_timestamp((${start}::float8 + (seq - 1) * 1000) / 1000)
    FROM unnest(${ids}::text[]) WITH ORDINALITY AS x(id, seq)`.execute(t.deps.db)
    await sql`UPDATE accounts SET ledger_balance = ${100 * ENTRIES}, entry_seq = ${ENTRIES} WHERE id = ${accountId}`.execute(
      t.deps.db,
    )
    // Events of three types in turn (two of them card.*), in the tenant's scope.
    const eventIds = Array.from({ length: EVENTS }, (_, i) =>
      newId('evt', new Date(start + i * 1000)),
    )
    await sql`INSERT INTO events (id, organization_id, environment, type, api_version, data, created_at)
    SELECT id, ${tenant.organizationId}, 'sandbox', CASE n % 3 WHEN 0 THEN 'card.created' WHEN 1 THEN 'card.frozen' ELSE 'account.credited' END, '2026-01-01',
      json_build_object('object', json_build_object('id', 'obj_' || n)), to_timestamp((${start}::float8 + (n - 1) * 1000) / 1000)
    FROM unnest(${eventIds}::text[]) WITH ORDINALITY AS x(id, n)`.execute(t.deps.db)
  },
  { timeout: 60_000 },
)

after(async () => {
  await t?.close()
})

async function page(
  url: string,
): Promise<{ data: any[]; has_more: boolean; next_cursor: string | null }> {
  const res = await t.api(token, 'GET', url)
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

/** Every page of a list with `limit`, following next_cursor; answers the items in order and the cursors met. */
async function walkAll(path: string, limit: number): Promise<{ items: any[]; cursors: string[] }> {
  const items: any[] = []
  const cursors: string[] = []
  let url = `${path}${path.includes('?') ? '&' : '?'}limit=${limit}`
  for (;;) {
    const p = await page(url)
    items.push(...p.data)
    if (!p.has_more) return { items, cursors }
    cursors.push(p.next_cursor!)
    url = `${path}${path.includes('?') ? '&' : '?'}limit=${limit}&starting_after=${encodeURIComponent(p.next_cursor!)}`
  }
}

describe('keyset pagination deep into a large list', () => {
  test('an account with 20,000 entries pages through all of them once, newest first, with running balances that agree', {
    timeout: 120_000,
  }, async () => {
    const { items } = await walkAll(`/v1/accounts/${accountId}/entries`, 100)
    assert.equal(items.length, ENTRIES)
    assert.equal(new Set(items.map((e) => e.id)).size, ENTRIES, 'no entry twice')
    for (let i = 1; i < items.length; i++) {
      assert.ok(items[i - 1].id > items[i].id, `entries out of order at ${i}`)
      assert.equal(
        items[i - 1].ledger_balance_after - items[i].ledger_balance_after,
        items[i - 1].amount,
      )
    }
    assert.equal(items.at(-1).ledger_balance_after, 100)
  })

  test('a page 150 pages deep is the 100 entries after its cursor, and ending_before its last entry is the 100 entries before it', {
    timeout: 60_000,
  }, async () => {
    const path = `/v1/accounts/${accountId}/entries`
    const { items, cursors } = await walkAll(path, 100)
    const deep = await page(`${path}?limit=100&starting_after=${encodeURIComponent(cursors[149])}`)
    assert.deepEqual(
      deep.data.map((e) => e.ledger_balance_after),
      Array.from({ length: 100 }, (_, i) => 100 * (ENTRIES - 15_000 - i)),
    )
    assert.deepEqual(
      deep.data.map((e) => e.id),
      items.slice(15_000, 15_100).map((e) => e.id),
    )
    // A cursor marks its page's last entry: the 100 entries before the deep page's last one, newest first.
    const back = await page(`${path}?limit=100&ending_before=${encodeURIComponent(cursors[150])}`)
    assert.deepEqual(
      back.data.map((e) => e.id),
      items.slice(14_999, 15_099).map((e) => e.id),
    )
  })

  test('a type filter pages through exactly the events of that type, deep into 12,000 events', {
    timeout: 60_000,
  }, async () => {
    const { items } = await walkAll('/v1/events?type=card.created', 100)
    assert.equal(items.length, EVENTS / 3)
    assert.ok(items.every((e) => e.type === 'card.created'))
    assert.equal(new Set(items.map((e) => e.id)).size, items.length)
    for (let i = 1; i < items.length; i++)
      assert.ok(items[i - 1].id > items[i].id, `events out of order at ${i}`)
  })

  test('a prefix filter pages through the events of every type of the prefix, merged in order, forwards and backwards', {
    timeout: 60_000,
  }, async () => {
    const { items, cursors } = await walkAll('/v1/events?type=card.*', 100)
    assert.equal(items.length, (EVENTS * 2) / 3)
    assert.ok(items.every((e) => e.type === 'card.created' || e.type === 'card.frozen'))
    assert.equal(new Set(items.map((e) => e.id)).size, items.length)
    for (let i = 1; i < items.length; i++)
      assert.ok(items[i - 1].id > items[i].id, `events out of order at ${i}`)
    const back = await page(
      `/v1/events?type=card.*&limit=100&ending_before=${encodeURIComponent(cursors[40])}`,
    )
    assert.deepEqual(
      back.data.map((e) => e.id),
      items.slice(3_999, 4_099).map((e) => e.id),
    )
  })
})
