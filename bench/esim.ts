// eSIM orders benchmark: POST /v1/esim/orders (each with its own reference, each allocating a profile and
// provisioning it on the simulated network before answering) against a real `svc serve` on PostgreSQL,
// with the network's latency at 0 ms and at 200 ms, 64 orders in flight. During the 200 ms run a second
// client reads a package at a steady 20 req/s, to show that slow provisioning holds no database transaction
// and blocks nothing.
// Then the usage sweep: `--esims` active eSIMs (100,000) seeded in SQL, one usage report each queued through
// POST /v1/simulate/esim/usage_reports, applied by the server's own worker (`esim.apply_usage`); timed until the
// inbox is empty, with every threshold event counted (each exactly once), then the same reports again (no event).
// Usage: npm run bench -- esim [--duration 10] [--connections 64] [--warmup 2] [--latencies 0,200]
//          [--esims 100000] [--report-mb 600] [--only orders|sweep]
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { iccidWithCheckDigit } from '../src/modules/esim/iccid.js'
import {
  accessToken,
  adminQuery,
  cannon,
  createTenant,
  startServer,
  table,
  type BenchServer,
  type CannonOptions,
  type Figures,
} from './platform-harness.js'

const TARGET = { latencyMs: 200, connections: 64, ordersPerSecond: 250 }
/** The usage sweep's target: this many active eSIMs, a report each, applied within this many seconds. */
const SWEEP_TARGET = { esims: 100_000, seconds: 60 }

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    warmup: { type: 'string', default: '2' },
    latencies: { type: 'string', default: '0,200' },
    esims: { type: 'string', default: String(SWEEP_TARGET.esims) },
    // Each eSIM is 400 MB into 1,024 when its report comes: 600 reaches the 50 % threshold, 850 also 80 % and esim.low_data.
    'report-mb': { type: 'string', default: '600' },
    only: { type: 'string' },
  },
  allowPositionals: true,
})
const duration = Number(values.duration)
const connections = Number(values.connections)
const warmup = Number(values.warmup)
const latencies = values.latencies.split(',').map(Number)
const sweepEsims = Number(values.esims)
const reportMb = Number(values['report-mb'])
/** The alert settings of the run, the usage each seeded eSIM starts at, and its package's volume. */
const SWEEP_THRESHOLDS = [50, 80, 90, 100]
const SEEDED_MB = 400
const VOLUME_MB = 1024
/** What one report of `reportMb` reaches: the thresholds, and whether it crosses 80 % (esim.low_data). */
const reached = SWEEP_THRESHOLDS.filter(
  (t) => SEEDED_MB * 100 < t * VOLUME_MB && Math.min(reportMb, VOLUME_MB) * 100 >= t * VOLUME_MB,
)
const crossesLowData =
  SEEDED_MB * 10 < VOLUME_MB * 8 && Math.min(reportMb, VOLUME_MB) * 10 >= VOLUME_MB * 8
const runOrders = values.only === undefined || values.only === 'orders'
const runSweep = values.only === undefined || values.only === 'sweep'

