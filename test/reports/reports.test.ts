import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { REPORT_LIMITS } from '../../src/modules/reports/generate.js'
import { expectError } from '../helpers/api.js'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { expectApproved, fundedCard, post, runJobs } from '../authorizations/support.js'
import { completedOrder, esimFixture, packageFor, type EsimFixture } from '../esim/support.js'

let t: TestApp
let tenant: TestClient
let token: string
let fx: EsimFixture

withTenant(async (fixture) => {
  ;({ t, tenant, token } = fixture)
  fx = await esimFixture(t)
})

/** A window of one hour around now: everything the test just made falls inside it. */
function aroundNow(): { from: string; to: string } {
  const now = t.clock.now().getTime()
  return {
    from: new Date(now - 30 * 60_000).toISOString(),
    to: new Date(now + 30 * 60_000).toISOString(),
  }
}

async function createReport(body: Record<string, unknown>, as = token): Promise<any> {
  const res = await t.api(as, 'POST', '/v1/reports', body)
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** Creates a report, runs the job queue and answers the finished report. */
async function finishedReport(body: Record<string, unknown>, as = token): Promise<any> {
  const created = await createReport(body, as)
  await runJobs(t)
  const res = await t.api(as, 'GET', `/v1/reports/${created.id}`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

/** The CSV of a succeeded report as header names and rows of named fields. */
async function download(
  reportId: string,
  as = token,
): Promise<{ raw: string; rows: Record<string, string>[] }> {
  const res = await t.api(as, 'GET', `/v1/reports/${reportId}/download`)
  assert.equal(res.statusCode, 200, res.body)
  assert.match(String(res.headers['content-type']), /^text\/csv/)
  assert.match(
    String(res.headers['content-disposition']),
    new RegExp(`attachment; filename="${reportId}\\.csv"`),
  )
  const [header, ...lines] = res.body.trimEnd().split('\n')
  const names = header.split(',')
  return {
    raw: res.body,
    rows: lines.map((line) => Object.fromEntries(splitCsv(line).map((v, i) => [names[i], v]))),
  }
}

/** RFC 4180 fields of one line (no line breaks inside fields in these tests). */
function splitCsv(line: string): string[] {
  const fields: string[] = []
  let cur = ''
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const c = line[i]
    if (quoted && c === '"' && line[i + 1] === '"') {
      cur += '"'
      i++
    } else if (c === '"') quoted = !quoted
    else if (c === ',' && !quoted) {
      fields.push(cur)
      cur = ''
    } else cur += c
  }
  fields.push(cur)
  return fields
}

describe('creating and reading reports', () => {
  test('a report is created pending with no file, then the job makes it succeeded with row_count and download_url', async () => {
    const created = await createReport({ type: 'ledger', ...aroundNow() })
    assert.match(created.id, /^rpt_[0-9A-Z]{26}$/)
    assert.deepEqual(
      [
        created.object,
        created.type,
        created.status,
        created.row_count,
        created.download_url,
        created.completed_at,
      ],
      ['report', 'ledger', 'pending', null, null, null],
    )
    expectError(
      await t.api(token, 'GET', `/v1/reports/${created.id}/download`),
      422,
      'report_not_ready',
    )

    await runJobs(t)
    const done = (await t.api(token, 'GET', `/v1/reports/${created.id}`)).json()
    assert.equal(done.status, 'succeeded')
    assert.equal(typeof done.row_count, 'number')
    assert.equal(done.download_url, `http://svc.test/v1/reports/${created.id}/download`)
    assert.ok(done.completed_at)
    const file = await download(created.id)
    assert.equal(Buffer.byteLength(file.raw), done.size_bytes)
    assert.equal(file.rows.length, done.row_count)
  })

  test("the ledger report lists the window's entries oldest first with signed amounts and balances after each, formula-like text neutralised", async () => {
    const f = await fundedCard(t, tenant, token, 0)
    await post(t, token, `/v1/accounts/${f.account.id}/credit`, {
      amount: 5_000,
      reference: '=HYPERLINK("x")',
      client_transaction_id: 'rep-credit-1',
    })
    await post(t, token, `/v1/accounts/${f.account.id}/debit`, {
      amount: 1_200,
      reference: 'payout, weekly',
    })
    const report = await finishedReport({ type: 'ledger', ...aroundNow() })
    const mine = (await download(report.id)).rows.filter((r) => r.account_id === f.account.id)
    assert.deepEqual(
      mine.map((r) => [
        r.type,
        r.amount,
        r.currency,
        r.ledger_balance_after,
        r.available_balance_after,
      ]),
      [
        ['credit', '5000', 'USD', '5000', '5000'],
        ['debit', '-1200', 'USD', '3800', '3800'],
      ],
    )
    assert.equal(
      mine[0].reference,
      '\'=HYPERLINK("x")',
      'a formula is prefixed so a spreadsheet shows it as text',
    )
    assert.equal(mine[0].client_transaction_id, 'rep-credit-1')
    assert.equal(mine[1].reference, 'payout, weekly', 'a comma is kept inside a quoted field')
  })

  test('the transactions report holds captures and refunds of the window', async () => {
    const f = await fundedCard(t, tenant, token, 10_000)
    const auth = await expectApproved(t, token, f.card.id, 2_500)
    const capture = await post(t, token, `/v1/simulate/authorizations/${auth.id}/capture`, {}, 201)
    await post(t, token, `/v1/simulate/transactions/${capture.id}/settle`)
    const refund = await post(
      t,
      token,
      `/v1/transactions/${capture.id}/refund`,
      { amount: 500 },
      201,
    )
    const report = await finishedReport({ type: 'transactions', ...aroundNow() })
    const rows = (await download(report.id)).rows.filter((r) => r.card_id === f.card.id)
    assert.deepEqual(
      rows.map((r) => [r.id, r.type, r.amount, r.currency, r.authorization_id]),
      [
        [capture.id, 'capture', '2500', 'USD', auth.id],
        [refund.id, 'refund', '500', 'USD', auth.id],
      ],
    )
    assert.equal(rows[1].original_transaction_id, capture.id)
  })

  test('the esim_orders report bills orders without an account to the organization', async () => {
    const pkg = await packageFor(t, fx.token)
    const order = await completedOrder(t, fx.token, {
      package_id: pkg.id,
      cardholder_id: fx.cardholder.id,
    })
    const report = await finishedReport({ type: 'esim_orders', ...aroundNow() }, fx.token)
    const row = (await download(report.id, fx.token)).rows.find((r) => r.id === order.id)
    assert.ok(row, "the order is in its organization's report")
    assert.deepEqual(
      [
        row.trigger,
        row.status,
        row.package_id,
        row.esim_id,
        row.billed_to,
        row.price,
        row.currency,
        row.charged_amount,
        row.charged_currency,
        row.fx_rate,
        row.reference,
      ],
      [
        'manual',
        'completed',
        pkg.id,
        order.esim_id,
        'organization',
        String(pkg.price),
        pkg.currency,
        '',
        '',
        '',
        order.reference,
      ],
    )
  })

  test('rows outside [from, to) and rows of other organizations are left out', async () => {
    const f = await fundedCard(t, tenant, token, 700)
    const now = t.clock.now().getTime()
    const before = await finishedReport({
      type: 'ledger',
      from: new Date(now - 3_600_000).toISOString(),
      to: new Date(now - 60_000).toISOString(),
    })
    assert.equal(
      (await download(before.id)).rows.filter((r) => r.account_id === f.account.id).length,
      0,
    )
    const other = await finishedReport({ type: 'ledger', ...aroundNow() }, fx.token)
    assert.equal(
      (await download(other.id, fx.token)).rows.filter((r) => r.account_id === f.account.id).length,
      0,
    )
    const mine = await finishedReport({ type: 'ledger', ...aroundNow() })
    assert.equal(
      (await download(mine.id)).rows.filter((r) => r.account_id === f.account.id).length,
      1,
    )
  })

  test('a bare date means midnight UTC', async () => {
    const created = await createReport({
      type: 'transactions',
      from: '2026-01-01',
      to: '2026-02-01',
    })
    assert.deepEqual(
      [created.from, created.to],
      ['2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z'],
    )
  })

  test('a window with more rows than a report holds fails as too_many_rows and has no file', async () => {
    const saved = REPORT_LIMITS.maxRows
    REPORT_LIMITS.maxRows = 1
    try {
      const f = await fundedCard(t, tenant, token, 300)
      await post(t, token, `/v1/accounts/${f.account.id}/credit`, { amount: 1 })
      const report = await finishedReport({ type: 'ledger', ...aroundNow() })
      assert.deepEqual(
        [report.status, report.failure_reason, report.row_count, report.download_url],
        ['failed', 'too_many_rows', null, null],
      )
      const err = expectError(
        await t.api(token, 'GET', `/v1/reports/${report.id}/download`),
        422,
        'report_not_ready',
      )
      assert.match(err.message, /too_many_rows/)
    } finally {
      REPORT_LIMITS.maxRows = saved
    }
  })

  test('reports list newest first, filter by type and status, and paginate', async () => {
    const a = await createReport({ type: 'esim_orders', ...aroundNow() })
    const b = await createReport({ type: 'esim_orders', ...aroundNow() })
    const list = (
      await t.api(token, 'GET', '/v1/reports?type=esim_orders&status=pending&limit=1')
    ).json()
    assert.equal(list.object, 'list')
    assert.equal(list.url, '/v1/reports')
    assert.deepEqual(
      list.data.map((r: any) => r.id),
      [b.id],
    )
    assert.equal(list.has_more, true)
    const next = (
      await t.api(
        token,
        'GET',
        `/v1/reports?type=esim_orders&status=pending&limit=1&starting_after=${list.next_cursor}`,
      )
    ).json()
    assert.deepEqual(
      next.data.map((r: any) => r.id),
      [a.id],
    )
    await runJobs(t)
    const pending = (await t.api(token, 'GET', '/v1/reports?status=pending')).json()
    assert.equal(pending.data.length, 0)
  })
})

describe('report refusals', () => {
  test('bad windows and types are refused with invalid_parameter naming the field', async () => {
    const now = t.clock.now().toISOString()
    expectError(
      await t.api(token, 'POST', '/v1/reports', { type: 'ledger', from: now, to: now }),
      400,
      'invalid_parameter',
      'to',
    )
    expectError(
      await t.api(token, 'POST', '/v1/reports', {
        type: 'ledger',
        from: '2025-01-01',
        to: '2026-01-03',
      }),
      400,
      'invalid_parameter',
      'to',
    )
    expectError(
      await t.api(token, 'POST', '/v1/reports', {
        type: 'payouts',
        from: '2026-01-01',
        to: '2026-01-02',
      }),
      400,
      'invalid_parameter',
      'type',
    )
    expectError(
      await t.api(token, 'POST', '/v1/reports', {
        type: 'ledger',
        from: 'yesterday',
        to: '2026-01-02',
      }),
      400,
      'invalid_parameter',
      'from',
    )
    // Years before 1000: PostgreSQL has no year 0 and the driver would store 0001 as 2001.
    expectError(
      await t.api(token, 'POST', '/v1/reports', {
        type: 'ledger',
        from: '0000-01-01T00:00:00Z',
        to: '0000-06-01T00:00:00Z',
      }),
      400,
      'invalid_parameter',
    )
    expectError(
      await t.api(token, 'POST', '/v1/reports', {
        type: 'ledger',
        from: '0001-01-01',
        to: '2026-01-02',
      }),
      400,
      'invalid_parameter',
      'from',
    )
    expectError(
      await t.api(token, 'POST', '/v1/reports', { type: 'ledger', to: '2026-01-02' }),
      400,
      'missing_parameter',
      'from',
    )
    expectError(
      await t.api(token, 'POST', '/v1/reports', {
        type: 'ledger',
        from: '2026-01-01',
        to: '2026-01-02',
        format: 'xlsx',
      }),
      400,
      'unknown_parameter',
      'format',
    )
  })

  test('an unknown report id answers 404 report_not_found; reports need transactions:read', async () => {
    expectError(
      await t.api(token, 'GET', '/v1/reports/rpt_00000000000000000000000000'),
      404,
      'report_not_found',
    )
    expectError(
      await t.api(token, 'GET', '/v1/reports/rpt_00000000000000000000000000/download'),
      404,
      'report_not_found',
    )
    const narrow = await tenant.token('cards:read')
    expectError(
      await t.api(narrow, 'POST', '/v1/reports', {
        type: 'ledger',
        from: '2026-01-01',
        to: '2026-01-02',
      }),
      403,
      'insufficient_scope',
    )
    expectError(await t.api(narrow, 'GET', '/v1/reports'), 403, 'insufficient_scope')
  })
})
