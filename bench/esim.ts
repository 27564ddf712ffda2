// eSIM orders benchmark: POST /v1/esim/orders (each with its own reference, each allocating a profile and
// provisioning it on the simulated network before answering) against a real `svc serve` on PostgreSQL,
// with the network's latency at 0 ms and at 200 ms, 64 orders in flight. During the 200 ms run a second
// client reads a package at a steady 20 req/s, to show that slow provisioning holds no database transaction
// and blocks nothing.
// Usage: npm run bench -- esim [--duration 10] [--connections 64] [--warmup 2] [--latencies 0,200]
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { iccidWithCheckDigit } from '../src/modules/esim/iccid.js'
import {
  accessToken,
  cannon,
  createTenant,
  startServer,
  table,
  type BenchServer,
  type CannonOptions,
  type Figures,
} from './platform-harness.js'

const TARGET = { latencyMs: 200, connections: 64, ordersPerSecond: 250 }

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    warmup: { type: 'string', default: '2' },
    latencies: { type: 'string', default: '0,200' },
  },
  allowPositionals: true,
})
const duration = Number(values.duration)
const connections = Number(values.connections)
const warmup = Number(values.warmup)
const latencies = values.latencies.split(',').map(Number)

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

const server = await startServer()
const rows: Figures[] = []
try {
  const client = await createTenant(server)
  const token = await accessToken(client)
  const readerToken = await accessToken(client)
  const expected = latencies.reduce(
    (sum, l) => sum + connections * (duration + warmup) * (1000 / Math.max(l, 25)),
    0,
  )
  await loadStock(server, Math.ceil(expected * 1.2))
  const pkg = (
    await call(server, token, 'GET', '/v1/esim/packages?country=FRA&region=local&limit=1')
  ).data[0]

  for (const latency of latencies) {
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
} finally {
  await server.stop()
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
].join('\n')
process.stdout.write(`${report}\n`)

const results = join(fileURLToPath(new URL('.', import.meta.url)), 'results')
mkdirSync(results, { recursive: true })
writeFileSync(
  join(results, `esim-${Date.now()}.json`),
  JSON.stringify({ duration, connections, latencies, rows }, null, 2),
)
if (rows.some((r) => r.failures > 0)) {
  process.stderr.write('some requests failed\n')
  process.exitCode = 1
}