async function call(
  server: BenchServer,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<any> {
  const res = await fetch(server.baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const json = await res.json()
  if (res.status >= 300)
    throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`)
  return json
}

/** Enough blank profiles that no run can exhaust the stock (a refusal would count as a failure). */
async function loadStock(server: BenchServer, count: number): Promise<void> {
  const prefix = `89445${randomBytes(1)[0] % 10}`
  for (let loaded = 0; loaded < count; loaded += 10_000) {
    const profiles = Array.from({ length: Math.min(10_000, count - loaded) }, (_, i) => ({
      iccid: iccidWithCheckDigit(prefix + String(loaded + i).padStart(12, '0')),
      smdp_address: 'smdp.bench.example',
      matching_id: `BENCH-${loaded + i}`,
    }))
    await server.operator('POST', '/operator/v1/esim/inventory', { profiles })
  }
}

let sequence = 0
const runTag = randomBytes(4).toString('hex')

function orders(server: BenchServer, token: string, packageId: string): CannonOptions {
  return {
    url: server.baseUrl,
    connections,
    duration,
    requests: [
      {
        method: 'POST',
        path: '/v1/esim/orders',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        setupRequest: (req) => ({
          ...req,
          body: JSON.stringify({
            package_id: packageId,
            reference: `bench-${runTag}-${++sequence}`,
          }),
        }),
      },
    ],
  }
}

/** What the usage sweep did, for the report. */
interface SweepFigures {
  esims: number
  queueSeconds: number
  sweepSeconds: number
  reportsPerSecond: number
  thresholdEvents: number
  lowDataEvents: number
  expectedThresholdEvents: number
  expectedLowDataEvents: number
  repeatNewEvents: number
  cpuSeconds: number
  pgCpuSeconds: number | null
}

/**
 * `count` active eSIMs of the tenant on `pkg` (1 GB), each already installed and `SEEDED_MB` into its package, written in
 * SQL straight into the server's database (their orders, eSIMs and running packages): ordering them through the API
 * would take minutes and measure the orders, not the sweep.
 */
async function seedActiveEsims(server: BenchServer, orgId: string, pkg: any, count: number) {
  const db = new pg.Client({ connectionString: server.databaseUrl })
  await db.connect()
  try {
    const tag = randomBytes(2)
      .toString('hex')
      .toUpperCase()
      .replace(/[ILOU]/g, 'X')
    const id = (prefix: string) => `'${prefix}_BN${tag}' || lpad(i::text, 20, '0')`
    const series = `generate_series(1, ${count}) AS i`
    await db.query('BEGIN')
    await db.query(
      `INSERT INTO esim_orders (id, organization_id, environment, type, status, package_id, esim_id, iccid, price, currency,
         reference, metadata, created_at, updated_at, settled_at)
       SELECT ${id('esord')}, $1, 'sandbox', 'package', 'completed', $2, ${id('esim')}, '8988' || lpad(i::text, 15, '0') || $3,
         1000, 'USD', 'bench-sweep-${tag}-' || i, '{}', now(), now(), now() FROM ${series}`,
      [orgId, pkg.id, tag],
    )
    await db.query(
      `INSERT INTO esims (id, organization_id, environment, iccid, smdp_address, matching_id, order_id, status, installed_at,
         first_used_at, valid_until, created_at, updated_at)
       SELECT ${id('esim')}, $1, 'sandbox', '8988' || lpad(i::text, 15, '0') || $2, 'smdp.bench.example', 'SWEEP-' || i,
         ${id('esord')}, 'enabled', now(), now(), now() + interval '30 days', now(), now() FROM ${series}`,
      [orgId, tag],
    )
    await db.query(
      `INSERT INTO esim_bundles (order_id, esim_id, package_id, status, data_mb, data_used_mb, activated_at, expires_at,
         created_at, updated_at)
       SELECT ${id('esord')}, ${id('esim')}, $1, 'running', $2::int, $3::int, now(), now() + interval '30 days', now(), now()
       FROM ${series}`,
      [pkg.id, VOLUME_MB, SEEDED_MB],
    )
    await db.query('COMMIT')
    await db.query('ANALYZE esims; ANALYZE esim_bundles; ANALYZE esim_orders')
    const { rows } = await db.query(`SELECT id FROM esims WHERE id LIKE $1 ORDER BY id`, [
      `esim_BN${tag}%`,
    ])
    return rows.map((r) => r.id as string)
  } finally {
    await db.end()
  }
}

async function countEvents(server: BenchServer, orgId: string, type: string): Promise<number> {
  const db = new pg.Client({ connectionString: server.databaseUrl })
  await db.connect()
  try {
    const { rows } = await db.query(
      'SELECT count(*)::int AS n FROM events WHERE organization_id = $1 AND type = $2',
      [orgId, type],
    )
    return rows[0].n
  } finally {
    await db.end()
  }
}

async function inboxSize(server: BenchServer): Promise<number> {
  const [row] = (await adminQuery(
    server.databaseUrl,
    'SELECT count(*)::int AS n FROM esim_usage_reports',
  )) as unknown as { n: number }[]
  return row.n
}

/** Queues one report of `reportMb` per eSIM through the API, 10,000 a call. */
async function queueReports(server: BenchServer, token: string, ids: string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 10_000) {
    await call(server, token, 'POST', '/v1/simulate/esim/usage_reports', {
      reports: ids.slice(i, i + 10_000).map((esim_id) => ({ esim_id, data_used_mb: reportMb })),
    })
  }
}

async function waitForEmptyInbox(server: BenchServer): Promise<void> {
  const deadline = Date.now() + 600_000
  while ((await inboxSize(server)) > 0) {
    if (Date.now() > deadline)
      throw new Error('the usage sweep did not empty the inbox in 10 minutes')
    await new Promise((r) => setTimeout(r, 100))
  }
}

async function sumPgCpu(server: BenchServer): Promise<number | null> {
  const byPid = await server.postgresCpuSeconds()
  return byPid ? [...byPid.values()].reduce((a, b) => a + b, 0) : null
}

async function usageSweep(server: BenchServer, client: any, token: string, pkg: any) {
  await call(server, token, 'PUT', '/v1/esim/alert_settings', {
    usage_thresholds_pct: SWEEP_THRESHOLDS,
    validity_warning_hours: [72, 24],
  })
  const ids = await seedActiveEsims(server, client.organizationId, pkg, sweepEsims)
  await server.settle()
  const queueStart = Date.now()
  await queueReports(server, token, ids)
  const queued = Date.now()
  const cpu0 = server.cpuSeconds()
  const pg0 = await sumPgCpu(server)
  await waitForEmptyInbox(server)
  const swept = Date.now()
  const cpu1 = server.cpuSeconds()
  const pg1 = await sumPgCpu(server)
  const thresholdEvents = await countEvents(
    server,
    client.organizationId,
    'esim.usage_threshold_reached',
  )
  const lowDataEvents = await countEvents(server, client.organizationId, 'esim.low_data')
  // The same reports again: nothing more is reached, so nothing more is announced.
  await queueReports(server, token, ids)
  await waitForEmptyInbox(server)
  const again =
    (await countEvents(server, client.organizationId, 'esim.usage_threshold_reached')) +
    (await countEvents(server, client.organizationId, 'esim.low_data'))
  // Measured from the first report queued: the sweep starts on the worker's next turn, while the queueing goes on.
  const sweepSeconds = (swept - queueStart) / 1000
  return {
    esims: ids.length,
    queueSeconds: (queued - queueStart) / 1000,
    sweepSeconds,
    reportsPerSecond: Math.round(ids.length / sweepSeconds),
    thresholdEvents,
    lowDataEvents,
    expectedThresholdEvents: reached.length * ids.length,
    expectedLowDataEvents: crossesLowData ? ids.length : 0,
    repeatNewEvents: again - thresholdEvents - lowDataEvents,
    cpuSeconds: cpu1 - cpu0,
    pgCpuSeconds: pg0 === null || pg1 === null ? null : pg1 - pg0,
  } satisfies SweepFigures
}

const server = await startServer()
const rows: Figures[] = []
let sweep: SweepFigures | null = null
try {
  const client = await createTenant(server)
  const token = await accessToken(client)
  const readerToken = await accessToken(client)
  const expected = latencies.reduce(
    (sum, l) => sum + connections * (duration + warmup) * (1000 / Math.max(l, 25)),
    0,
  )
  if (runOrders) await loadStock(server, Math.ceil(expected * 1.2))
  const pkg = (
    await call(server, token, 'GET', '/v1/esim/packages?country=FRA&region=local&limit=1')
  ).data[0]

  for (const latency of runOrders ? latencies : []) {
    await call(server, token, 'POST', '/v1/simulate/esim/provisioning', { latency_ms: latency })
    await cannon('warmup', { ...orders(server, token, pkg.id), duration: warmup })
    const [orderRow, readRow] = await Promise.all([
      cannon(
        `orders, network ${latency} ms, ${connections} conn`,
        orders(server, token, pkg.id),
        server,
      ),
      // A light probe (20 req/s): the latency another caller sees while the orders wait on the network.
      cannon('  GET package meanwhile, 20 req/s', {
        url: `${server.baseUrl}/v1/esim/packages/${pkg.id}`,
        connections: 1,
        duration,
        headers: { authorization: `Bearer ${readerToken}` },
        overallRate: 20,
      } as CannonOptions),
    ])
    rows.push(orderRow, readRow)
  }
  if (runSweep) sweep = await usageSweep(server, client, await accessToken(client), pkg)
} finally {
  await server.stop()
}

function sweepReport(f: SweepFigures): string[] {
  const meets =
    f.sweepSeconds < SWEEP_TARGET.seconds &&
    f.thresholdEvents === f.expectedThresholdEvents &&
    f.lowDataEvents === f.expectedLowDataEvents &&
    f.repeatNewEvents === 0
  return [
    '',
    `usage sweep: ${f.esims.toLocaleString('en-US')} active eSIMs, one report each (${SEEDED_MB} → ${reportMb} of ${VOLUME_MB} MB: threshold${reached.length === 1 ? '' : 's'} ${reached.join(', ') || 'none'}${crossesLowData ? ' and esim.low_data' : ''})`,
    `  queued through the API in ${f.queueSeconds.toFixed(1)} s; applied by the worker ${f.sweepSeconds.toFixed(1)} s after the first report (${f.reportsPerSecond.toLocaleString('en-US')} reports/s)`,
    `  esim.usage_threshold_reached: ${f.thresholdEvents.toLocaleString('en-US')} (expected ${f.expectedThresholdEvents.toLocaleString('en-US')}); esim.low_data: ${f.lowDataEvents.toLocaleString('en-US')} (expected ${f.expectedLowDataEvents.toLocaleString('en-US')}); the same reports again: ${f.repeatNewEvents} new`,
    `  CPU while sweeping: svc ${f.cpuSeconds.toFixed(1)} s, PostgreSQL ${f.pgCpuSeconds === null ? '–' : `${f.pgCpuSeconds.toFixed(1)} s`}`,
    `${meets ? 'meets' : 'BELOW'} the target (${SWEEP_TARGET.esims.toLocaleString('en-US')} eSIMs in < ${SWEEP_TARGET.seconds} s, each threshold event once).`,
  ]
}

const slow = rows.find((r) => r.name.startsWith(`orders, network ${TARGET.latencyMs} ms`))
/** How much of the machine the benchmark obtained: on a shared host the other tenants take the rest. */
function share(r: Figures): string {
  const perOrder = (r.cpuMs ?? 0) + (r.pgCpuMs ?? 0) + (r.loadCpuMs ?? 0)
  const cores = (perOrder * r.rps) / 1000
  return (
    `${r.name.trim()}: ${perOrder.toFixed(2)} CPU ms per order (svc + PostgreSQL + autocannon), ${cores.toFixed(2)} of ${cpus().length} cores obtained; ` +
    `an unshared machine bounds it at ≈ ${Math.round((cpus().length * 1000) / Math.max(perOrder, 0.01))} orders/s of CPU`
  )
}
const meets = slow !== undefined && slow.rps >= TARGET.ordersPerSecond && slow.failures === 0
const report = [
  `svc eSIM orders benchmark — ${new Date().toISOString()}`,
  `node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, PostgreSQL, ${duration} s per run (CPU columns: the orders run; the GET run shares it)`,
  '',
  table(rows),
  '',
  ...rows.filter((r) => r.name.startsWith('orders')).map(share),
  slow
    ? `${meets ? 'meets' : 'BELOW'} the target (≥ ${TARGET.ordersPerSecond} orders/s with ${TARGET.latencyMs} ms provisioning latency and ${TARGET.connections} orders in flight): ${slow.rps} orders/s.`
    : `no ${TARGET.latencyMs} ms run (see --latencies)`,
  ...(sweep ? sweepReport(sweep) : []),
].join('\n')
process.stdout.write(`${report}\n`)

const results = join(fileURLToPath(new URL('.', import.meta.url)), 'results')
mkdirSync(results, { recursive: true })
writeFileSync(
  join(results, `esim-${Date.now()}.json`),
  JSON.stringify({ duration, connections, latencies, rows, sweep }, null, 2),
)
if (rows.some((r) => r.failures > 0)) {
  process.stderr.write('some requests failed\n')
  process.exitCode = 1
}
