/**
 * Every list filter has an index that returns its rows in list order, so a page costs the same on a year of data as
 * on an empty database (docs/platform.md, "List filters and their indexes"). Each table gets thousands of rows
 * written straight in SQL, the filtered values rare (one row in 200), and is analyzed; then each list is requested
 * through the API while the SQL the app sends to PostgreSQL is captured (the `pg` client's `query`, below the repos,
 * so what is explained is exactly what ran), and each captured list statement is run again under
 * `EXPLAIN (ANALYZE, FORMAT JSON)`: once with its parameters (the plan for these values), once as a prepared statement
 * after a few executions (the plan a named statement settles on, as the app names its statements). A plan passes
 * when it reads the table only through an index, sorts nothing (a merge of per-value ranges needs no sort), and each
 * scan of the table reads at most about a page: without the indexes, a rare status walked the scope index past
 * thousands of rows it then threw away.
 *
 * PostgreSQL only: the plans are PostgreSQL's (PGlite runs the same statements, with its own tiny-table plans).
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type pg from 'pg'
import { PLAN_PER_CALL } from '../../src/db/client.js'
import { idHeadAt } from '../../src/lib/ids.js'
import { SCOPES } from '../../src/modules/oauth/scopes.js'
import { createTenant, type TestApp } from '../helpers/app.js'
import {
  captureWhile,
  copyRows,
  flatten,
  type PlanNode,
  settledPlan,
  withCapturingApp,
} from '../helpers/plans.js'
import { MERCHANT } from '../authorizations/support.js'
import { attest, cardBody, issuedCard, makeAccount, makeCardholder } from '../cards/support.js'
import { completedOrder, packageFor } from '../esim/support.js'

const skip = !process.env.DATABASE_URL && 'PostgreSQL only: the plans of the list queries'
const BIG = 10_000
const SMALL = 3_000
/** The most rows one scan of the table may read (returned plus filtered away) for one page of 25. */
const PAGE_READ = 60

let t: TestApp
let token: string
/**
 * Tokens whose scopes read some event types only: without transactions:read (all but a few rare types), without
 * accounts:read (all but the type of the newest 6,000 events), with transactions:read alone (rare types only).
 */
const narrow: { rareHidden?: string; newestHidden?: string; disputesOnly?: string } = {}
let admin: pg.Client
const ids: Record<string, string> = {}

/** `count` copies of one row of `table` (its `id` is `templateId`), each with the columns of `overrides` (SQL over g = 1…count). */
const copies = (
  table: string,
  templateId: string,
  count: number,
  overrides: Record<string, string>,
) => copyRows(admin, table, templateId, count, overrides)

/** An id of `prefix` older than any the API made (their time part starts with 01), unique per g. */
const seedId = (prefix: string, g = 'g') => `'${prefix}_00' || lpad(${g}::text, 24, '0')`
/** The value `rare` for one row in 200, `other` for the rest (and `third`, when given, for another one in 200). */
const rare = (rareValue: string, other: string, third?: string) =>
  `CASE WHEN g % 200 = 0 THEN '${rareValue}'${third ? ` WHEN g % 200 = 100 THEN '${third}'` : ''} ELSE '${other}' END`

