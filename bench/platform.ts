// Platform benchmark: token issuance (POST /oauth/token) and an authenticated GET /v1/programs against a
// real `svc serve` on PostgreSQL: as fast as 50 connections go (autocannon), then a steady target rate to read latency.
// Usage: npm run bench -- platform [--duration 10] [--connections 50] [--rate 1000,1500] [--warmup 3] [--only token|programs]
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import {
  accessToken,
  cannon,
  createTenant,
  startServer,
  table,
  tokenRequest,
  type Figures,
} from './platform-harness.js'
import { paced as pacedRun } from './platform-paced-harness.js'

const TARGET = { rps: 1500, p99: 25 }

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    rate: { type: 'string', default: `1000,${TARGET.rps}` },
    warmup: { type: 'string', default: '3' },
    only: { type: 'string' },
  },
  allowPositionals: true,
})
const duration = Number(values.duration)
const connections = Number(values.connections)
const rates = values.rate.split(',').map(Number)
if (rates.some((r) => !(r > 0)))
  throw new Error('--rate takes requests per second, e.g. 1500 or 500,1000,1500')
const warmup = Number(values.warmup)
const only = values.only
if (only !== undefined && only !== 'token' && only !== 'programs')
  throw new Error('--only takes token or programs')

const logLevel = process.env.BENCH_LOG_LEVEL ?? 'warn'
const server = await startServer({ LOG_LEVEL: logLevel })
const rows: Figures[] = []
let saturated: Figures | undefined
const pacedRows: Figures[] = []
try {
  const client = await createTenant(server)
  const token = await accessToken(client)
  const programs = {
    url: `${server.baseUrl}/v1/programs`,
    connections,
    headers: { authorization: `Bearer ${token}` },
  }

  // Warm the JIT, the pg pool and PostgreSQL's caches before anything is measured.
  await cannon('warmup', { ...programs, duration: warmup })

  if (only !== 'programs') {
    rows.push(
      await cannon(
        `POST /oauth/token (ES256), ${connections} conn, max rate`,
        {
          url: server.baseUrl,
          connections,
          duration,
          requests: [
            {
              method: 'POST',
              path: '/oauth/token',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              setupRequest: (req) => ({ ...req, body: tokenRequest(client) }),
            },
          ],
        },
        server,
      ),
    )
  }
  if (only !== 'token') {
    // With a closed loop of 50 connections, mean latency is 50 / throughput (Little's law), so latency is
    // read in a second run that offers a steady rate over at most the same 50 connections.
    saturated = await cannon(
      `GET /v1/programs, ${connections} conn, max rate`,
      { ...programs, duration },
      server,
    )
    rows.push(saturated)
    for (const rate of rates) {
      pacedRows.push(
        await pacedRun(
          `GET /v1/programs, ≤ ${connections} conn, ${rate} req/s steady`,
          { ...programs, rate, duration },
          server,
        ),
      )
    }
    rows.push(...pacedRows)
  }
} finally {
  await server.stop()
}

const atTarget = rates.includes(TARGET.rps) ? TARGET.rps : rates[rates.length - 1]
const paced = pacedRows[rates.indexOf(atTarget)]
const verdicts =
  saturated && paced
    ? [
        `throughput: ${saturated.rps} req/s at ${connections} connections (target ≥ ${TARGET.rps}): ${saturated.rps >= TARGET.rps ? 'met' : 'NOT met'}`,
        `latency at a steady ${atTarget} req/s over ≤ ${connections} connections: p99 ${paced.p99} ms (target < ${TARGET.p99} ms): ${paced.p99 < TARGET.p99 ? 'met' : 'NOT met'}`,
      ]
    : []
const report = [
  `svc platform benchmark — ${new Date().toISOString()}`,
  `node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, PostgreSQL, LOG_LEVEL=${logLevel}, ${duration} s per run` +
    (process.env.BENCH_PRIORITY ? `, BENCH_PRIORITY=${process.env.BENCH_PRIORITY}` : ''),
  '',
  table(rows),
  '',
  ...verdicts,
].join('\n')
process.stdout.write(`${report}\n`)

const results = join(fileURLToPath(new URL('.', import.meta.url)), 'results')
mkdirSync(results, { recursive: true })
writeFileSync(
  join(results, `platform-${Date.now()}.json`),
  JSON.stringify(
    { logLevel, duration, connections, rates, priority: process.env.BENCH_PRIORITY ?? null, rows },
    null,
    2,
  ),
)
if (rows.some((r) => r.failures > 0)) {
  process.stderr.write('some requests failed: see the failures column\n')
  process.exitCode = 1
}
