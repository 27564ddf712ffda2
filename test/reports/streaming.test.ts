/**
 * Reports of many rows: generation writes the CSV as parts and holds at most one part of it; the download
 * streams the parts one at a time. Tens of thousands of ledger entries are inserted with one SQL statement
 * (generate_series), not through the API, in a past window nothing else in the file writes to.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { csvHeader, csvLine } from '../../src/modules/reports/csv.js'
import { generateReport, REPORT_LIMITS } from '../../src/modules/reports/generate.js'
import { partStream } from '../../src/modules/reports/part-stream.js'
import { SOURCES } from '../../src/modules/reports/sources.js'
import { makeAccount, makeCardholder, runJobs, expectError } from '../cards/support.js'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'

const ROWS = 30_000
const START = new Date('2025-03-01T00:00:00Z')
/** Entry i (1…ROWS) is created i seconds after START. */
const at = (second: number): Date => new Date(START.getTime() + second * 1000)
const ALL = { from: START, to: at(ROWS + 1) }
/** Parts small enough that the 30,000-row file (about 5 MB) is cut into dozens of them. */
const PART_BYTES = 100_000

let t: TestApp
let token: string
let scope: { organizationId: string; environment: string }
const saved = { ...REPORT_LIMITS }
const ledgerSource = SOURCES.ledger

before(async () => {
  t = await startTestApp()
  const tenant = await createTenant(t)
  token = await tenant.token()
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  scope = { organizationId: tenant.organizationId, environment: tenant.environment }
  await sql`INSERT INTO ledger_entries (id, account_id, organization_id, environment, seq, type, amount, currency,
      ledger_balance_after, held_balance_after, available_balance_after, source_id, client_transaction_id, reference, description, created_at)
    SELECT 'le_' || lpad(i::text, 26, '0'), ${account.id}, ${scope.organizationId}, ${scope.environment}, 1000 + i, 'credit', i, 'USD',
      i * 100, 0, i * 100, NULL, 'bulk-' || i, CASE WHEN i % 10 = 0 THEN '=rent, "flat" ' || i ELSE NULL END, NULL,
      ${START}::timestamptz + i * interval '1 second'
    FROM generate_series(1, ${ROWS}) AS i`.execute(t.deps.db)
  REPORT_LIMITS.partBytes = PART_BYTES
})
after(async () => {
  Object.assign(REPORT_LIMITS, saved)
  SOURCES.ledger = ledgerSource
  await t.close()
})

/** What the former buffered generator produced for the window: the header and every line joined in one string. */
async function bufferedCsv(window: { from: Date; to: Date }): Promise<string> {
  const rows = await ledgerSource.fetch(t.deps, { ...scope, ...window, limit: 1_000_000 })
  return (
    csvHeader(ledgerSource.columns) + rows.map((r) => csvLine(ledgerSource.columns, r)).join('')
  )
}