withCapturingApp(
  skip,
  async (fixture) => {
    ;({ t, admin } = fixture)
    const tenant = await createTenant(t)
    token = await tenant.token()
    narrow.rareHidden = await tenant.token(
      SCOPES.filter((s) => s !== 'transactions:read').join(' '),
    )
    narrow.newestHidden = await tenant.token(SCOPES.filter((s) => s !== 'accounts:read').join(' '))
    narrow.disputesOnly = await tenant.token('transactions:read')
    const ok = async (method: string, url: string, body?: unknown, status = 200) => {
      const res = await t.api(token, method, url, body)
      assert.equal(res.statusCode, status, `${method} ${url}: ${res.body}`)
      return res.json()
    }

    // One of each object through the API: the templates the rows below copy, and the parents the parent filters name.
    const endpoint = await ok(
      'POST',
      '/v1/webhook_endpoints',
      { url: 'http://127.0.0.1:9/hook', enabled_events: ['*'] },
      201,
    )
    const holder = await makeCardholder(t, token)
    await attest(t, token, holder.id, 'approved', true)
    const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
    await ok('POST', `/v1/accounts/${account.id}/credit`, { amount: 100_000 })
    const card = await issuedCard(t, token, cardBody(holder.id, account.id))
    const auth = await ok(
      'POST',
      '/v1/simulate/authorizations',
      { card_id: card.id, amount: 3000, currency: 'USD', merchant: MERCHANT },
      201,
    )
    const capture = await ok('POST', `/v1/simulate/authorizations/${auth.id}/capture`, {}, 201)
    await ok('POST', `/v1/simulate/transactions/${capture.id}/settle`)
    const dispute = await ok(
      'POST',
      '/v1/disputes',
      {
        transaction_id: capture.id,
        reason: 'not_received',
        amount: 1000,
        evidence: { explanation: 'x' },
      },
      201,
    )
    const networkToken = await ok(
      'POST',
      '/v1/simulate/network_tokens',
      { card_id: card.id, wallet: 'apple_pay' },
      201,
    )
    const authentication = await ok(
      'POST',
      '/v1/simulate/authentications',
      { card_id: card.id, amount: 100, currency: 'USD', merchant: MERCHANT },
      201,
    )
    const now = t.clock.now()
    const report = await ok(
      'POST',
      '/v1/reports',
      {
        type: 'transactions',
        from: new Date(now.getTime() - 86_400_000).toISOString(),
        to: now.toISOString(),
      },
      201,
    )
    await ok('POST', '/v1/simulate/esim/provisioning', { latency_ms: 0 })
    const order = await completedOrder(t, token, { package_id: (await packageFor(t, token)).id })
    const delivery = await admin.query<{ id: string }>(
      'SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 LIMIT 1',
      [endpoint.id],
    )
    Object.assign(ids, {
      endpoint: endpoint.id,
      holder: holder.id,
      account: account.id,
      card: card.id,
      auth: auth.id,
      program: tenant.programs.full.id,
    })

    // Thousands of each, the filtered values rare. Parents of the copies are made-up ids (no foreign key) or, where the
    // schema has one, the copied cards: the parents above keep their own few rows.
    await copies('cards', card.id, BIG, {
      id: seedId('card'),
      status: rare('closed', 'active', 'frozen'),
      holds_card_slot: 'false',
      cardholder_id: seedId('chd'),
      account_id: seedId('acct'),
    })
    await copies('cardholders', holder.id, BIG, {
      id: seedId('chd'),
      email: `'seed' || g || '@example.com'`,
      phone_number: 'NULL',
      reference: `'ref-' || g`,
      kyc_status: rare('rejected', 'approved'),
      // One in 200 expired and announced; three expired with the announcement still due; half with an expiry to come.
      kyc_expires_at: `CASE WHEN g % 200 = 100 OR g IN (7, 13, 19) THEN now() - interval '1 day' WHEN g % 2 = 0 THEN now() + interval '300 days' END`,
      kyc_expiry_notified: 'g % 200 = 100',
    })
    await copies('accounts', account.id, BIG, { id: seedId('acct'), cardholder_id: seedId('chd') })
    await copies('authorizations', auth.id, BIG, {
      id: seedId('auth'),
      status: `CASE WHEN g % 200 = 0 THEN 'reversed' WHEN g % 10 = 1 THEN 'pending' ELSE 'closed' END`,
      card_id: seedId('card'),
      account_id: seedId('acct'),
    })
    await copies('transactions', capture.id, BIG, {
      id: seedId('txn'),
      type: rare('refund', 'capture'),
      status: `CASE WHEN g % 200 = 100 THEN 'refunded' WHEN g % 50 = 1 THEN 'pending' ELSE 'settled' END`,
      card_id: seedId('card'),
      account_id: seedId('acct'),
      authorization_id: seedId('auth'),
    })
    await copies('network_tokens', networkToken.id, SMALL, {
      id: seedId('ntok'),
      card_id: seedId('card'),
      wallet: rare('samsung_pay', 'apple_pay'),
      status: rare('requested', 'active', 'suspended'),
    })
    await copies('disputes', dispute.id, SMALL, {
      id: seedId('dsp'),
      status: rare('won', 'lost'),
      card_id: seedId('card'),
      transaction_id: seedId('txn'),
    })
    await copies('authentications', authentication.id, SMALL, {
      id: seedId('tdsa'),
      card_id: seedId('card'),
      status: rare('declined', 'approved'),
    })
    await copies('reports', report.id, SMALL, {
      id: seedId('rpt'),
      type: rare('esim_orders', 'transactions'),
      status: rare('pending', 'succeeded', 'failed'),
    })
    await copies('esim_orders', order.id, SMALL, {
      id: seedId('esord'),
      reference: `'seed-' || g`,
      status: rare('unsettled', 'completed', 'failed'),
      cardholder_id: seedId('chd'),
    })
    // Clients of the tenant (a few revoked) among other organizations' ones.
    await copies('organizations', tenant.organizationId, 200, { id: seedId('org') })
    await copies('oauth_clients', tenant.clientId, SMALL, {
      id: seedId('oc'),
      organization_id: `CASE WHEN g % 2 = 0 THEN organization_id ELSE ${seedId('org', '(g % 200 + 1)')} END`,
      status: `CASE WHEN g % 20 = 0 THEN 'revoked' ELSE 'active' END`,
    })

    // Events a second apart up to now (ids made at their time, as the app makes them), one delivery each to the endpoint.
    const start = now.getTime() - BIG * 1000
    // (Made here rather than with newId, which never goes back in time within a process: these are in the past.)
    const eventIds = Array.from(
      { length: BIG },
      (_, i) => `${idHeadAt('evt', new Date(start + i * 1000))}${String(i).padStart(16, '0')}`,
    )
    // Rare dispute types throughout; card.created makes the oldest 40 % and then stops, as a type frequent in a
    // program's first months and absent from its newest events (the statistics still call it frequent).
    const types = eventIds.map((_, i) =>
      i % 200 === 0
        ? 'dispute.created'
        : i % 200 === 100
          ? 'dispute.updated'
          : i < BIG * 0.4
            ? 'card.created'
            : 'account.credited',
    )
    await admin.query(
      `INSERT INTO events (id, organization_id, environment, type, api_version, data, created_at)
    SELECT x.id, $3, 'sandbox', x.type, '2026-01-01', json_build_object('object', json_build_object('id', 'obj_' || x.n)), to_timestamp(($4::float8 + (x.n - 1) * 1000) / 1000)
    FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS x(id, type, n)`,
      [eventIds, types, tenant.organizationId, start],
    )
    await admin.query(
      `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, organization_id, environment, event_type, status, attempts, failures,
      next_attempt_at, created_at, updated_at)
    SELECT 'whd_00' || lpad(x.n::text, 24, '0'), x.id, d.endpoint_id, d.organization_id, d.environment, x.type,
      CASE WHEN x.n % 200 = 0 THEN 'failed' WHEN x.n % 200 = 100 THEN 'canceled' WHEN x.n % 200 = 50 THEN 'pending' ELSE 'delivered' END,
      1, 0, d.next_attempt_at, d.created_at, d.updated_at
    FROM webhook_deliveries AS d, unnest($1::text[], $2::text[]) WITH ORDINALITY AS x(id, type, n) WHERE d.id = $3`,
      [eventIds, types, delivery.rows[0].id],
    )
    ids.oldEventTime = new Date(start + 500_000).toISOString()
    ids.recentEventTime = new Date(now.getTime() - 5_000).toISOString()

    await admin.query('ANALYZE')
  },
  { app: { env: { SVC_RELEASES: 'three_d_secure' } }, timeout: 120_000 },
)