async function requestReport(window: { from: Date; to: Date }): Promise<string> {
  const res = await t.api(token, 'POST', '/v1/reports', {
    type: 'ledger',
    from: window.from.toISOString(),
    to: window.to.toISOString(),
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json().id
}

async function partsOf(
  reportId: string,
): Promise<{ generation: string; seq: number; content: string }[]> {
  const { rows } = await sql<{ generation: string; seq: number; content: string }>`
    SELECT generation, seq, content FROM report_parts WHERE report_id = ${reportId} ORDER BY generation, seq`.execute(
    t.deps.db,
  )
  return rows
}

async function reportRow(
  reportId: string,
): Promise<{ status: string; failure_reason: string | null; parts_generation: string | null }> {
  const { rows } = await sql<{
    status: string
    failure_reason: string | null
    parts_generation: string | null
  }>`
    SELECT status, failure_reason, parts_generation FROM reports WHERE id = ${reportId}`.execute(
    t.deps.db,
  )
  return rows[0]
}

/** Replaces the ledger source's fetch for one test: `onCall` runs before the n-th batch is read (and may throw). */
function interceptLedger(onCall: (n: number) => Promise<void> | void): void {
  let calls = 0
  SOURCES.ledger = {
    ...ledgerSource,
    fetch: async (deps, window) => {
      await onCall(++calls)
      return ledgerSource.fetch(deps, window)
    },
  }
}

function restoreLedger(): void {
  SOURCES.ledger = ledgerSource
}

/** The downloaded file, checked against the buffered CSV line by line and byte for byte. */
async function expectDownloadEquals(
  reportId: string,
  expected: string,
  rows: number,
): Promise<string> {
  const res = await t.api(token, 'GET', `/v1/reports/${reportId}/download`)
  assert.equal(res.statusCode, 200, res.body.slice(0, 500))
  assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8')
  assert.equal(res.headers['content-disposition'], `attachment; filename="${reportId}.csv"`)
  assert.equal(Number(res.headers['content-length']), Buffer.byteLength(expected))
  const got = res.rawPayload.toString('utf8')
  const lines = got.split('\n')
  const want = expected.split('\n')
  assert.equal(lines.at(-1), '', 'the file ends with a line break')
  assert.equal(lines.length - 2, rows, 'one line per row after the header')
  assert.equal(lines[0], want[0])
  assert.equal(lines[1], want[1])
  assert.equal(lines.at(-2), want.at(-2))
  const ids = lines.slice(1, -1).map((line) => line.slice(0, line.indexOf(',')))
  assert.equal(new Set(ids).size, rows, 'every id appears once')
  assert.ok(got === expected, 'the download is byte-identical to the buffered CSV')
  return got
}

describe('a report of many rows', () => {
  let reportId: string
  let expected: string

  before(async () => {
    expected = await bufferedCsv(ALL)
    reportId = await requestReport(ALL)
  })

  test('is generated into dozens of parts while holding at most one part of its CSV in memory', async () => {
    const result = await generateReport(t.deps, reportId)
    assert.equal(result.outcome, 'succeeded')
    assert.equal(result.rows, ROWS)
    assert.equal(result.sizeBytes, Buffer.byteLength(expected))

    const longestLine = Math.max(...expected.split('\n').map((l) => Buffer.byteLength(l) + 1))
    // A generator that builds the file in memory reaches the whole file (about 50 parts' worth) here.
    assert.ok(
      result.maxBufferedBytes <= PART_BYTES + longestLine,
      `held ${result.maxBufferedBytes} bytes at once`,
    )
    assert.ok(
      result.sizeBytes > 40 * result.maxBufferedBytes,
      `the file (${result.sizeBytes} bytes) is many times what was held`,
    )

    const parts = await partsOf(reportId)
    assert.equal(parts.length, result.parts)
    assert.ok(parts.length >= 40, `${parts.length} parts`)
    assert.deepEqual(
      parts.map((p) => p.seq),
      parts.map((_, i) => i),
    )
    assert.equal(new Set(parts.map((p) => p.generation)).size, 1)
    assert.equal((await reportRow(reportId)).parts_generation, parts[0].generation)
    for (const p of parts.slice(0, -1)) {
      const bytes = Buffer.byteLength(p.content)
      assert.ok(
        bytes >= PART_BYTES && bytes <= PART_BYTES + longestLine,
        `part ${p.seq}: ${bytes} bytes`,
      )
      assert.ok(p.content.endsWith('\n'), 'a part holds whole lines')
    }

    const report = (await t.api(token, 'GET', `/v1/reports/${reportId}`)).json()
    assert.deepEqual(
      [report.status, report.row_count, report.size_bytes],
      ['succeeded', ROWS, result.sizeBytes],
    )
    await expectDownloadEquals(reportId, expected, ROWS)
  })

  test('its download streams one part at a time, and its body is the parts joined in order', async () => {
    const { parts_generation: generation } = await reportRow(reportId)
    const parts = await partsOf(reportId)
    const stream = partStream(t.deps.db, reportId, generation!, Buffer.byteLength(expected))
    await once(stream, 'readable')
    await new Promise((resolve) => setTimeout(resolve, 50))
    assert.equal(
      stream.readableLength,
      Buffer.byteLength(parts[0].content),
      'only the first part is read before it is consumed',
    )

    const chunks: Buffer[] = []
    for await (const chunk of stream) chunks.push(chunk as Buffer)
    const joined = parts.map((p) => p.content).join('')
    assert.equal(Buffer.concat(chunks).toString('utf8'), joined)
    assert.equal(joined, expected)

    const head = await t.app.inject({
      method: 'HEAD',
      url: `/v1/reports/${reportId}/download`,
      headers: { authorization: `Bearer ${token}` },
    })
    assert.equal(head.statusCode, 200)
    assert.equal(Number(head.headers['content-length']), Buffer.byteLength(expected))
    assert.equal(head.rawPayload.length, 0)
  })
})

describe('runs that do not finish', () => {
  const FIRST_5000 = { from: START, to: at(5_001) }

  test('a generation that crashes after writing parts leaves, after the retry, one complete file without duplicated lines', async () => {
    const expected = await bufferedCsv(FIRST_5000)
    const reportId = await requestReport(FIRST_5000)
    interceptLedger((n) => {
      if (n === 4) throw new Error('worker lost mid-report')
    })
    try {
      await runJobs(t)
    } finally {
      restoreLedger()
    }
    const crashed = await partsOf(reportId)
    assert.ok(crashed.length >= 3, 'the crashed run left its parts behind')
    assert.equal((await reportRow(reportId)).status, 'pending')
    expectError(
      await t.api(token, 'GET', `/v1/reports/${reportId}/download`),
      422,
      'report_not_ready',
    )

    t.clock.advance(60_000)
    await runJobs(t)
    const row = await reportRow(reportId)
    assert.equal(row.status, 'succeeded')
    const parts = await partsOf(reportId)
    assert.deepEqual(
      [...new Set(parts.map((p) => p.generation))],
      [row.parts_generation],
      "only the finishing run's parts remain",
    )
    assert.notEqual(row.parts_generation, crashed[0].generation)
    await expectDownloadEquals(reportId, expected, 5_000)
  })

  test('a run that fails for good marks the report failed and removes every part written for it', async () => {
    const reportId = await requestReport(FIRST_5000)
    interceptLedger((n) => {
      if (n === 3) throw new Error('database unreachable')
    })
    try {
      await assert.rejects(generateReport(t.deps, reportId), /database unreachable/)
      assert.ok((await partsOf(reportId)).length > 0)
      interceptLedger((n) => {
        if (n === 3) throw new Error('database unreachable')
      })
      const last = await generateReport(t.deps, reportId, { lastAttempt: true })
      assert.equal(last.outcome, 'internal_error')
    } finally {
      restoreLedger()
    }
    assert.deepEqual(await reportRow(reportId), {
      status: 'failed',
      failure_reason: 'internal_error',
      parts_generation: null,
    })
    assert.equal((await partsOf(reportId)).length, 0)
  })

  test('a window past the row cap fails as too_many_rows and keeps no part', async () => {
    REPORT_LIMITS.maxRows = 2_500
    try {
      const reportId = await requestReport(FIRST_5000)
      assert.equal((await generateReport(t.deps, reportId)).outcome, 'too_many_rows')
      assert.equal((await reportRow(reportId)).failure_reason, 'too_many_rows')
      assert.equal((await partsOf(reportId)).length, 0)
    } finally {
      REPORT_LIMITS.maxRows = saved.maxRows
    }
  })

  test("a run overtaken by another (a lost lease) stops writing and leaves only the finished run's file", async () => {
    const expected = await bufferedCsv(FIRST_5000)
    const reportId = await requestReport(FIRST_5000)
    let overtaking: Promise<unknown> | undefined
    interceptLedger(async (n) => {
      if (n !== 3) return
      restoreLedger()
      overtaking = generateReport(t.deps, reportId)
      await overtaking
    })
    let slow
    try {
      slow = await generateReport(t.deps, reportId)
    } finally {
      restoreLedger()
    }
    assert.equal(slow.outcome, 'not_pending')
    assert.equal(((await overtaking) as { outcome: string }).outcome, 'succeeded')
    const row = await reportRow(reportId)
    assert.deepEqual(
      [...new Set((await partsOf(reportId)).map((p) => p.generation))],
      [row.parts_generation],
    )
    await expectDownloadEquals(reportId, expected, 5_000)
  })
})