/** The plans of the list statements on `table` the app ran for one request (each run again under EXPLAIN ANALYZE). */
async function plansOf(
  url: string,
  table: string,
  caller = token,
): Promise<{ text: string; plan: PlanNode }[]> {
  let res: Awaited<ReturnType<TestApp['api']>> | undefined
  const lists = (
    await captureWhile(
      async () => {
        res = await t.api(caller, 'GET', url)
      },
      new RegExp(`from "${table}"`, 'i'),
    )
  ).filter((q) => /order by/i.test(q.text) && /limit/i.test(q.text))
  assert.equal(res!.statusCode, 200, `${url}: ${res!.body}`)
  assert.ok(lists.length > 0, `${url}: no list statement on ${table} captured`)
  const out: { text: string; plan: PlanNode }[] = []
  for (const q of lists) {
    // The plan for these values (what an unnamed statement gets) ...
    const custom = await admin.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${q.text}`, q.values)
    out.push({
      text: `custom plan: ${q.text}`,
      plan: (custom.rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0].Plan,
    })
    // ... and the one a named statement settles on after its first executions (the app names its statements, except
    // those marked to be planned per call): a generic plan, costed for an average value, when PostgreSQL finds it no
    // costlier than the plans for the values seen.
    if (q.text.includes(PLAN_PER_CALL)) continue
    out.push({ text: `cached plan: ${q.text}`, plan: await settledPlan(admin, q) })
  }
  return out
}

/**
 * Sorts allowed, each over rows few by nature: one unique key's; the expiries still due (normally none); the eSIM
 * orders in flight or unsettled of the whole platform (the settlement sweep keeps them few), which PostgreSQL may
 * prefer to the status index while there are fewer of them than a page walk would read.
 */
const SORTED_INPUTS = new Set([
  'esim_orders_reference',
  'cardholders_kyc_expiry_due',
  'esim_orders_open',
  // ... and the merge of one page per value where each value's range is read in its index's `(value, id)` order
  // (`inIndexOrder`): at most a page from each range (the read check below bounds every scan).
  'events_scope_type',
  'webhook_deliveries_endpoint_status',
  'webhook_deliveries_endpoint_type',
])

async function assertIndexed(
  url: string,
  table: string,
  indexes: string[] = [],
  caller = token,
): Promise<void> {
  for (const { text, plan } of await plansOf(url, table, caller)) {
    const nodes = flatten(plan)
    const scans = nodes.filter((n) => n['Relation Name'] === table)
    const where = `${url}\n${text}\n${JSON.stringify(plan, null, 1)}`
    assert.equal(
      scans.filter((n) => n['Node Type'] === 'Seq Scan').length,
      0,
      `a sequential scan of ${table}: ${where}`,
    )
    for (const sort of nodes.filter((n) => n['Node Type'] === 'Sort')) {
      const inputs = flatten(sort)
        .map((n) => n['Index Name'])
        .filter((i) => i !== undefined)
      assert.ok(
        inputs.length > 0 && inputs.every((i) => SORTED_INPUTS.has(i)),
        `a sort over ${table}: ${where}`,
      )
    }
    for (const scan of scans) {
      const read =
        ((scan['Actual Rows'] ?? 0) +
          (scan['Rows Removed by Filter'] ?? 0) +
          (scan['Rows Removed by Index Recheck'] ?? 0)) *
        (scan['Actual Loops'] ?? 1)
      assert.ok(read <= PAGE_READ, `a scan of ${table} read ${read} rows for one page: ${where}`)
    }
    const used = new Set(scans.map((n) => n['Index Name']))
    for (const index of indexes) assert.ok(used.has(index), `${index} not used: ${where}`)
  }
}

describe('every list filter reads an index in list order', { skip }, () => {
  test("cards: the scope, a rare status, a cardholder, an account with a status, the parents' card lists", async () => {
    await assertIndexed('/v1/cards', 'cards')
    await assertIndexed('/v1/cards?status=closed', 'cards', ['cards_status'])
    await assertIndexed('/v1/cards?status=frozen', 'cards', ['cards_status'])
    await assertIndexed(`/v1/cards?cardholder_id=${ids.holder}&status=closed`, 'cards', [
      'cards_cardholder',
    ])
    await assertIndexed(`/v1/cards?account_id=${ids.account}&status=active`, 'cards', [
      'cards_account',
    ])
    await assertIndexed(`/v1/cardholders/${ids.holder}/cards`, 'cards', ['cards_cardholder'])
    await assertIndexed(`/v1/accounts/${ids.account}/cards`, 'cards', ['cards_account'])
  })

  test('cardholders: each KYC status, expired (announced and due), a reference', async () => {
    await assertIndexed('/v1/cardholders', 'cardholders')
    await assertIndexed('/v1/cardholders?kyc_status=rejected', 'cardholders', [
      'cardholders_kyc_status',
    ])
    await assertIndexed('/v1/cardholders?kyc_status=not_started', 'cardholders', [
      'cardholders_kyc_status',
    ])
    await assertIndexed('/v1/cardholders?kyc_status=approved', 'cardholders')
    await assertIndexed('/v1/cardholders?kyc_status=expired', 'cardholders', [
      'cardholders_kyc_expired',
      'cardholders_kyc_expiry_due',
    ])
    await assertIndexed('/v1/cardholders?reference=ref-77&kyc_status=approved', 'cardholders', [
      'cardholders_reference',
    ])
    const expired = (
      await t.api(token, 'GET', '/v1/cardholders?kyc_status=expired&limit=100')
    ).json().data as any[]
    assert.equal(expired.length, BIG / 200 + 3, 'the announced expiries and the three still due')
    assert.ok(expired.every((c: any) => c.kyc_status === 'expired'))
    assert.deepEqual(
      expired.map((c) => c.id),
      expired
        .map((c) => c.id)
        .sort()
        .reverse(),
      'newest first across both',
    )
  })

  test('accounts: a cardholder, a program', async () => {
    await assertIndexed('/v1/accounts', 'accounts')
    await assertIndexed(`/v1/accounts?cardholder_id=${ids.holder}`, 'accounts', [
      'accounts_cardholder',
    ])
    await assertIndexed(
      `/v1/accounts?program_id=${ids.program}&cardholder_id=chd_00${'42'.padStart(24, '0')}`,
      'accounts',
    )
  })

  test("authorizations: a rare status, a card, an account's pending ones (the console's account page)", async () => {
    await assertIndexed('/v1/authorizations?status=reversed', 'authorizations', [
      'authorizations_status',
    ])
    await assertIndexed('/v1/authorizations?status=pending', 'authorizations', [
      'authorizations_status',
    ])
    await assertIndexed(`/v1/authorizations?card_id=${ids.card}&status=closed`, 'authorizations', [
      'authorizations_card',
    ])
    await assertIndexed(
      `/v1/authorizations?account_id=${ids.account}&status=pending`,
      'authorizations',
      ['authorizations_account_pending'],
    )
  })

  test('transactions: type, status, both, an authorization, a card', async () => {
    await assertIndexed('/v1/transactions?type=refund', 'transactions', [
      'transactions_type_status',
    ])
    await assertIndexed('/v1/transactions?status=refunded', 'transactions', [
      'transactions_type_status',
    ])
    await assertIndexed('/v1/transactions?type=refund&status=pending', 'transactions', [
      'transactions_type_status',
    ])
    await assertIndexed(`/v1/transactions?authorization_id=${ids.auth}`, 'transactions', [
      'transactions_authorization',
    ])
    await assertIndexed(`/v1/transactions?card_id=${ids.card}&type=capture`, 'transactions', [
      'transactions_card',
    ])
    const refunds = (await t.api(token, 'GET', '/v1/transactions?type=refund&limit=100')).json()
    assert.equal(refunds.data.length, BIG / 200)
    assert.deepEqual(
      refunds.data.map((x: any) => x.id),
      refunds.data
        .map((x: any) => x.id)
        .sort()
        .reverse(),
      'newest first across the merged statuses',
    )
  })

  test('network tokens, disputes, 3-D Secure authentications, reports, eSIM orders, OAuth clients', async () => {
    await assertIndexed('/v1/network_tokens?wallet=samsung_pay', 'network_tokens', [
      'network_tokens_wallet_status',
    ])
    await assertIndexed('/v1/network_tokens?status=suspended', 'network_tokens', [
      'network_tokens_wallet_status',
    ])
    await assertIndexed('/v1/network_tokens?wallet=apple_pay&status=requested', 'network_tokens', [
      'network_tokens_wallet_status',
    ])
    await assertIndexed(`/v1/network_tokens?card_id=${ids.card}&status=active`, 'network_tokens', [
      'network_tokens_card',
    ])
    await assertIndexed('/v1/disputes?status=won', 'disputes', ['disputes_status'])
    await assertIndexed(`/v1/disputes?card_id=${ids.card}`, 'disputes', ['disputes_card'])
    await assertIndexed('/v1/authentications?status=declined', 'authentications', [
      'authentications_status',
    ])
    await assertIndexed(`/v1/authentications?card_id=${ids.card}`, 'authentications', [
      'authentications_card',
    ])
    await assertIndexed('/v1/reports?type=esim_orders', 'reports', ['reports_type_status'])
    await assertIndexed('/v1/reports?status=failed', 'reports', ['reports_type_status'])
    await assertIndexed('/v1/reports?type=transactions&status=pending', 'reports', [
      'reports_type_status',
    ])
    await assertIndexed('/v1/esim/orders?status=unsettled', 'esim_orders', ['esim_orders_status'])
    await assertIndexed('/v1/esim/orders?status=failed', 'esim_orders', ['esim_orders_status'])
    await assertIndexed('/v1/esim/orders?trigger=auto', 'esim_orders', ['esim_orders_trigger'])
    await assertIndexed('/v1/esim/orders?reference=seed-77', 'esim_orders', [
      'esim_orders_reference',
    ])
    await assertIndexed('/v1/oauth_clients', 'oauth_clients')
    await assertIndexed('/v1/oauth_clients?status=revoked', 'oauth_clients', [
      'oauth_clients_status',
    ])
  })

  test('events: a rare type, a type absent from the newest events, deep pages, a prefix, creation windows far from now', async () => {
    await assertIndexed('/v1/events?type=dispute.created', 'events', ['events_scope_type'])
    // Frequent by the statistics, but the newest 6,000 events are of other types: the type index, not a walk past them.
    await assertIndexed('/v1/events?type=card.created', 'events', ['events_scope_type'])
    // Forty pages on, and back one page from there: each positioned by the cursor in the type's range.
    let cursor = ''
    const seen: string[] = []
    for (let i = 0; i < 40; i++) {
      const page = (
        await t.api(token, 'GET', `/v1/events?type=card.created&limit=25${cursor}`)
      ).json()
      assert.equal(page.data.length, 25)
      assert.ok(page.data.every((e: any) => e.type === 'card.created'))
      seen.push(...page.data.map((e: any) => e.id))
      cursor = `&starting_after=${page.next_cursor}`
    }
    assert.deepEqual(seen, [...seen].sort().reverse(), 'newest first, no event twice')
    assert.equal(new Set(seen).size, 1000)
    await assertIndexed(`/v1/events?type=card.created${cursor}`, 'events', ['events_scope_type'])
    const next = (
      await t.api(token, 'GET', `/v1/events?type=card.created&limit=25${cursor}`)
    ).json()
    assert.ok(next.data[0].id < seen[seen.length - 1], 'the 41st page follows the 40th')
    // Backwards from the 41st page's end: the 25 events before its last one, the 40th page's last among them.
    const back = (
      await t.api(
        token,
        'GET',
        `/v1/events?type=card.created&limit=25&ending_before=${next.next_cursor}`,
      )
    ).json()
    assert.deepEqual(
      back.data.map((e: any) => e.id),
      [seen[seen.length - 1], ...next.data.slice(0, 24).map((e: any) => e.id)],
    )
    await assertIndexed(
      `/v1/events?type=card.created&ending_before=${next.next_cursor}`,
      'events',
      ['events_scope_type'],
    )
    await assertIndexed('/v1/events?type=dispute.*', 'events', ['events_scope_type'])
    await assertIndexed(`/v1/events?created[gt]=${ids.recentEventTime}`, 'events')
    await assertIndexed(`/v1/events?created[lt]=${ids.oldEventTime}`, 'events')
    await assertIndexed(`/v1/events?type=dispute.*&created[lte]=${ids.oldEventTime}`, 'events', [
      'events_scope_type',
    ])
    const old = (
      await t.api(token, 'GET', `/v1/events?created[lt]=${ids.oldEventTime}&limit=100`)
    ).json()
    assert.equal(old.data.length, 100)
    assert.ok(old.data.every((e: any) => e.created_at < ids.oldEventTime))
  })

  test('events of a token that reads some types only: past a few rare ones, else one range per readable type', async () => {
    // Without transactions:read the types left out are rare: the scope's next events (as unfiltered), theirs dropped.
    await assertIndexed('/v1/events', 'events', [], narrow.rareHidden)
    const rare = (await t.api(narrow.rareHidden!, 'GET', '/v1/events?limit=100')).json()
    assert.equal(rare.data.length, 100)
    assert.ok(rare.data.every((e: any) => !/^(dispute|authorization|transaction)\./.test(e.type)))
    // Without accounts:read the newest 6,000 events (account.credited) are not the token's: after one window of them,
    // the readable types' ranges (each scan within a page's read), not a walk past them all.
    await assertIndexed('/v1/events', 'events', [], narrow.newestHidden)
    const plans = await plansOf('/v1/events', 'events', narrow.newestHidden)
    const indexes = plans.map((p) => flatten(p.plan).map((n) => n['Index Name']))
    assert.ok(
      indexes.some((used) => used.includes('events_scope_type')),
      "the readable types' ranges were not read",
    )
    const most = (await t.api(narrow.newestHidden!, 'GET', '/v1/events?limit=100')).json()
    assert.equal(most.data.length, 100)
    assert.ok(most.data.every((e: any) => e.type !== 'account.credited'))
    const ids = most.data.map((e: any) => e.id)
    assert.deepEqual(ids, [...ids].sort().reverse(), 'newest first across the ranges')
    // transactions:read alone: the rare disputes (and the few authorizations and transactions), deep pages included.
    await assertIndexed('/v1/events', 'events', ['events_scope_type'], narrow.disputesOnly)
    const first = (await t.api(narrow.disputesOnly!, 'GET', '/v1/events?limit=25')).json()
    assert.equal(first.data.length, 25)
    const types = first.data.map((e: any) => e.type)
    assert.ok(
      types.every((type: string) => /^(dispute|authorization|transaction)\./.test(type)),
      JSON.stringify(types),
    )
    const next = `/v1/events?starting_after=${first.next_cursor}`
    await assertIndexed(next, 'events', ['events_scope_type'], narrow.disputesOnly)
  })

  test('the webhook delivery log: a rare status, failed with canceled, an event type, a prefix', async () => {
    const log = `/v1/webhook_endpoints/${ids.endpoint}/deliveries`
    await assertIndexed(`${log}?status=pending`, 'webhook_deliveries', [
      'webhook_deliveries_endpoint_status',
    ])
    await assertIndexed(`${log}?status=failed`, 'webhook_deliveries', [
      'webhook_deliveries_endpoint_status',
    ])
    await assertIndexed(`${log}?event_type=dispute.created`, 'webhook_deliveries', [
      'webhook_deliveries_endpoint_type',
    ])
    await assertIndexed(`${log}?event_type=dispute.*`, 'webhook_deliveries', [
      'webhook_deliveries_endpoint_type',
    ])
    const failed = (await t.api(token, 'GET', `${log}?status=failed&limit=100`)).json()
    assert.equal(failed.data.length, 100)
    assert.ok(failed.data.every((d: any) => d.status === 'failed'))
  })
})
